//! From a path to an open store: detect the format, reuse a valid cached store, or import
//! into a new one (a temp file renamed into the cache dir, or memory when that fails).

use crate::{chrome_json, detect, nsys_sqlite, Format, ImportError, Progress};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use strobe_store::{cache, Store, StoreBuilder};

#[derive(Clone, Default)]
pub struct LoadOptions {
    /// `--cache-dir`; falls back to `STROBE_CACHE_DIR`, then the platform cache dir.
    pub cache_dir: Option<PathBuf>,
    /// Build in memory only, writing no cache.
    pub no_cache: bool,
    pub progress: Option<Arc<Progress>>,
}

pub fn load(path: &Path, opts: &LoadOptions) -> Result<Store, ImportError> {
    let fmt = detect(path).map_err(|e| ImportError::io(path, e))?.ok_or_else(|| {
        ImportError::bad(
            path,
            "unknown format (expected a chrome/Kineto .json[.gz] trace or an Nsight Systems .sqlite export)",
        )
    })?;
    if matches!(fmt, Format::NcuCsv | Format::NcuRep) {
        return Err(ncu_not_a_trace(path));
    }
    if matches!(fmt, Format::MemorySnapshot | Format::MemoryStats) {
        let what = if fmt == Format::MemorySnapshot { "a memory snapshot" } else { "a torch.cuda.memory_stats() dump" };
        return Err(ImportError::bad(
            path,
            format!("{what}, not a timeline: use `strobe report FILE` or the memory pane"),
        ));
    }
    let progress = opts.progress.clone().unwrap_or_default();
    let key = cache::source_key(path).map_err(|e| ImportError::io(path, e))?;
    let dir = if opts.no_cache { None } else { cache::resolve_cache_dir(opts.cache_dir.as_deref()) };
    if let Some(d) = &dir {
        if let Some(s) = cache::open_cached(d, &key) {
            return Ok(s);
        }
    }
    let out = cache::output_for(dir.as_deref(), key);
    let mut b = StoreBuilder::new(out).map_err(|e| ImportError::io(path, e))?;
    let meta = match fmt {
        Format::ChromeJson => chrome_json::import(path, &mut b, &progress)?,
        Format::NsysSqlite => nsys_sqlite::import(path, &mut b, &progress)?,
        Format::NsysRep => {
            nsys_sqlite::import_as(&nsys_sqlite::export_rep(path, dir.as_deref())?, path, &mut b, &progress)?
        }
        Format::NcuCsv | Format::NcuRep => return Err(ncu_not_a_trace(path)),
        Format::MemorySnapshot | Format::MemoryStats => unreachable!("refused above"),
    };
    let built = b.finish(&meta).map_err(|e| ImportError::io(path, e))?;
    cache::open_built(built).map_err(|e| ImportError::bad(path, e.to_string()))
}

/// Nsight Compute exports hold per-kernel metrics, not a timeline.
fn ncu_not_a_trace(path: &Path) -> ImportError {
    ImportError::bad(
        path,
        "an Nsight Compute export (per-kernel metrics, not a timeline trace): use `strobe report FILE` or open it in the kernel pane",
    )
}
