//! `strobe report` asked again about a trace it has reported on: the printed report is kept in
//! the store cache, so the second answer is a file read instead of the analyses (which take
//! about a second per 300 MB of trace; the store alone reopens in milliseconds).
//!
//! A memo is keyed by everything the output depends on: the source's identity (the store
//! cache's own key: path, size, mtime, first and last MiB), the strobe binary that wrote it
//! (its size and mtime: a rebuilt strobe never reads an older build's figures) and the
//! report's options. It is written to a temporary file and renamed, so a reader sees a whole
//! memo or none; anything unreadable is ignored and rewritten.

use std::hash::{Hash, Hasher};
use std::io::Write;
use std::path::{Path, PathBuf};

const HEADER: &str = "strobe report memo v1\n";

pub struct Memo {
    path: PathBuf,
}

/// What a report printed: the warning on stderr about a cut input (if any), then stdout.
pub struct Printed {
    pub warning: Option<String>,
    pub out: String,
}

/// The memo for reporting `file` with `options` (every flag that changes the output), or None
/// when there is no cache dir or the file or the binary cannot be identified.
pub fn memo_for(cache_dir: Option<&Path>, file: &Path, options: &str) -> Option<Memo> {
    let dir = strobe_store::cache::resolve_cache_dir(cache_dir)?;
    let key = strobe_store::cache::source_key(file).ok()?;
    let exe = std::fs::metadata(std::env::current_exe().ok()?).ok()?;
    let exe_mtime = exe.modified().ok()?.duration_since(std::time::UNIX_EPOCH).ok()?.as_nanos();
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (key, exe.len(), exe_mtime, options, env!("CARGO_PKG_VERSION")).hash(&mut h);
    Some(Memo { path: dir.join(format!("report-{:016x}.txt", h.finish())) })
}

impl Memo {
    pub fn read(&self) -> Option<Printed> {
        let text = std::fs::read_to_string(&self.path).ok()?;
        let rest = text.strip_prefix(HEADER)?;
        let (warning, out) = rest.split_once('\n')?;
        let warning = warning.strip_prefix("warning: ")?;
        Some(Printed { warning: (!warning.is_empty()).then(|| warning.replace("\\n", "\n")), out: out.to_string() })
    }

    /// Best effort: a cache that cannot be written (read-only, full) only loses the memo.
    pub fn write(&self, p: &Printed) {
        let Some(dir) = self.path.parent() else { return };
        let _ = std::fs::create_dir_all(dir);
        let Ok(mut tmp) = tempfile::NamedTempFile::new_in(dir) else { return };
        let warning = p.warning.as_deref().unwrap_or("").replace('\n', "\\n");
        let body = format!("{HEADER}warning: {warning}\n{}", p.out);
        if tmp.write_all(body.as_bytes()).is_ok() && tmp.flush().is_ok() {
            let _ = tmp.persist(&self.path);
        }
    }
}
