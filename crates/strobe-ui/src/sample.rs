//! The bundled sample trace: `strobe` with no file opens it, so a new user sees a real
//! timeline at once. It is written next to the cache once (same bytes → same mtime → the
//! cached store is reused on the next start).

use std::path::{Path, PathBuf};

pub const SAMPLE_NAME: &str = "gpt_train.json.gz";
pub static SAMPLE: &[u8] = include_bytes!("../../../sample-traces/gpt_train.json.gz");

pub fn materialize(cache_dir: Option<&Path>) -> anyhow::Result<PathBuf> {
    let base = cache_dir
        .map(|p| p.to_path_buf())
        .or_else(|| std::env::var_os("STROBE_CACHE_DIR").map(PathBuf::from))
        .or_else(|| dirs::cache_dir().map(|d| d.join("strobe")))
        .unwrap_or_else(std::env::temp_dir);
    let dir = base.join("sample");
    std::fs::create_dir_all(&dir)?;
    let p = dir.join(SAMPLE_NAME);
    let same = std::fs::metadata(&p).map(|m| m.len() == SAMPLE.len() as u64).unwrap_or(false);
    if !same {
        let tmp = dir.join(format!(".{SAMPLE_NAME}.{}", std::process::id()));
        std::fs::write(&tmp, SAMPLE)?;
        std::fs::rename(&tmp, &p)?;
    }
    Ok(p)
}
