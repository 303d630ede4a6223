//! The first bytes inside a gzip file, for telling what a compressed copy holds without
//! inflating it whole.

use std::io::Read;
use std::path::Path;

pub const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Up to `n` inflated bytes from the start of the gzip file at `path` (fewer when the
/// stream is shorter or breaks; none when it is not gzip).
pub fn inflated_head(path: &Path, n: usize) -> Vec<u8> {
    let Ok(f) = std::fs::File::open(path) else { return Vec::new() };
    let mut dec = flate2::read::MultiGzDecoder::new(f);
    let mut buf = vec![0u8; n];
    let mut got = 0;
    while got < n {
        match dec.read(&mut buf[got..]) {
            Ok(0) | Err(_) => break,
            Ok(k) => got += k,
        }
    }
    buf.truncate(got);
    buf
}
