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

const HEADER: &str = "strobe report memo v2\n";

pub struct Memo {
    path: PathBuf,
}

/// What a report printed: the warnings on stderr about cut inputs (file, message), then stdout.
pub struct Printed {
    pub warnings: Vec<(String, String)>,
    pub out: crate::printing::Answer,
}

/// What every memo of a report's inputs is keyed by besides its options: the cache dir, each
/// input's identity and the strobe binary's, read once however many memos are asked of them.
pub struct Inputs {
    dir: PathBuf,
    keys: Vec<[u64; 4]>,
    exe: (u64, u128),
}

/// The identity of reporting `files` (one trace, or the ranks of a several-rank report, in
/// order), or None when there is no cache dir or a file or the binary cannot be identified.
pub fn inputs(cache_dir: Option<&Path>, files: &[PathBuf]) -> Option<Inputs> {
    let dir = strobe_store::cache::resolve_cache_dir(cache_dir)?;
    let keys = files.iter().map(|f| strobe_store::cache::source_key(f).ok()).collect::<Option<Vec<_>>>()?;
    let exe = std::fs::metadata(std::env::current_exe().ok()?).ok()?;
    let exe_mtime = exe.modified().ok()?.duration_since(std::time::UNIX_EPOCH).ok()?.as_nanos();
    Some(Inputs { dir, keys, exe: (exe.len(), exe_mtime) })
}

impl Inputs {
    /// The memo of reporting these inputs with `options` (every flag that changes the output).
    pub fn memo(&self, options: &str) -> Memo {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        (&self.keys, self.exe.0, self.exe.1, options, env!("CARGO_PKG_VERSION")).hash(&mut h);
        Memo { path: self.dir.join(format!("report-{:016x}.txt", h.finish())) }
    }
}

/// `inputs(cache_dir, files)`'s memo for `options`.
pub fn memo_for(cache_dir: Option<&Path>, files: &[PathBuf], options: &str) -> Option<Memo> {
    Some(inputs(cache_dir, files)?.memo(options))
}

/// A memo's warnings and where its output starts, read from its head (`r` is left there);
/// None when it is not a memo.
fn read_head(r: &mut impl std::io::BufRead) -> Option<(Vec<(String, String)>, u64)> {
    let mut at = 0u64;
    let mut line = String::new();
    let mut next_line = |line: &mut String| -> Option<()> {
        line.clear();
        let n = r.read_line(line).ok()?;
        at += n as u64;
        // a line without its end: a memo cut short, not one to trust
        let len = line.strip_suffix('\n')?.len();
        line.truncate(len);
        Some(())
    };
    next_line(&mut line)?;
    (line.as_str() == HEADER.trim_end()).then_some(())?;
    next_line(&mut line)?;
    let n: usize = line.strip_prefix("warnings: ")?.parse().ok()?;
    let mut warnings = Vec::with_capacity(n.min(1024));
    for _ in 0..n {
        next_line(&mut line)?;
        let (file, msg) = line.split_once('\t')?;
        warnings.push((unescape(file), unescape(msg)));
    }
    Some((warnings, at))
}

/// A warning's text on one line of the memo (and back).
fn escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('\n', "\\n").replace('\t', "\\t")
}

fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut it = s.chars();
    while let Some(c) = it.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match it.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some(o) => out.push(o),
            None => out.push('\\'),
        }
    }
    out
}

impl Memo {
    #[cfg(test)]
    fn read(&self) -> Option<Printed> {
        let text = std::fs::read_to_string(&self.path).ok()?;
        let (warnings, out_at) = read_head(&mut text.as_bytes())?;
        Some(Printed { warnings, out: text[out_at as usize..].to_string().into() })
    }

    /// Prints a memo there is, as the report printed it (warnings, exit status 3 for a cut
    /// input, the output); false when there is none to print. The output is copied from the
    /// file a buffer at a time, never held whole: a report of every step can be a few hundred
    /// MB.
    pub fn replay(&self) -> bool {
        let Ok(file) = std::fs::File::open(&self.path) else { return false };
        let mut memo = std::io::BufReader::new(file);
        let Some((warnings, _)) = read_head(&mut memo) else { return false };
        for (file, msg) in &warnings {
            crate::load::warn_truncated(file, msg);
        }
        // the rest of the memo, through the reader's buffer (`io::copy` uses it)
        let mut stdout = std::io::stdout().lock();
        let _ = std::io::copy(&mut memo, &mut stdout).and_then(|_| stdout.flush());
        true
    }

    /// Best effort: a cache that cannot be written (read-only, full) only loses the memo.
    pub fn write(&self, p: &Printed) {
        let Some(dir) = self.path.parent() else { return };
        let _ = std::fs::create_dir_all(dir);
        let Ok(mut tmp) = tempfile::NamedTempFile::new_in(dir) else { return };
        let mut head = format!("{HEADER}warnings: {}\n", p.warnings.len());
        for (file, msg) in &p.warnings {
            head.push_str(&format!("{}\t{}\n", escape(file), escape(msg)));
        }
        // the output written as it is, not copied after the head: it can be hundreds of MB
        let written = tmp.write_all(head.as_bytes()).and_then(|()| p.out.blocks().try_for_each(|b| tmp.write_all(b)));
        if written.is_ok() && tmp.flush().is_ok() {
            let _ = tmp.persist(&self.path);
        }
    }
}

/// The cut-input warnings of `stores` loaded from `files`, as the memo keeps them.
pub fn warnings_of<'s>(
    files: &[String],
    stores: impl IntoIterator<Item = &'s strobe_store::Store>,
) -> Vec<(String, String)> {
    files
        .iter()
        .zip(stores)
        .filter_map(|(f, s)| s.meta.load.truncated.as_ref().map(|t| (f.clone(), t.message())))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warnings_survive_the_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let m = Memo { path: dir.path().join("report-x.txt") };
        let warnings = vec![("a\tb.json".to_string(), "cut at byte 5\nsecond line \\n".to_string())];
        m.write(&Printed { warnings: warnings.clone(), out: "line 1\nline 2\n".to_string().into() });
        let p = m.read().unwrap();
        let out: Vec<u8> = p.out.blocks().flatten().copied().collect();
        assert_eq!((p.warnings, &out[..]), (warnings, &b"line 1\nline 2\n"[..]));
    }

    #[test]
    fn a_head_cut_short_or_of_another_format_is_no_memo() {
        let whole = format!("{HEADER}warnings: 1\na.json\tcut\n{{\"x\": 1}}\n");
        let (warnings, at) = read_head(&mut whole.as_bytes()).unwrap();
        assert_eq!((warnings.len(), &whole[at as usize..]), (1, "{\"x\": 1}\n"));
        let cut = &whole[..whole.find("a.json").unwrap() + 4];
        assert!(read_head(&mut cut.as_bytes()).is_none());
        assert!(read_head(&mut "strobe report memo v1\nwarnings: 0\n".as_bytes()).is_none());
        assert!(read_head(&mut format!("{HEADER}warnings: 2\na\tb\n").as_bytes()).is_none());
    }
}
