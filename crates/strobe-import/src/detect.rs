//! Which importer reads a file: by content first (magic bytes), then by name.

use std::io::Read;
use std::path::Path;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Chrome trace-event JSON (Kineto or any other producer), plain or gzipped.
    ChromeJson,
    /// Nsight Systems SQLite export.
    NsysSqlite,
    /// Nsight Systems report: needs `nsys export` first.
    NsysRep,
    /// `torch.cuda.memory._dump_snapshot` pickle (plain or gzipped): not a timeline; read by
    /// `memory_snapshot` for `strobe report` and the memory pane.
    MemorySnapshot,
    /// Nsight Compute CSV export (`ncu --csv --page raw|details`, `--metrics`): not a
    /// trace; read by `ncu_csv` for `strobe report` and the kernel pane.
    NcuCsv,
    /// Nsight Compute report (`.ncu-rep`, plain or gzipped): read natively by `ncu_rep`.
    NcuRep,
    /// `torch.cuda.memory_stats()` dumped as a JSON object of counters.
    MemoryStats,
}

pub fn detect(path: &Path) -> std::io::Result<Option<Format>> {
    let mut head = [0u8; 16];
    let n = std::fs::File::open(path)?.read(&mut head)?;
    let head = &head[..n];
    if head.starts_with(b"SQLite format 3\0") {
        return Ok(Some(Format::NsysSqlite));
    }
    if head.starts_with(crate::ncu_rep::MAGIC) || (head.starts_with(&[0x1f, 0x8b]) && inflated_head_is_ncu_rep(path)) {
        return Ok(Some(Format::NcuRep));
    }
    if head.len() >= 2 && head[0] == 0x80 && (2..=5).contains(&head[1]) {
        return Ok(Some(Format::MemorySnapshot));
    }
    let name = path.file_name().map(|s| s.to_string_lossy().to_ascii_lowercase()).unwrap_or_default();
    if name.ends_with(".pickle") || name.ends_with(".pickle.gz") || name.ends_with(".pkl") || name.ends_with(".pkl.gz")
    {
        return Ok(Some(Format::MemorySnapshot));
    }
    if name.ends_with(".nsys-rep") || name.ends_with(".qdrep") {
        return Ok(Some(Format::NsysRep));
    }
    if name.ends_with(".ncu-rep") || name.ends_with(".ncu-rep.gz") {
        return Ok(Some(Format::NcuRep));
    }
    if is_ncu_csv(path, &name)? {
        return Ok(Some(Format::NcuCsv));
    }
    if is_memory_stats(path, head)? {
        return Ok(Some(Format::MemoryStats));
    }
    if head.starts_with(&[0x1f, 0x8b]) || name.ends_with(".json") || name.ends_with(".json.gz") {
        return Ok(Some(Format::ChromeJson));
    }
    let first = head.iter().find(|b| !b.is_ascii_whitespace());
    if matches!(first, Some(b'{') | Some(b'[')) {
        return Ok(Some(Format::ChromeJson));
    }
    if name.ends_with(".sqlite") {
        return Ok(Some(Format::NsysSqlite));
    }
    Ok(None)
}

/// A gzip stream whose first inflated bytes are an ncu report's magic (only 4 bytes are
/// inflated; a damaged stream is simply not a report).
fn inflated_head_is_ncu_rep(path: &Path) -> bool {
    let Ok(f) = std::fs::File::open(path) else { return false };
    let mut head = [0u8; 4];
    flate2::read::GzDecoder::new(f).read_exact(&mut head).is_ok() && &head == crate::ncu_rep::MAGIC
}

/// A plain JSON object whose first 64 KiB name the caching allocator's counters and no trace
/// events.
fn is_memory_stats(path: &Path, head: &[u8]) -> std::io::Result<bool> {
    if head.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return Ok(false);
    }
    let mut buf = Vec::new();
    std::fs::File::open(path)?.take(1 << 16).read_to_end(&mut buf)?;
    let has = |needle: &[u8]| memchr::memmem::find(&buf, needle).is_some();
    Ok((has(b"\"allocated_bytes.all.current\"") || has(b"\"num_alloc_retries\"")) && !has(b"\"traceEvents\""))
}

/// An ncu CSV: the first line that is not ncu noise (`==PROF==`, `==WARNING==`, blank) is
/// its header. For `.csv`/`.log`/`.txt` names, application output may come first, and a
/// file of only `==ERROR==` lines counts too (so it gets ncu's clear error, not "unknown").
fn is_ncu_csv(path: &Path, name: &str) -> std::io::Result<bool> {
    let texty = name.ends_with(".csv") || name.ends_with(".log") || name.ends_with(".txt");
    let mut buf = Vec::new();
    std::fs::File::open(path)?.take(if texty { 1 << 20 } else { 1 << 16 }).read_to_end(&mut buf)?;
    let text = String::from_utf8_lossy(&buf);
    let mut errors = false;
    for line in text.lines() {
        let l = line.trim();
        if l.is_empty() || l.starts_with("==") {
            errors |= l.starts_with("==ERROR==");
            continue;
        }
        if crate::ncu_csv::is_header_line(l) {
            return Ok(true);
        }
        if !texty {
            return Ok(false);
        }
    }
    Ok(texty && errors)
}
