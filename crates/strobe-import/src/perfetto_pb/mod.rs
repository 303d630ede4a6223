//! Perfetto protobuf traces (`.pftrace`, `.perfetto-trace`, `.pb`, plain or gzipped), as
//! written by Perfetto's recorders and SDK, PyTorch's `.pftrace` profiler export and
//! rocprofv3: packets are walked one by one (`packets`), their sequences' interned data,
//! clocks and tracks resolved (`decode`), and what they hold laid out as a Kineto trace
//! would be (`lanes`, `feed`) and handed to the chrome importer's assembler in memory, so
//! the same lanes, kernels, steps, flows and counters come out.

mod decode;
mod feed;
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
    let gz = head.starts_with(&GZIP_MAGIC);
    if !gz && head.first() != Some(&0x0a) {
        return false;
    }
    let Ok(f) = std::fs::File::open(path) else { return false };
    let mut buf = vec![0u8; 4096];
    let n = if gz {
        read_up_to(&mut flate2::read::MultiGzDecoder::new(f), &mut buf)
    } else {
        read_up_to(&mut std::io::BufReader::new(f), &mut buf)
    };
    looks_like_trace(&buf[..n], n < buf.len())
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
    let t = strobe_store::timing::Phase::start("perfetto: lay out as Kineto events");
    let fed = feed::feed(&decoded);
    drop(t);
    // laid out: what the summary needs is kept and the decoded events go, before the
    // assembler takes its room, so its pages are those just freed, not fresh ones (and the
    // two are never held at once). `{ decoded }` moves it into a temporary, whose other
    // fields are dropped at the end of this statement, not at the end of the function.
    let model::Decoded { skipped, notes, packets, realtime_offset, .. } = { decoded };
    if progress.cancelled() {
        return Err(ImportError::Cancelled { path: name.to_path_buf() });
    }
    let mut meta = {
        let _t = strobe_store::timing::Phase::start("perfetto: assemble");
        crate::chrome_json::direct::import_events(name, fed.events, realtime_offset, b, progress)?
    };
    // a GPU's sampled counters (SM active, DRAM throughput) are that GPU's: drawn in its group
    for (device, metric, series, ts, v) in &fed.device_points {
        b.push_device_counter(*device, strobe_model::IdKey::Str(format!("GPU {device}")), metric, series, *ts, *v);
    }
    // the summary speaks of the Perfetto file, not of the events it was laid out as
    meta.load.events = fed.count;
    meta.load.by_phase.clear();
    meta.load.truncated = None;
    for (why, n) in skipped {
        *meta.load.skipped.entry(why).or_default() += n;
    }
    meta.load.notes.extend(notes);
    if let Some(n) = gz_note {
        meta.load.notes.push(n);
    }
    if let Some(b) = broken {
        meta.load.notes.push(format!("the trace breaks at byte {}: {}; read up to there", b.offset, b.what));
    }
    meta.extra.insert("source_format".into(), serde_json::Value::from("perfetto protobuf"));
    meta.extra.insert("packets".into(), serde_json::Value::from(packets));
    progress.bytes_done.store(bytes.len() as u64, Ordering::Relaxed);
    Ok(meta)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pb_write::{field_bytes, field_varint};

    fn field(num: u64, payload: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        field_bytes(num, payload, &mut out);
        out
    }

    fn vfield(num: u64, v: u64) -> Vec<u8> {
        let mut out = Vec::new();
        field_varint(num, v, &mut out);
        out
    }

    /// A packet: timestamp, sequence 1, flags, and a track event of `kind` on `track` named
    /// by interned id `name_iid`.
    fn event(ts: u64, kind: u64, track: u64, name_iid: u64, flags: u64) -> Vec<u8> {
        let te = [vfield(9, kind), vfield(11, track), vfield(10, name_iid)].concat();
        field(1, &[vfield(8, ts), vfield(10, 1), vfield(13, flags), field(11, &te)].concat())
    }

    fn import(bytes: &[u8]) -> Result<TraceMeta, ImportError> {
        let mut b = StoreBuilder::in_memory();
        import_bytes(Path::new("bad.pftrace"), bytes, &mut b, &Progress::default())
    }

    #[test]
    fn bad_inputs_give_notes_or_errors_that_say_where() {
        let interned = field(
            1,
            &[vfield(10, 1), vfield(13, 1), field(12, &field(2, &[vfield(1, 7), field(2, b"step")].concat()))].concat(),
        );
        let good = [interned.clone(), event(100, 1, 5, 7, 2), event(200, 2, 5, 0, 2)].concat();
        let m = import(&good).unwrap();
        assert_eq!(m.load.events, 1);
        // cut inside the last packet: what came before is kept, the break located
        let cut = &good[..good.len() - 3];
        let m = import(cut).unwrap();
        let at = good.len() - event(200, 2, 5, 0, 2).len();
        assert!(m.load.notes.iter().any(|n| n.contains(&format!("breaks at byte {at}"))), "{:?}", m.load.notes);
        // a truncated varint as the only content: an error naming the file and the byte
        let e = import(&[0x0a, 0xff]).unwrap_err().to_string();
        assert!(e.contains("bad.pftrace") && e.contains("byte 0"), "{e}");
        // a packet field of the wrong wire type
        let e = import(&[0x08, 0x01]).unwrap_err().to_string();
        assert!(e.contains("wire type 0"), "{e}");
        // an end without a begin, an unknown track, a name never interned: counted, kept
        let odd = [interned, event(50, 2, 9, 0, 2), event(100, 1, 77, 8, 2), event(150, 2, 77, 0, 2)].concat();
        let m = import(&odd).unwrap();
        assert_eq!(m.load.skipped.get("slice end without a begin on its track"), Some(&1));
        assert_eq!(m.load.skipped.get("event name id not interned on its sequence (named by its id)"), Some(&1));
        assert_eq!(m.load.events, 1);
        // a packet whose bytes are not a TracePacket (a string where a message goes)
        let m = import(&[field(1, &field(11, &[0x0a, 0x05])), event(1, 3, 1, 0, 0)].concat()).unwrap();
        assert!(m.load.notes.iter().any(|n| n.contains("packet at byte 0 does not decode")), "{:?}", m.load.notes);
        // nothing at all
        assert!(import(&[]).is_err());
    }
}
