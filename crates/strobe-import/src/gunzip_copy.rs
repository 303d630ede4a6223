//! Gzipped files that are read in place (SQLite exports): inflated once into the cache dir
//! (never beside the user's file, which is only read), then opened there. The copy is
//! written under a temp name and renamed when whole, so an interrupted or failed inflate
//! never leaves a file that a later open would take as a good copy.

use crate::ImportError;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The inflated copy of the gzip file `src` in `cache_dir` (else the temp dir), named by
/// the source's identity with extension `ext`; reused when already there.
pub fn inflated_copy(src: &Path, cache_dir: Option<&Path>, ext: &str) -> Result<PathBuf, ImportError> {
    let key = strobe_store::cache::source_key(src).map_err(|e| ImportError::io(src, e))?;
    let dir = cache_dir.map(Path::to_path_buf).unwrap_or_else(|| std::env::temp_dir().join("strobe"));
    std::fs::create_dir_all(&dir).map_err(|e| ImportError::io(&dir, e))?;
    let out = strobe_store::cache::memo_path(&dir, &key, ext);
    if out.is_file() {
        return Ok(out);
    }
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    let tmp_path = dir.join(format!("{}{}-{nanos}.tmp", strobe_store::cache::BUILD_PREFIX, std::process::id()));
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp_path)
        .map_err(|e| ImportError::io(&tmp_path, e))?;
    let mut tmp = Partial { path: tmp_path, file: Some(std::io::BufWriter::new(file)) };
    let f = std::fs::File::open(src).map_err(|e| ImportError::io(src, e))?;
    let mut dec = flate2::read::MultiGzDecoder::new(std::io::BufReader::new(f));
    let mut written = 0u64;
    let mut buf = vec![0u8; 1 << 20];
    loop {
        match std::io::Read::read(&mut dec, &mut buf) {
            Ok(0) => break,
            Ok(k) => {
                tmp.write_all(&buf[..k])?;
                written += k as u64;
            }
            // the temp file is removed when `tmp` drops: no partial copy is left
            Err(e) => {
                return Err(ImportError::bad(
                    src,
                    format!(
                        "the gzip stream breaks after {written} inflated bytes: {e} (a partial copy cannot be opened)"
                    ),
                ))
            }
        }
    }
    tmp.persist(&out)?;
    Ok(out)
}

/// A copy being written: removed when dropped unless renamed into place.
struct Partial {
    path: PathBuf,
    file: Option<std::io::BufWriter<std::fs::File>>,
}

impl Partial {
    fn write_all(&mut self, b: &[u8]) -> Result<(), ImportError> {
        match self.file.as_mut() {
            Some(f) => f.write_all(b).map_err(|e| ImportError::io(&self.path, e)),
            None => Ok(()),
        }
    }

    fn persist(mut self, to: &Path) -> Result<(), ImportError> {
        if let Some(f) = self.file.take() {
            let f = f.into_inner().map_err(|e| ImportError::io(&self.path, e.into_error()))?;
            f.sync_all().map_err(|e| ImportError::io(&self.path, e))?;
        }
        std::fs::rename(&self.path, to).map_err(|e| ImportError::io(to, e))?;
        self.path = PathBuf::new();
        Ok(())
    }
}

impl Drop for Partial {
    fn drop(&mut self) {
        if !self.path.as_os_str().is_empty() {
            self.file.take();
            let _ = std::fs::remove_file(&self.path);
        }
    }
}
