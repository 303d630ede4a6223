//! The process groups of a set of dumps and their members. `pg_config` names each group's
//! global ranks where the backend writes it (NCCL); gloo writes an empty placeholder, so a
//! group's members then are the ranks that recorded an op on it, and the default group's are
//! every rank up to the highest one seen.

use super::GroupSummary;
use std::collections::BTreeMap;
use strobe_model::flight_recorder::FrDump;

pub fn find(dumps: &[&FrDump], notes: &mut Vec<String>) -> Vec<GroupSummary> {
    // name → (desc, ranks with entries, seqs)
    let mut seen: BTreeMap<&str, (&str, Vec<u32>, Vec<i64>)> = BTreeMap::new();
    for d in dumps {
        for e in &d.entries {
            let g = seen.entry(e.group.as_str()).or_insert((e.group_desc.as_str(), Vec::new(), Vec::new()));
            if g.0.is_empty() {
                g.0 = e.group_desc.as_str();
            }
            g.1.push(d.rank);
            if !e.is_p2p {
                g.2.push(e.collective_seq_id);
            }
        }
    }
    let mut config: BTreeMap<&str, &[u32]> = BTreeMap::new();
    for d in dumps {
        for g in d.groups.iter().filter(|g| !g.name.is_empty() && !g.ranks.is_empty()) {
            match config.get(g.name.as_str()) {
                Some(known) if *known != g.ranks.as_slice() => notes.push(format!(
                    "group {:?}: rank {} lists members {:?}, another dump {:?}; the first is used",
                    g.name, d.rank, g.ranks, known
                )),
                Some(_) => {}
                None => {
                    config.insert(g.name.as_str(), &g.ranks);
                }
            }
        }
    }
    let highest =
        dumps.iter().map(|d| d.rank).chain(config.values().flat_map(|r| r.iter().copied())).max().unwrap_or(0);
    seen.into_iter()
        .map(|(name, (desc, mut with_entries, mut seqs))| {
            with_entries.sort_unstable();
            with_entries.dedup();
            seqs.sort_unstable();
            seqs.dedup();
            let (members, from) = if let Some(r) = config.get(name) {
                (r.to_vec(), "pg_config")
            } else if name == "0" || desc == "default_pg" {
                ((0..=highest).collect(), "default group")
            } else {
                (with_entries, "entries")
            };
            GroupSummary { name: name.to_string(), desc: desc.to_string(), members, members_from: from.into(), seqs }
        })
        .collect()
}
