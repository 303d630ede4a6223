//! PyTorch flight-recorder dumps, pickle or JSON, plain or gzipped (`.pickle.gz`, `.json.gz`).
//! Both forms become one JSON value first (the pickle through the safe reader, which never
//! imports or calls anything), and one reader (`fields`) turns that into an `FrDump`, noting
//! whatever it does not know. The rank is the dump's own `rank` field where it has one, else
//! the number its file name ends with.

mod fields;
mod sniff;

pub use sniff::{rank_from_name, sniff, HEAD};

use crate::ImportError;
use std::path::Path;
use strobe_model::flight_recorder::FrDump;

/// Deepest nesting read from a dump (entry → frames → frame → field is 5 levels below the
/// root): deeper values are unknown fields and read as null.
const MAX_DEPTH: usize = 12;

/// Largest inflated dump read from a gzipped file: a ring buffer of 20 000 entries with
/// stacks is tens of MB, so anything past this is not a dump.
const MAX_INFLATED: u64 = 4 << 30;

/// Reads one rank's dump; its rank from the dump's `rank` field, else from the file's name.
pub fn import(path: &Path) -> Result<FrDump, ImportError> {
    let data = std::fs::read(path).map_err(|e| ImportError::io(path, e))?;
    let mut dump = import_bytes(path, &data, rank_from_name(path).unwrap_or(0))?;
    if dump.rank_from.is_empty() {
        if rank_from_name(path).is_none() {
            return Err(ImportError::bad(
                path,
                "no rank in the file name (a flight-recorder dump is named …<rank>) and no `rank` field in the dump",
            ));
        }
        dump.rank_from = "file name".into();
    }
    Ok(dump)
}

/// Inflates `data` when it is gzip; as it is otherwise.
fn inflated<'a>(path: &Path, data: &'a [u8]) -> Result<std::borrow::Cow<'a, [u8]>, ImportError> {
    use std::io::Read;
    if !data.starts_with(&crate::gz_peek::GZIP_MAGIC) {
        return Ok(std::borrow::Cow::Borrowed(data));
    }
    let mut out = Vec::new();
    flate2::read::MultiGzDecoder::new(data)
        .take(MAX_INFLATED + 1)
        .read_to_end(&mut out)
        .map_err(|e| ImportError::bad(path, format!("flight-recorder dump: gzip: {e}")))?;
    if out.len() as u64 > MAX_INFLATED {
        return Err(ImportError::bad(path, "flight-recorder dump: inflates past 4 GiB"));
    }
    Ok(std::borrow::Cow::Owned(out))
}

/// Reads a dump held in memory, plain or gzipped (the fuzz target's entry point); `rank` is
/// used where the dump names none (then `rank_from` is left empty).
pub fn import_bytes(path: &Path, data: &[u8], rank: u32) -> Result<FrDump, ImportError> {
    let data = inflated(path, data)?;
    let data: &[u8] = &data;
    let (root, form) = if crate::memory_snapshot::sniff_pickle(data) {
        let pk = crate::pickle::parse(data, crate::pickle::Limits::default())
            .map_err(|e| ImportError::bad(path, format!("flight-recorder pickle: {e}")))?;
        let root = pk
            .to_json(pk.root(), MAX_DEPTH)
            .map_err(|e| ImportError::bad(path, format!("flight-recorder pickle: {e}")))?;
        (root, "pickle")
    } else {
        let v: serde_json::Value = serde_json::from_slice(data).map_err(|e| {
            ImportError::bad(path, format!("flight-recorder JSON: line {} column {}: {e}", e.line(), e.column()))
        })?;
        (v, "json")
    };
    let mut dump = fields::read(&root).map_err(|what| ImportError::bad(path, what))?;
    dump.path = path.display().to_string();
    if dump.rank_from.is_empty() {
        dump.rank = rank;
    } else if let Some(n) = rank_from_name(path).filter(|&n| n != dump.rank) {
        dump.notes
            .push(format!("the dump says rank {} but its file name ends with {n}: rank {} used", dump.rank, dump.rank));
    }
    dump.form = form.to_string();
    Ok(dump)
}

/// The flight-recorder dumps directly in `dir`, by the rank their names end with, then name
/// (empty when there are none); a dump whose name holds no rank comes last (its own `rank`
/// field names it when read).
pub fn dumps_in(dir: &Path) -> Result<Vec<std::path::PathBuf>, ImportError> {
    let rd = std::fs::read_dir(dir).map_err(|e| ImportError::io(dir, e))?;
    let mut found: Vec<(u32, std::path::PathBuf)> = Vec::new();
    for e in rd.flatten() {
        let p = e.path();
        if !p.is_file() {
            continue;
        }
        if let Ok(Some(crate::Format::FlightRecorder)) = crate::detect(&p) {
            found.push((rank_from_name(&p).unwrap_or(u32::MAX), p));
        }
    }
    found.sort();
    Ok(found.into_iter().map(|(_, p)| p).collect())
}
