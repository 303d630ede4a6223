//! XSpace profiles (`<host>.xplane.pb`, plain or gzipped: what `jax.profiler`, TensorFlow
//! and XProf write) → lanes, spans and flows, mapped as a Kineto trace's are.
//!
//! - `/device:GPU:N` planes: each `Stream #S(…)` line is GPU N's stream S, named as XLA
//!   names it; its events are kernels (args: `hlo_op`, `hlo_module`, `kernel_details` also
//!   as Kineto's `grid` / `block` / `registers per thread` / `shared memory` / occupancy,
//!   `correlation_id`, CUDA-graph ids), copies and memsets by name. The plane's other lines
//!   (XProf's derived `XLA Modules`, `XLA Ops`, `Steps`) are annotation rows.
//! - `/host:CPU`: a CPU thread per line; an event carrying a `correlation_id` is the launch
//!   of the device work with that id (a flow), Python frames (`$file:line fn`) are Python
//!   functions, `StepTraceAnnotation`s (a `step_num` stat) user annotations that the steps
//!   module reads as steps.
//! - Other planes (`/host:metadata`, `Task Environment`, custom devices) are listed in the
//!   load summary's notes.
//!
//! Time is the line's `timestamp_ns` plus the event's `offset_ps`, in ns, not rebased.
//! Modules: `wire` (the top level read by hand, so a cut file keeps its whole planes),
//! `lines` (a plane's lines walked by hand and cut into runs of events),
//! `messages` (the proto's messages for prost), `stats` (stats as args), `planes` (the
//! mapping).

mod lines;
mod messages;
mod planes;
mod stats;
mod wire;

use crate::{ImportError, Progress};
use std::io::Read;
use std::path::Path;
use std::sync::atomic::Ordering;
use strobe_model::{SourceFormat, TraceMeta, Truncation};
use strobe_store::StoreBuilder;

/// A gzipped profile is inflated into memory up to this size.
pub const MAX_INFLATED: u64 = 16 << 30;

/// An XSpace by its first bytes (`wire::looks_like_space`), plain or gzipped (only the first
/// bytes are inflated).
pub fn sniff(path: &Path) -> bool {
    let Ok(mut f) = std::fs::File::open(path) else { return false };
    let mut head = [0u8; 96];
    let Ok(n) = read_up_to(&mut f, &mut head) else { return false };
    if head[..n].starts_with(&[0x1f, 0x8b]) {
        let Ok(f) = std::fs::File::open(path) else { return false };
        let mut inflated = [0u8; 96];
        let Ok(n) = read_up_to(&mut flate2::read::MultiGzDecoder::new(f), &mut inflated) else { return false };
        return wire::looks_like_space(&inflated[..n]);
    }
    wire::looks_like_space(&head[..n])
}

fn read_up_to(r: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

/// Imports the profile at `path`.
pub fn import(path: &Path, b: &mut StoreBuilder, progress: &Progress) -> Result<TraceMeta, ImportError> {
    let _t = strobe_store::timing::Phase::start("xspace import (total)");
    let file = std::fs::File::open(path).map_err(|e| ImportError::io(path, e))?;
    // SAFETY: read-only map of a file we only read (the usual mmap caveat if it is
    // truncated underneath us, shared by every importer here).
    let map = unsafe { memmap2::Mmap::map(&file) }.map_err(|e| ImportError::io(path, e))?;
    progress.bytes_total.store(map.len() as u64, Ordering::Relaxed);
    let meta = import_bytes(path, &map, b)?;
    progress.bytes_done.store(map.len() as u64, Ordering::Relaxed);
    Ok(meta)
}

/// Imports the profile held in `data` (plain or gzipped); `path` names it in errors and as
/// the trace's source.
pub fn import_bytes(path: &Path, data: &[u8], b: &mut StoreBuilder) -> Result<TraceMeta, ImportError> {
    let mut meta = TraceMeta::new(SourceFormat::XSpace, path.to_string_lossy());
    let inflated;
    let bytes: &[u8] = if data.starts_with(&[0x1f, 0x8b]) {
        let (v, cut) = inflate(data);
        inflated = v;
        if let Some(why) = cut {
            meta.load.notes.push(format!("the gzip stream {why}: read what it held"));
        }
        &inflated
    } else {
        data
    };
    if bytes.is_empty() {
        return Err(ImportError::bad(path, "empty: no XSpace planes"));
    }
    let (fields, cut) = wire::fields(bytes);
    let mut planes: Vec<&[u8]> = Vec::new();
    for f in &fields {
        match f {
            wire::Field::Bytes(1, p) => planes.push(p),
            wire::Field::Bytes(2, e) => meta.load.notes.push(format!("profiler error: {}", messages::text(e))),
            wire::Field::Bytes(3, w) => meta.load.notes.push(format!("profiler warning: {}", messages::text(w))),
            wire::Field::Bytes(4, h) => {
                meta.extra.insert("hostname".into(), serde_json::Value::from(messages::text(h)));
            }
            _ => meta.load.skip("XSpace field Strobe does not read"),
        }
    }
    if let Some(c) = &cut {
        if planes.is_empty() {
            return Err(ImportError::bad(path, format!("at byte {}: {}; not a readable XSpace profile", c.at, c.what)));
        }
        meta.load.truncated = Some(Truncation {
            at_byte: c.at as u64,
            events_read: 0,
            what: format!("{}; the {} whole plane(s) before it are read", c.what, planes.len()),
        });
    }
    planes::map_planes(path, &planes, b, &mut meta)?;
    if let Some(t) = &mut meta.load.truncated {
        t.events_read = meta.load.events;
    }
    Ok(meta)
}

/// Imports the profile at `path` into memory and opens the result: the whole importer on
/// one file, with no cache and nothing written (what a fuzz target calls).
pub fn import_to_memory(path: &Path) -> Result<strobe_store::Store, ImportError> {
    let mut b =
        StoreBuilder::new(strobe_store::Output::memory_with_key([0; 4])).map_err(|e| ImportError::io(path, e))?;
    let meta = import(path, &mut b, &Progress::default())?;
    let built = b.finish(&meta).map_err(|e| ImportError::io(path, e))?;
    strobe_store::cache::open_built(built).map_err(|e| ImportError::bad(path, e.to_string()))
}

/// Inflates a gzip stream (concatenated members too) up to `MAX_INFLATED` bytes; a stream
/// that breaks off keeps what came before, with the reason.
fn inflate(gz: &[u8]) -> (Vec<u8>, Option<String>) {
    let mut out = Vec::with_capacity(gz.len().saturating_mul(4).min(1 << 30));
    let d = flate2::read::MultiGzDecoder::new(gz);
    match d.take(MAX_INFLATED + 1).read_to_end(&mut out) {
        Ok(_) if out.len() as u64 > MAX_INFLATED => {
            out.truncate(MAX_INFLATED as usize);
            (out, Some(format!("inflates past {} GiB", MAX_INFLATED >> 30)))
        }
        Ok(_) => (out, None),
        Err(e) => (out, Some(format!("breaks off ({e})"))),
    }
}
