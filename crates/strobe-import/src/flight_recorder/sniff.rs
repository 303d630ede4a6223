//! Is a file a flight-recorder dump, and whose? Dumps are named by the rank that wrote them
//! (`nccl_trace_rank_3`, torchtitan's `rank_3`, often with no extension), so both questions
//! are answered from the first bytes and the name.

use std::path::Path;

/// How much of the head is searched for the dump's keys.
pub const HEAD: usize = 4096;

/// A pickle or JSON object whose first bytes hold a flight-recorder dump's keys. The pickle
/// writes `version` then `pg_config` first; the JSON form sorts its keys, so `entries` (with
/// `collective_seq_id` inside) or `comm_lib_version` come before `pg_config`.
pub fn sniff(head: &[u8]) -> bool {
    let head = &head[..head.len().min(HEAD)];
    let has = |needle: &[u8]| memchr::memmem::find(head, needle).is_some();
    if crate::memory_snapshot::sniff_pickle(head) {
        return has(b"pg_config") || (has(b"version") && has(b"entries") && has(b"collective_seq_id"));
    }
    if head.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') || has(b"\"traceEvents\"") {
        return false;
    }
    has(b"\"pg_config\"") || has(b"\"collective_seq_id\"") || (has(b"\"comm_lib_version\"") && has(b"\"pg_status\""))
}

/// The rank a dump's file name ends with (`rank_12`, `nccl_trace_rank_12.pickle`,
/// `rank12.json`): the last run of digits once the extensions are off.
pub fn rank_from_name(path: &Path) -> Option<u32> {
    let mut name = path.file_name()?.to_string_lossy().to_string();
    for ext in [".gz", ".pickle", ".pkl", ".json", ".bin"] {
        if let Some(s) = name.strip_suffix(ext) {
            name = s.to_string();
        }
    }
    let end = name.rfind(|c: char| c.is_ascii_digit())? + 1;
    let start = name[..end].rfind(|c: char| !c.is_ascii_digit()).map_or(0, |i| i + 1);
    name[start..end].parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_from_names() {
        assert_eq!(rank_from_name(Path::new("/x/rank_12")), Some(12));
        assert_eq!(rank_from_name(Path::new("nccl_trace_rank_3.pickle")), Some(3));
        assert_eq!(rank_from_name(Path::new("rank7.json")), Some(7));
        assert_eq!(rank_from_name(Path::new("dump.json")), None);
        assert_eq!(rank_from_name(Path::new("rank_99999999999999")), None);
    }

    #[test]
    fn sniffs_both_forms_and_not_snapshots() {
        assert!(sniff(b"\x80\x02}q\x00(X\x07\x00\x00\x00versionq\x01X\x04\x00\x00\x002.10X\x09\x00\x00\x00pg_config"));
        assert!(sniff(b"{\"comm_lib_version\":\"\",\"entries\":[{\"collective_seq_id\":1}]}"));
        assert!(!sniff(b"\x80\x04}\x94(\x8c\x08segments\x94]"));
        assert!(!sniff(b"{\"traceEvents\":[{\"collective_seq_id\":1}]}"));
    }
}
