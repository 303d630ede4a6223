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
}

pub fn detect(path: &Path) -> std::io::Result<Option<Format>> {
    let mut head = [0u8; 16];
    let n = std::fs::File::open(path)?.read(&mut head)?;
    let head = &head[..n];
    if head.starts_with(b"SQLite format 3\0") {
        return Ok(Some(Format::NsysSqlite));
    }
    let name = path.file_name().map(|s| s.to_string_lossy().to_ascii_lowercase()).unwrap_or_default();
    if name.ends_with(".nsys-rep") || name.ends_with(".qdrep") {
        return Ok(Some(Format::NsysRep));
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
