//! The store cache: one store file per source, keyed by the source's path, size, mtime and a
//! hash of its first and last MiB, so a changed source is never answered from a stale store.

use crate::output::Output;
use crate::reader::Store;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// `--cache-dir` wins, then `STROBE_CACHE_DIR`, then the platform cache dir.
pub fn resolve_cache_dir(flag: Option<&Path>) -> Option<PathBuf> {
    if let Some(p) = flag {
        return Some(p.to_path_buf());
    }
    if let Some(p) = std::env::var_os("STROBE_CACHE_DIR") {
        if !p.is_empty() {
            return Some(PathBuf::from(p));
        }
    }
    dirs::cache_dir().map(|d| d.join("strobe"))
}

/// Identity of a source file as it is now.
pub fn source_key(path: &Path) -> std::io::Result<[u64; 4]> {
    let mut f = std::fs::File::open(path)?;
    let md = f.metadata()?;
    let len = md.len();
    let mtime = md
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    const MIB: u64 = 1 << 20;
    let mut head = vec![0u8; len.min(MIB) as usize];
    f.read_exact(&mut head)?;
    let mut tail = Vec::new();
    if len > MIB {
        f.seek(SeekFrom::Start(len - len.min(MIB)))?;
        tail.resize(len.min(MIB) as usize, 0);
        f.read_exact(&mut tail)?;
    }
    let abs = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    h.update(abs.to_string_lossy().as_bytes());
    h.update(&head);
    h.update(&tail);
    let content = h.digest128();
    Ok([len, mtime, content as u64, (content >> 64) as u64])
}

fn store_path(dir: &Path, key: &[u64; 4]) -> PathBuf {
    memo_path(dir, key, "strobe")
}

/// Where something kept about the source of `key` goes in the cache dir, by its kind
/// (`ext`): the store itself is `strobe`.
pub fn memo_path(dir: &Path, key: &[u64; 4], ext: &str) -> PathBuf {
    let h = xxhash_rust::xxh3::xxh3_64(bytemuck::cast_slice(key));
    dir.join(format!("{h:016x}.{ext}"))
}

/// How the temp files of a cache dir's writes in progress are named (`BUILD_PREFIX…​.tmp`):
/// a store's build, a memo's write. One left by a process that died is swept an hour later.
pub const BUILD_PREFIX: &str = ".strobe-build-";

/// Writes `bytes` as the memo `memo_path(dir, key, ext)`, whole or not at all: a temp file
/// renamed over it.
pub fn write_memo(dir: &Path, key: &[u64; 4], ext: &str, bytes: &[u8]) -> std::io::Result<()> {
    let dest = memo_path(dir, key, ext);
    let mut tmp = tempfile::Builder::new().prefix(BUILD_PREFIX).suffix(".tmp").tempfile_in(dir)?;
    std::io::Write::write_all(&mut tmp, bytes)?;
    tmp.persist(dest).map(|_| ()).map_err(|e| e.error)
}

/// Whether a store or memo is being written into `dir` (a temp file of `BUILD_PREFIX` there).
pub fn writes_in_progress(dir: &Path) -> bool {
    std::fs::read_dir(dir)
        .map(|d| d.flatten().any(|e| e.file_name().to_string_lossy().starts_with(BUILD_PREFIX)))
        .unwrap_or(false)
}

/// A valid cached store for `key`, if there is one. Anything else there (stale, corrupt,
/// other version) is removed so it gets rebuilt.
pub fn open_cached(dir: &Path, key: &[u64; 4]) -> Option<Store> {
    let p = store_path(dir, key);
    if !p.exists() {
        return None;
    }
    match Store::open(&p) {
        Ok(s) if s.source_key() == *key => Some(s),
        _ => {
            let _ = std::fs::remove_file(&p);
            None
        }
    }
}

/// Where to build the store for `key`: a temp file in the cache dir when it is writable,
/// memory otherwise (read-only home, full disk).
pub fn output_for(dir: Option<&Path>, key: [u64; 4]) -> Output {
    if let Some(dir) = dir {
        remove_stale_builds(dir);
        if let Ok(o) = Output::file(store_path(dir, &key), key) {
            return o;
        }
    }
    Output::memory_with_key(key)
}

/// Opens what `finish` built (`Built::into_store`).
pub fn open_built(b: crate::output::Built) -> Result<Store, crate::reader::StoreError> {
    b.into_store()
}

/// Removes the temp files of builds that never finished: a process that exits while a store
/// is written behind its window (`StoreBuilder::finish_write_behind`) leaves its temp file.
/// Only files an hour old go, so a build in progress in another process is never touched
/// (a build that writes nothing for an hour could be: its cache is then not written). Once a
/// process per dir: a thousand ranks' builds list it once.
fn remove_stale_builds(dir: &Path) {
    static DONE: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());
    match DONE.lock() {
        Ok(mut done) if !done.iter().any(|d| d == dir) => done.push(dir.to_path_buf()),
        _ => return,
    }
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    for e in entries.flatten() {
        let name = e.file_name();
        let name = name.to_string_lossy();
        if !(name.starts_with(BUILD_PREFIX) && name.ends_with(".tmp")) {
            continue;
        }
        if e.metadata().and_then(|m| m.modified()).is_ok_and(|t| t < hour_ago) {
            let _ = std::fs::remove_file(e.path());
        }
    }
}
