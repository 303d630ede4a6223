//! Process groups as the traces declare them. PyTorch writes every group a rank belongs to in
//! `distributedInfo.pg_config` (name, description, member ranks), and each collective's record
//! repeats its group (`Process Group Name` / `Description` / `Ranks`). A group's **name** is
//! what identifies it across ranks (c10d numbers groups in creation order, the same on every
//! rank); its ranks list maps a group rank (index) to a global rank.
//!
//! A declaration that cannot be read (ranks not a list, a size that disagrees with the list)
//! is a note, never a failure; so is a group whose ranks no open trace covers.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use strobe_store::Store;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessGroup {
    /// `pg_name`: c10d's number for it (`"0"` the default group) or a user name.
    pub name: String,
    /// `pg_desc`: `default_pg`, `undefined`, or what `new_group(group_desc=…)` said.
    pub desc: Option<String>,
    /// Global ranks, in group-rank order.
    pub ranks: Vec<i64>,
}

impl ProcessGroup {
    /// The global rank of group rank `g`, when it is one of the group's.
    pub fn global(&self, g: i64) -> Option<i64> {
        usize::try_from(g).ok().and_then(|i| self.ranks.get(i)).copied()
    }

    /// The name a reader knows it by: the description where it says more than the number.
    pub fn label(&self) -> String {
        match self.desc.as_deref() {
            Some(d) if !d.is_empty() && d != "undefined" => format!("{} ({d})", self.name),
            _ => self.name.clone(),
        }
    }
}

/// A ranks list as traces write it: a JSON array of integers or its text (`"[0, 1]"`).
pub fn parse_ranks(v: &serde_json::Value) -> Option<Vec<i64>> {
    match v {
        serde_json::Value::Array(a) => a.iter().map(|x| x.as_i64()).collect(),
        serde_json::Value::String(s) => {
            let t = s.trim().strip_prefix('[')?.strip_suffix(']')?;
            if t.trim().is_empty() {
                return Some(Vec::new());
            }
            t.split(',').map(|x| x.trim().parse().ok()).collect()
        }
        _ => None,
    }
}

/// The groups `store`'s `distributedInfo.pg_config` declares, and a note for each entry that
/// could not be read.
pub fn declared_groups(store: &Store) -> (Vec<ProcessGroup>, Vec<String>) {
    let Some(di) = store.meta.distributed.as_ref() else { return (Vec::new(), Vec::new()) };
    let Some(cfg) = di.extra.get("pg_config") else { return (Vec::new(), Vec::new()) };
    let mut notes = Vec::new();
    let entries: Vec<&serde_json::Value> = match cfg {
        serde_json::Value::Array(a) => a.iter().collect(),
        // some versions write an object keyed by group name
        serde_json::Value::Object(o) => o.values().collect(),
        _ => {
            notes.push("distributedInfo.pg_config is neither a list nor an object: process groups not read".into());
            return (Vec::new(), notes);
        }
    };
    let mut out = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        let name =
            e.get("pg_name").and_then(|v| v.as_str().map(String::from).or_else(|| v.as_i64().map(|n| n.to_string())));
        let Some(name) = name else {
            notes.push(format!("pg_config entry {i} has no pg_name: skipped"));
            continue;
        };
        let Some(ranks) = e.get("ranks").and_then(parse_ranks) else {
            notes.push(format!("process group {name}: ranks not a list of integers: skipped"));
            continue;
        };
        if let Some(n) = e.get("pg_size").and_then(|v| v.as_i64()) {
            if n != ranks.len() as i64 {
                notes.push(format!("process group {name}: pg_size {n} but {} ranks listed", ranks.len()));
            }
        }
        let desc = e.get("pg_desc").and_then(|v| v.as_str()).map(String::from);
        out.push(ProcessGroup { name, desc, ranks });
    }
    (out, notes)
}

/// The job's groups: every rank's declarations merged by name (first declaration wins), with
/// a note where two ranks declare one name differently or a group names ranks not open.
pub fn job_groups(per_rank: &[Vec<ProcessGroup>], open: &[i64]) -> (Vec<ProcessGroup>, Vec<String>) {
    let mut by_name: BTreeMap<String, ProcessGroup> = BTreeMap::new();
    let mut notes = Vec::new();
    for gs in per_rank {
        for g in gs {
            match by_name.get(&g.name) {
                Some(h) if h.ranks != g.ranks => notes.push(format!(
                    "process group {} declared with ranks {:?} and {:?}: the first kept",
                    g.name, h.ranks, g.ranks
                )),
                Some(_) => {}
                None => {
                    by_name.insert(g.name.clone(), g.clone());
                }
            }
        }
    }
    let mut out: Vec<ProcessGroup> = by_name.into_values().collect();
    out.sort_by_key(|a| name_order(&a.name));
    for g in &out {
        let missing: Vec<i64> = g.ranks.iter().copied().filter(|r| !open.contains(r)).collect();
        if !missing.is_empty() && missing.len() < g.ranks.len() {
            notes.push(format!("process group {}: ranks {missing:?} have no trace open", g.label()));
        }
    }
    (out, notes)
}

/// Numbered names in numeric order, then the others by name.
fn name_order(n: &str) -> (u8, u64, String) {
    match n.parse::<u64>() {
        Ok(x) => (0, x, String::new()),
        Err(_) => (1, 0, n.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_as_text_or_list() {
        assert_eq!(parse_ranks(&serde_json::json!("[0, 1, 7]")), Some(vec![0, 1, 7]));
        assert_eq!(parse_ranks(&serde_json::json!([2, 3])), Some(vec![2, 3]));
        assert_eq!(parse_ranks(&serde_json::json!("[]")), Some(vec![]));
        assert_eq!(parse_ranks(&serde_json::json!("[0, x]")), None);
        assert_eq!(parse_ranks(&serde_json::json!(5)), None);
    }

    #[test]
    fn conflicting_and_partly_open_groups_are_notes() {
        let g = |n: &str, r: &[i64]| ProcessGroup { name: n.into(), desc: None, ranks: r.to_vec() };
        let (gs, notes) = job_groups(&[vec![g("0", &[0, 1]), g("1", &[0, 4])], vec![g("0", &[0, 2])]], &[0, 1]);
        assert_eq!(gs.len(), 2);
        assert_eq!(gs[0].ranks, vec![0, 1]);
        assert!(notes.iter().any(|n| n.contains("declared with ranks")));
        assert!(notes.iter().any(|n| n.contains("[4] have no trace open")));
        assert_eq!(gs[1].global(1), Some(4));
        assert_eq!(gs[1].global(2), None);
        assert_eq!(gs[1].global(-1), None);
    }
}
