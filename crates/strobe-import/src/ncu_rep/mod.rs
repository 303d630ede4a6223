//! Nsight Compute reports (`.ncu-rep`, plain or gzipped) → `strobe_model::ncu::NcuReport`,
//! read natively: the same launches, metrics and device attributes `ncu --import FILE
//! --csv --page raw` would print, without needing `ncu`. `ncu --import` stays the fallback
//! for report versions this reader does not know.
//!
//! - `framing`: the container (`NVR\0`, file header, blocks, length-prefixed items) and the
//!   byte offsets errors name.
//! - `messages`: the few report messages Strobe reads, as `prost` messages.
//! - `mapping`: those messages → launches, names, metrics and units.
//! - `rules`: the rule results (ncu's guided analysis) → `NcuRule`s.

mod framing;
mod mapping;
mod messages;
mod rules;

use crate::ImportError;
use framing::{Blocks, Items, RepError};
use std::io::Read;
use std::path::Path;
use strobe_model::ncu::NcuReport;

pub use framing::MAGIC;
pub use mapping::{drop_literal_casts, unit_of};
pub use rules::render_markup;

/// A gzipped report is inflated into memory up to this size; larger ones need gunzip first.
pub const MAX_INFLATED: u64 = 1 << 30;

/// A report by its magic, plain or as the first bytes of a gzip stream (only 4 bytes are
/// inflated; a damaged stream is simply not a report). `head` is the file's first bytes.
pub fn sniff(path: &Path, head: &[u8]) -> bool {
    if head.starts_with(MAGIC) {
        return true;
    }
    if !head.starts_with(&[0x1f, 0x8b]) {
        return false;
    }
    let Ok(f) = std::fs::File::open(path) else { return false };
    let mut inflated = [0u8; 4];
    std::io::Read::read_exact(&mut flate2::read::GzDecoder::new(f), &mut inflated).is_ok() && &inflated == MAGIC
}

/// Reads an `.ncu-rep` natively; when the reader refuses the report's version, through
/// `ncu --import` (if `ncu` is on PATH).
pub fn import(path: &Path) -> Result<NcuReport, ImportError> {
    match import_native(path) {
        Err(Refusal::Unsupported(why)) => crate::ncu_csv::import_rep(path).map_err(|e| {
            ImportError::bad(path, format!("{why}, and reading it through ncu failed too: {}", strip_path(&e, path)))
        }),
        Err(Refusal::Error(e)) => Err(e),
        Ok(r) => Ok(r),
    }
}

/// Why `import_native` did not read a report.
#[derive(Debug)]
pub enum Refusal {
    /// A version this reader does not know (`ncu --import` may read it).
    Unsupported(String),
    Error(ImportError),
}

/// Reads an `.ncu-rep` (plain or gzipped) with the native reader only.
pub fn import_native(path: &Path) -> Result<NcuReport, Refusal> {
    let file = std::fs::File::open(path).map_err(|e| Refusal::Error(ImportError::io(path, e)))?;
    // SAFETY: read-only map of a file we only read (the usual mmap caveat if it is
    // truncated underneath us, shared by every importer here).
    let map = unsafe { memmap2::Mmap::map(&file) }.map_err(|e| Refusal::Error(ImportError::io(path, e)))?;
    let inflated;
    let (bytes, note) = if map.starts_with(&[0x1f, 0x8b]) {
        inflated = inflate(&map).map_err(|e| Refusal::Error(ImportError::bad(path, e)))?;
        (&inflated[..], " of the inflated report")
    } else {
        (&map[..], "")
    };
    parse_rep(bytes).map_err(|e| match e {
        RepError::Unsupported(s) => Refusal::Unsupported(s),
        RepError::Bad(w) => Refusal::Error(ImportError::bad(path, format!("at byte {}{note}: {}", w.offset, w.what))),
    })
}

/// Inflates a gzip stream, refusing more than `MAX_INFLATED` bytes.
fn inflate(gz: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    flate2::read::MultiGzDecoder::new(gz)
        .take(MAX_INFLATED + 1)
        .read_to_end(&mut out)
        .map_err(|e| format!("gzip: {e}"))?;
    if out.len() as u64 > MAX_INFLATED {
        return Err(format!(
            "inflates to more than {} MiB; gunzip it and open the .ncu-rep itself",
            MAX_INFLATED >> 20
        ));
    }
    Ok(out)
}

fn strip_path(e: &ImportError, path: &Path) -> String {
    let s = e.to_string();
    s.strip_prefix(&format!("{}: ", path.display())).map(str::to_string).unwrap_or(s)
}

/// Parses a whole (inflated) report. Errors are sentences without the file name, with the
/// byte offset where the problem was found. The entry point for fuzzing.
pub fn parse(bytes: &[u8]) -> Result<NcuReport, String> {
    parse_rep(bytes).map_err(|e| e.to_string())
}

fn parse_rep(bytes: &[u8]) -> Result<NcuReport, RepError> {
    let start = framing::file_header(bytes)?;
    let mut strings = Vec::new();
    let mut sessions = Vec::new();
    let mut results = Vec::new();
    let mut other_results = 0u64;
    let mut blocks = Blocks::new(bytes, start);
    while let Some(b) = blocks.next_block()? {
        let h = b.header;
        strings.extend(h.string_table.into_iter().flat_map(|t| t.strings).map(messages::text));
        sessions.extend(h.session);
        let mut items = Items::new(b.payload, b.payload_offset);
        // Every item takes at least its 4-byte length, so a huge count ends at the payload's end.
        for _ in 0..h.num_sources {
            items.next_item("source")?;
        }
        for _ in 0..h.num_results {
            let (item, offset) = items.next_item("kernel result")?;
            let result = messages::decode(item, offset, "kernel result")?;
            results.push(mapping::Decoded { result, process: h.process.clone(), offset });
        }
        // counts from the file: a corrupt one may be near u64::MAX
        for n in [h.num_range_results, h.num_cmdlist_results, h.num_graph_results] {
            other_results = other_results.saturating_add(n);
        }
    }
    if results.is_empty() {
        let what = if other_results > 0 {
            format!("the report holds {other_results} range/cmdlist/graph results but no kernel results (Strobe reads kernel launches)")
        } else {
            "the report holds no kernel results".to_string()
        };
        return Err(RepError::Bad(framing::Corrupt { offset: bytes.len(), what }));
    }
    Ok(mapping::report(results, &strings, sessions)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pb_write::{field_bytes, field_varint};

    fn prefixed(b: &[u8], out: &mut Vec<u8>) {
        out.extend_from_slice(&(b.len() as u32).to_le_bytes());
        out.extend_from_slice(b);
    }

    /// A one-launch report built from the field numbers of the .proto definitions.
    fn tiny(version: u64) -> Vec<u8> {
        let mut out = MAGIC.to_vec();
        let mut fh = Vec::new();
        field_varint(1, version, &mut fh);
        prefixed(&fh, &mut out);
        // the result: name, grid, one metric (name id 0, double 1500)
        let mut dims = Vec::new();
        field_varint(1, 2, &mut dims);
        field_varint(2, 3, &mut dims);
        let mut value = vec![0x19];
        value.extend_from_slice(&1500f64.to_le_bytes());
        let mut m = Vec::new();
        field_varint(1, 0, &mut m);
        field_bytes(2, &value, &mut m);
        let mut r = Vec::new();
        field_bytes(7, b"void k<(int)4>(float *)", &mut r);
        field_bytes(10, &dims, &mut r);
        field_bytes(13, &m, &mut r);
        field_varint(23, 7, &mut r);
        field_bytes(99, b"unknown field, skipped", &mut r);
        let mut payload = Vec::new();
        prefixed(&r, &mut payload);
        let mut st = Vec::new();
        field_bytes(1, b"gpu__time_duration.sum", &mut st);
        let mut p = Vec::new();
        field_varint(1, 42, &mut p);
        field_bytes(3, b"/bin/app", &mut p);
        let mut bh = Vec::new();
        field_varint(2, 1, &mut bh);
        field_bytes(4, &st, &mut bh);
        field_varint(5, payload.len() as u64, &mut bh);
        field_bytes(6, &p, &mut bh);
        prefixed(&bh, &mut out);
        out.extend_from_slice(&payload);
        out
    }

    #[test]
    fn reads_a_built_report() {
        let r = parse(&tiny(7)).unwrap();
        assert_eq!(r.launches.len(), 1);
        let l = &r.launches[0];
        assert_eq!(l.name, "void k<4>(float *)");
        assert_eq!(l.grid, Some([2, 3, 0]));
        assert_eq!(l.stream, Some(7));
        assert_eq!((l.process_id, l.process.as_str()), (Some(42), "app"));
        assert_eq!(l.value("gpu__time_duration.sum"), Some(1500.0));
        assert_eq!(l.metrics["gpu__time_duration.sum"].unit, "ns");
    }

    #[test]
    fn refuses_unknown_versions_as_unsupported() {
        assert!(matches!(parse_rep(&tiny(99)), Err(RepError::Unsupported(_))));
    }

    #[test]
    fn every_cut_is_a_clean_error() {
        let full = tiny(7);
        for n in 0..full.len() {
            let e = parse(&full[..n]).unwrap_err();
            assert!(e.contains("byte") || e.contains("NVR"), "cut at {n}: {e}");
        }
    }
}
