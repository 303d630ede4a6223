//! PyTorch flight-recorder dumps, pickle or JSON. Both forms become one JSON value first (the
//! pickle through the safe reader, which never imports or calls anything), and one reader
//! (`fields`) turns that into an `FrDump`, noting whatever it does not know.

mod fields;
mod sniff;

pub use sniff::{rank_from_name, sniff, HEAD};

use crate::ImportError;
use std::path::Path;
use strobe_model::flight_recorder::FrDump;

/// Deepest nesting read from a dump (entry → frames → frame → field is 5 levels below the
/// root): deeper values are unknown fields and read as null.
const MAX_DEPTH: usize = 12;

/// Reads one rank's dump; `rank` from the file's name.
pub fn import(path: &Path) -> Result<FrDump, ImportError> {
    let data = std::fs::read(path).map_err(|e| ImportError::io(path, e))?;
    let rank = rank_from_name(path)
        .ok_or_else(|| ImportError::bad(path, "no rank in the file name (a flight-recorder dump is named …<rank>)"))?;
    import_bytes(path, &data, rank)
}

/// Reads a dump held in memory (the fuzz target's entry point).
pub fn import_bytes(path: &Path, data: &[u8], rank: u32) -> Result<FrDump, ImportError> {
    let (root, form) = if crate::memory_snapshot::sniff_pickle(data) {
        let pk = crate::pickle::parse(data, crate::pickle::Limits::default())
            .map_err(|e| ImportError::bad(path, format!("flight-recorder pickle: {e}")))?;
        (pk.to_json(pk.root(), MAX_DEPTH), "pickle")
    } else {
        let v: serde_json::Value = serde_json::from_slice(data).map_err(|e| {
            ImportError::bad(path, format!("flight-recorder JSON: line {} column {}: {e}", e.line(), e.column()))
        })?;
        (v, "json")
    };
    let mut dump = fields::read(&root).map_err(|what| ImportError::bad(path, what))?;
    dump.path = path.display().to_string();
    dump.rank = rank;
    dump.form = form.to_string();
    Ok(dump)
}

/// The flight-recorder dumps directly in `dir`, by rank then name (empty when there are none).
pub fn dumps_in(dir: &Path) -> Result<Vec<std::path::PathBuf>, ImportError> {
    let rd = std::fs::read_dir(dir).map_err(|e| ImportError::io(dir, e))?;
    let mut found: Vec<(u32, std::path::PathBuf)> = Vec::new();
    for e in rd.flatten() {
        let p = e.path();
        if !p.is_file() {
            continue;
        }
        if let (Ok(Some(crate::Format::FlightRecorder)), Some(rank)) = (crate::detect(&p), rank_from_name(&p)) {
            found.push((rank, p));
        }
    }
    found.sort();
    Ok(found.into_iter().map(|(_, p)| p).collect())
}
