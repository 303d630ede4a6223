//! Perfetto protobuf traces (`.pftrace`, `.perfetto-trace`, `.pb`, plain or gzipped), as
//! written by Perfetto's recorders and SDK, PyTorch's `.pftrace` profiler export and
//! rocprofv3: packets are walked one by one (`packets`), their sequences' interned data,
//! clocks and tracks resolved (`decode`), and what they hold laid out as a Kineto trace
//! would be (`lanes`, `emit`) for the chrome importer, so the same lanes, kernels, steps,
//! flows and counters come out.

mod decode;
mod emit;
mod lanes;
mod messages;
mod model;
mod packets;
mod sequence;

use crate::{ImportError, Progress};
use std::io::Read;
use std::path::Path;
use std::sync::atomic::Ordering;
use strobe_model::TraceMeta;
use strobe_store::StoreBuilder;

pub use packets::{looks_like_trace, varint};

const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Whether the file at `path`, whose first bytes are `head`, is a Perfetto trace: its bytes
/// (inflated first when gzipped) open with a trace packet. The name is not needed, so a
/// trace saved as `.bin` or `.pb` is read too.
pub fn sniff(path: &Path, head: &[u8]) -> bool {
    if head.starts_with(&GZIP_MAGIC) {
        let Ok(f) = std::fs::File::open(path) else { return false };
        let mut inner = [0u8; 32];
        let n = read_up_to(&mut flate2::read::MultiGzDecoder::new(f), &mut inner);
        return looks_like_trace(&inner[..n]);
    }
    looks_like_trace(head)
}

/// Reads until `buf` is full or the stream ends or fails; how much was read.
fn read_up_to(r: &mut impl Read, buf: &mut [u8]) -> usize {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) | Err(_) => break,
            Ok(k) => n += k,
        }
    }
    n
}

/// Imports a Perfetto trace file into `b`.
pub fn import(path: &Path, b: &mut StoreBuilder, progress: &Progress) -> Result<TraceMeta, ImportError> {
    let _t = strobe_store::timing::Phase::start("perfetto import (total)");
    let f = std::fs::File::open(path).map_err(|e| ImportError::io(path, e))?;
    let len = f.metadata().map_err(|e| ImportError::io(path, e))?.len();
    if len == 0 {
        return Err(ImportError::bad(path, "empty file: no trace packets"));
    }
    // SAFETY: the input is only read; a file truncated while mapped can fault, which every
    // mmap-based reader accepts (the cache key catches changes made before opening).
    let map = unsafe { memmap2::Mmap::map(&f) }.map_err(|e| ImportError::io(path, e))?;
    import_bytes(path, &map, b, progress)
}

/// Imports a Perfetto trace held in memory, plain or gzipped (what the fuzz target calls).
/// `name` is the source named in errors and in the metadata.
pub fn import_bytes(
    name: &Path,
    bytes: &[u8],
    b: &mut StoreBuilder,
    progress: &Progress,
) -> Result<TraceMeta, ImportError> {
    progress.bytes_total.store(bytes.len() as u64, Ordering::Relaxed);
    let inflated;
    let (trace, gz_note) = if bytes.starts_with(&GZIP_MAGIC) {
        let mut out = Vec::with_capacity(bytes.len().saturating_mul(3));
        let r = flate2::read::MultiGzDecoder::new(bytes).read_to_end(&mut out);
        let note = r
            .err()
            .map(|e| format!("the gzip stream breaks after {} inflated bytes ({e}): read up to there", out.len()));
        inflated = out;
        (&inflated[..], note)
    } else {
        (bytes, None)
    };
    if progress.cancelled() {
        return Err(ImportError::Cancelled { path: name.to_path_buf() });
    }
    let mut dec = decode::Decoder::default();
    let broken = {
        let _t = strobe_store::timing::Phase::start("perfetto: packets");
        dec.read_trace(trace, 0, 0)
    };
    progress.bytes_done.store(bytes.len() as u64 / 2, Ordering::Relaxed);
    let decoded = dec.finish();
    if decoded.packets == 0 {
        let why = broken.map(|b| format!(" ({} at byte {})", b.what, b.offset)).unwrap_or_default();
        return Err(ImportError::bad(name, format!("not a Perfetto trace: no trace packet could be read{why}")));
    }
    let emitted = {
        let _t = strobe_store::timing::Phase::start("perfetto: lay out as Kineto events");
        emit::emit(&decoded)
    };
    if progress.cancelled() {
        return Err(ImportError::Cancelled { path: name.to_path_buf() });
    }
    let mut meta = crate::chrome_json::import_bytes(name, &emitted.json, b, progress)?;
    drop(emitted.json);
    let pid = strobe_model::IdKey::Str("GPU counters".into());
    for (device, metric, series, ts, v) in &emitted.device_points {
        b.push_device_counter(*device, pid.clone(), metric, series, *ts, *v);
    }
    // the summary speaks of the Perfetto file, not the text it was laid out as
    meta.load.events = emitted.events;
    meta.load.by_phase.clear();
    meta.load.truncated = None;
    for (why, n) in decoded.skipped {
        *meta.load.skipped.entry(why).or_default() += n;
    }
    meta.load.notes.extend(decoded.notes);
    if let Some(n) = gz_note {
        meta.load.notes.push(n);
    }
    if let Some(b) = broken {
        meta.load.notes.push(format!("the trace breaks at byte {}: {}; read up to there", b.offset, b.what));
    }
    meta.extra.insert("source_format".into(), serde_json::Value::from("perfetto protobuf"));
    meta.extra.insert("packets".into(), serde_json::Value::from(decoded.packets));
    progress.bytes_done.store(bytes.len() as u64, Ordering::Relaxed);
    Ok(meta)
}
