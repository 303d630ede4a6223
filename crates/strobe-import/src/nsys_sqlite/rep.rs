//! `.nsys-rep` (and `.qdrep`) reports: exported to SQLite by `nsys` itself, into the cache
//! dir (never beside the user's file), then read like any export.

use crate::ImportError;
use std::path::{Path, PathBuf};

/// Exports `rep` with `nsys export --type sqlite` into `cache_dir` (or the temp dir) and
/// returns the SQLite file; an export already there for this report is reused. Without
/// `nsys` on PATH, an error that gives the command to run.
pub fn export_rep(rep: &Path, cache_dir: Option<&Path>) -> Result<PathBuf, ImportError> {
    let key = strobe_store::cache::source_key(rep).map_err(|e| ImportError::io(rep, e))?;
    let stem = rep.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "report".into());
    let dir = cache_dir.map(Path::to_path_buf).unwrap_or_else(|| std::env::temp_dir().join("strobe"));
    let out = dir.join(format!("{stem}.{:016x}.sqlite", key[2] ^ key[1].rotate_left(17) ^ key[0]));
    if out.is_file() {
        return Ok(out);
    }
    let Some(nsys) = find_on_path("nsys") else {
        return Err(ImportError::bad(
            rep,
            format!(
                "an Nsight Systems report needs exporting to SQLite first, and `nsys` is not on PATH; run\n  \
                 nsys export --type sqlite --output {} {}\nand open the .sqlite file",
                shell_quote(&rep.with_extension("sqlite")),
                shell_quote(rep)
            ),
        ));
    };
    std::fs::create_dir_all(&dir).map_err(|e| ImportError::io(&dir, e))?;
    // Export to a temp name, rename when complete: an interrupted export is never reused.
    let tmp = dir.join(format!(".{stem}.{}.exporting.sqlite", std::process::id()));
    let result = std::process::Command::new(&nsys)
        .args(["export", "--type", "sqlite", "--force-overwrite", "true", "--output"])
        .arg(&tmp)
        .arg(rep)
        .output()
        .map_err(|e| ImportError::bad(rep, format!("could not run {}: {e}", nsys.display())))?;
    if !result.status.success() || !tmp.is_file() {
        let _ = std::fs::remove_file(&tmp);
        let err = String::from_utf8_lossy(&result.stderr);
        return Err(ImportError::bad(
            rep,
            format!("`nsys export --type sqlite` failed ({}): {}", result.status, err.trim()),
        ));
    }
    std::fs::rename(&tmp, &out).map_err(|e| ImportError::io(&out, e))?;
    Ok(out)
}

fn find_on_path(exe: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    for d in std::env::split_paths(&path) {
        for name in [exe.to_string(), format!("{exe}.exe")] {
            let p = d.join(&name);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    None
}

fn shell_quote(p: &Path) -> String {
    let s = p.to_string_lossy();
    if s.bytes().all(|c| c.is_ascii_alphanumeric() || b"-_./+:".contains(&c)) {
        s.into_owned()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}
