//! What a file Strobe cannot read is, in words ("a gzipped SQLite database", "a zstd
//! archive"), so the refusal says so instead of blaming the file for not being a trace.

use crate::gz_peek::{inflated_head, GZIP_MAGIC};
use std::io::Read;
use std::path::Path;

const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];
const ZIP_MAGIC: [u8; 4] = *b"PK\x03\x04";
const SQLITE_MAGIC: &[u8] = b"SQLite format 3\0";

/// What the bytes `head` are, by their magic or shape; None when nothing is recognised.
fn kind_of(head: &[u8]) -> Option<&'static str> {
    if head.starts_with(SQLITE_MAGIC) {
        return Some("an SQLite database");
    }
    if head.starts_with(&ZSTD_MAGIC) {
        return Some("a zstd archive");
    }
    if head.starts_with(&ZIP_MAGIC) || head.starts_with(b"PK\x05\x06") {
        return Some("a ZIP archive");
    }
    if head.starts_with(b"BZh") {
        return Some("a bzip2 archive");
    }
    if head.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0]) {
        return Some("an xz archive");
    }
    if head.len() > 262 && &head[257..262] == b"ustar" {
        return Some("a tar archive");
    }
    if head.starts_with(&[0x80]) && head.get(1).is_some_and(|&v| (2..=5).contains(&v)) {
        return Some("a Python pickle");
    }
    if looks_like_protobuf(head) {
        return Some("a protobuf of unknown kind");
    }
    None
}

/// Whether `head` reads as protobuf fields: at least three well-formed fields in a row with
/// small field numbers, each length inside the file. Text and most binaries fail at once.
fn looks_like_protobuf(head: &[u8]) -> bool {
    let mut p = 0;
    let mut fields = 0;
    while p < head.len() && fields < 3 {
        let Some((tag, q)) = crate::perfetto_pb::varint(head, p) else { return false };
        let (field, wire) = (tag >> 3, tag & 7);
        if field == 0 || field > 10_000 {
            return false;
        }
        p = match wire {
            0 => match crate::perfetto_pb::varint(head, q) {
                Some((_, r)) => r,
                None => return false,
            },
            1 => q + 8,
            5 => q + 4,
            2 => match crate::perfetto_pb::varint(head, q) {
                // a length may reach past the bytes looked at, not past a sane size
                Some((len, r)) if len < 1 << 31 => {
                    if r as u64 + len > head.len() as u64 {
                        return fields >= 1 || q > 1;
                    }
                    r + len as usize
                }
                _ => return false,
            },
            _ => return false,
        };
        fields += 1;
    }
    fields >= 3 || (fields >= 1 && p >= head.len())
}

/// What the file at `path` is, where Strobe can tell: a compressed file says what it holds
/// ("a gzipped SQLite database"). None for a file of no known kind.
pub fn what_it_is(path: &Path) -> Option<String> {
    let mut head = vec![0u8; 512];
    let n = std::fs::File::open(path).and_then(|mut f| f.read(&mut head)).ok()?;
    head.truncate(n);
    if head.is_empty() {
        return Some("an empty file".into());
    }
    if head.starts_with(&GZIP_MAGIC) {
        let inner = inflated_head(path, 512);
        if inner.is_empty() {
            return Some("a gzip file whose contents do not inflate".into());
        }
        let first = inner.iter().find(|b| !b.is_ascii_whitespace());
        if matches!(first, Some(b'{') | Some(b'[')) {
            return Some("a gzipped JSON file".into());
        }
        return Some(match kind_of(&inner) {
            Some(k) => format!("a gzipped {}", k.trim_start_matches("an ").trim_start_matches("a ")),
            None => "a gzip file of unknown contents".into(),
        });
    }
    kind_of(&head).map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn magic_numbers_are_named() {
        assert_eq!(kind_of(b"SQLite format 3\0rest"), Some("an SQLite database"));
        assert_eq!(kind_of(&[0x28, 0xb5, 0x2f, 0xfd, 0, 0]), Some("a zstd archive"));
        assert_eq!(kind_of(b"PK\x03\x04...."), Some("a ZIP archive"));
        // field 1 varint 150, field 2 string "ab", field 3 varint 1
        assert_eq!(
            kind_of(&[0x08, 0x96, 0x01, 0x12, 0x02, b'a', b'b', 0x18, 0x01]),
            Some("a protobuf of unknown kind")
        );
        assert_eq!(kind_of(b"hello, world: plain text here"), None);
        assert_eq!(kind_of(b"{\"a\": 1}"), None);
    }
}
