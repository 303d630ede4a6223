//! An event's stats (its own, then its metadata's) as the span's args: one JSON object's
//! text, stat names resolved through the plane's stat metadata.

use super::messages::{Stat, StatValue};
use rustc_hash::FxHashMap;
use std::fmt::Write as _;

/// A plane's stat names by metadata id, and which of them Strobe reads.
pub struct StatNames {
    names: FxHashMap<i64, String>,
    pub correlation_id: Option<i64>,
    pub step_num: Option<i64>,
    pub group_id: Option<i64>,
    pub kernel_details: Option<i64>,
    pub memcpy_details: Option<i64>,
    pub hlo_op: Option<i64>,
    pub process_id: Option<i64>,
}

impl StatNames {
    pub fn new(names: FxHashMap<i64, String>) -> StatNames {
        let find = |want: &str| names.iter().find(|(_, n)| n.as_str() == want).map(|(&id, _)| id);
        StatNames {
            correlation_id: find("correlation_id"),
            step_num: find("step_num"),
            group_id: find("group_id"),
            kernel_details: find("kernel_details"),
            memcpy_details: find("memcpy_details"),
            hlo_op: find("hlo_op"),
            process_id: find("process_id"),
            names,
        }
    }

    pub fn name(&self, id: i64) -> Option<&str> {
        self.names.get(&id).map(|s| s.as_str())
    }
}

/// What the mapping needs from an event's stats besides its args.
#[derive(Default)]
pub struct Found {
    pub correlation: Option<i64>,
    pub step_num: Option<i64>,
    /// The step the profiler grouped the event into (XProf's `group_id`).
    pub group_id: Option<i64>,
    pub has_kernel_details: bool,
    pub has_memcpy_details: bool,
    pub has_hlo_op: bool,
}

/// An integer stat's value (a number, or a string of digits as some producers write).
pub fn int_value(v: &Option<StatValue>) -> Option<i64> {
    match v {
        Some(StatValue::Int64(x)) => Some(*x),
        Some(StatValue::Uint64(x)) => i64::try_from(*x).ok(),
        Some(StatValue::Str(s)) => std::str::from_utf8(s).ok()?.trim().parse().ok(),
        _ => None,
    }
}

/// Writes `stats` (then `shared`, the metadata's, where the event has none of that name) as
/// `{"name":value,…}` at the end of `out` (nothing when there are none). Stats
/// named with a leading `_` are the profiler's own bookkeeping (`_r`, `_c`, `_src`) and
/// left out; bytes values are shown by their length. `seen` is scratch space, kept by the
/// caller so that no event allocates one (an event has a handful of stats: a list beats a
/// set).
pub fn write_args(stats: &[Stat], shared: &[Stat], names: &StatNames, out: &mut String, seen: &mut Vec<i64>) -> Found {
    let start = out.len();
    seen.clear();
    let mut found = Found::default();
    for s in stats.iter().chain(shared) {
        if seen.contains(&s.metadata_id) {
            continue;
        }
        seen.push(s.metadata_id);
        let Some(name) = names.name(s.metadata_id) else { continue };
        let id = Some(s.metadata_id);
        if id == names.correlation_id {
            found.correlation = found.correlation.or(int_value(&s.value));
        } else if id == names.step_num {
            found.step_num = found.step_num.or(int_value(&s.value));
        } else if id == names.group_id {
            found.group_id = found.group_id.or(int_value(&s.value));
        } else if id == names.memcpy_details {
            found.has_memcpy_details = true;
        } else if id == names.hlo_op {
            found.has_hlo_op = true;
        }
        if name.starts_with('_') || s.value.is_none() {
            continue;
        }
        out.push(if out.len() == start { '{' } else { ',' });
        push_json_str(out, name);
        out.push(':');
        match &s.value {
            Some(StatValue::Double(x)) if x.is_finite() => {
                let _ = write!(out, "{x}");
            }
            Some(StatValue::Double(x)) => push_json_str(out, &x.to_string()),
            Some(StatValue::Uint64(x)) => {
                let _ = write!(out, "{x}");
            }
            Some(StatValue::Int64(x)) => {
                let _ = write!(out, "{x}");
            }
            Some(StatValue::Str(b)) => push_json_str(out, &String::from_utf8_lossy(b)),
            Some(StatValue::Bytes(b)) => push_json_str(out, &format!("<{} bytes>", b.len())),
            Some(StatValue::Ref(r)) => {
                let r = i64::try_from(*r).ok().and_then(|r| names.name(r)).unwrap_or("");
                push_json_str(out, r)
            }
            None => {}
        }
        if id == names.kernel_details {
            found.has_kernel_details = true;
            // written inline or, repeated across kernels, as a reference to a stat name
            match &s.value {
                Some(StatValue::Str(b)) => crate::xla_names::kernel_details_members(&String::from_utf8_lossy(b), out),
                Some(StatValue::Ref(r)) => {
                    let text = i64::try_from(*r).ok().and_then(|r| names.name(r)).unwrap_or("");
                    crate::xla_names::kernel_details_members(text, out)
                }
                _ => {}
            }
        }
    }
    if out.len() > start {
        out.push('}');
    }
    found
}

fn push_json_str(out: &mut String, s: &str) {
    out.push('"');
    // most names need no escape: copied whole (a push per character was a tenth of the import)
    if !s.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20) {
        out.push_str(s);
        out.push('"');
        return;
    }
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_become_args_with_names_resolved() {
        let names: FxHashMap<i64, String> =
            [(1, "correlation_id"), (2, "hlo_op"), (3, "_r"), (4, "kernel_details"), (5, "fusion")]
                .into_iter()
                .map(|(k, v)| (k, v.to_string()))
                .collect();
        let names = StatNames::new(names);
        let st = |m, v| Stat { metadata_id: m, value: Some(v) };
        let stats = vec![
            st(1, StatValue::Int64(18)),
            st(3, StatValue::Int64(1)),
            st(2, StatValue::Ref(5)),
            st(4, StatValue::Str(b"grid:2,1,1 block:64,1,1".to_vec())),
            st(9, StatValue::Int64(7)),
        ];
        let shared = vec![st(2, StatValue::Str(b"ignored: the event's own wins".to_vec()))];
        let mut out = String::new();
        let f = write_args(&stats, &shared, &names, &mut out, &mut Vec::new());
        assert_eq!(f.correlation, Some(18));
        assert!(f.has_hlo_op && f.has_kernel_details);
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["correlation_id"], 18);
        assert_eq!(v["hlo_op"], "fusion");
        assert_eq!(v["grid"], serde_json::json!([2, 1, 1]));
        assert!(v.get("_r").is_none());
    }
}
