//! A directory given where a trace is expected: one trace per rank, as a job writes them.

use std::path::{Path, PathBuf};

/// The `*.json`, `*.json.gz` and `*.sqlite` files directly in `dir`, sorted by name.
pub fn trace_files_in(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let rd = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut found: Vec<PathBuf> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|f| {
            let n = f.file_name().map(|n| n.to_string_lossy().to_ascii_lowercase()).unwrap_or_default();
            f.is_file() && (n.ends_with(".json") || n.ends_with(".json.gz") || n.ends_with(".sqlite"))
        })
        .collect();
    if found.is_empty() {
        return Err(format!("{}: no .json, .json.gz or .sqlite traces in this directory", dir.display()));
    }
    found.sort();
    Ok(found)
}
