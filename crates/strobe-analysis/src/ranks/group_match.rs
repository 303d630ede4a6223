//! Collectives matched across ranks within their process group. Every member of a group issues
//! the group's collectives in the same order (c10d's rule), so the k-th collective a rank
//! issued on group G is the k-th of every other member on G, whatever its kernel is called
//! and whatever the rank does on other groups in between. Point-to-point ops pair two ranks,
//! not a group, and are left to the pipeline's pairs.
//!
//! Each matched instance carries its bytes, the group's size, the transfer time (latest end −
//! latest arrival) and its algorithm and bus bandwidth (`bandwidth`).

use super::bandwidth::{bandwidth, bytes_of};
use super::comm_ops::{kind_of, CommOp};
use super::digest::RankDigest;
use super::groups::ProcessGroup;
use super::step_at;
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GroupCollective {
    /// The group's name (`Process Group Name`).
    pub group: String,
    /// `recorded` where the ranks' records name the group; `inferred` where the backend
    /// records none (gloo) and the group is the largest declared one whose members all ran a
    /// collective of this kind and size ending together (`group_infer`).
    pub group_from: &'static str,
    /// The family (`all_reduce`, `all_gather`, …) and the name as recorded.
    pub kind: String,
    pub name: String,
    /// k: the k-th (from 0) collective of this group on each of its ranks.
    pub occurrence: usize,
    /// The group's ranks with a trace open, in rank order; the figures below are in this order.
    pub ranks: Vec<i64>,
    /// The group's size as recorded (all its ranks, open or not).
    pub group_size: usize,
    pub step: Option<String>,
    /// Arrival and end per rank, aligned (`align`).
    pub starts_ns: Vec<i64>,
    pub ends_ns: Vec<i64>,
    /// Latest arrival − earliest.
    pub skew_ns: i64,
    pub last_ranks: Vec<i64>,
    /// Latest end − latest arrival.
    pub transfer_ns: i64,
    pub bytes: Option<u64>,
    /// Why the bytes are unknown, where they are.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size_unknown: Option<String>,
    pub algbw_gbps: Option<f64>,
    pub busbw_gbps: Option<f64>,
    /// Per rank: the op's index in that rank's `CommRecords::ops`.
    #[serde(skip)]
    pub ops: Vec<usize>,
}

fn is_p2p(kind: &str) -> bool {
    kind == "send" || kind == "recv"
}

// k indexes each member's list of the group's ops at once
#[allow(clippy::needless_range_loop)]
/// The instances of every group's collectives over `ranks` (sorted by rank), with
/// `offsets_ns[i]` added to rank i's times; and a note per group whose members disagree (on
/// the count, the kind or the size at one k). Ordered by earliest arrival.
pub fn match_groups(
    ranks: &[RankDigest],
    offsets_ns: &[i64],
    groups: &[ProcessGroup],
) -> (Vec<GroupCollective>, Vec<String>) {
    let off = |i: usize| offsets_ns.get(i).copied().unwrap_or(0);
    // group name → per rank index → its ops on the group, in issue order
    let mut per: BTreeMap<String, BTreeMap<usize, Vec<usize>>> = BTreeMap::new();
    let mut size_of: BTreeMap<String, usize> = BTreeMap::new();
    let mut ranks_of: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    let mut notes = Vec::new();
    let mut ungrouped = 0usize;
    let inferred = super::group_infer::infer_groups(ranks, offsets_ns, groups);
    let mut inferred_names: std::collections::BTreeSet<String> = Default::default();
    for (ri, r) in ranks.iter().enumerate() {
        for (oi, op) in r.comm_records.ops.iter().enumerate() {
            if is_p2p(&kind_of(&op.name)) {
                continue;
            }
            let guess = inferred.get(&(ri, oi)).cloned();
            if op.group.is_none() {
                if let Some(g) = &guess {
                    inferred_names.insert(g.clone());
                }
            }
            let Some(g) = op.group.clone().or(guess) else {
                ungrouped += 1;
                continue;
            };
            if op.group_size.is_none() {
                if let Some(decl) = groups.iter().find(|x| x.name == g) {
                    size_of.entry(g.clone()).or_insert(decl.ranks.len());
                }
            }
            if let Some(n) = op.group_size.and_then(|n| usize::try_from(n).ok()) {
                size_of.entry(g.clone()).or_insert(n);
            }
            if !op.group_ranks.is_empty() {
                ranks_of.entry(g.clone()).or_insert_with(|| op.group_ranks.clone());
            }
            per.entry(g).or_default().entry(ri).or_default().push(oi);
        }
    }
    if ungrouped > 0 {
        notes.push(format!(
            "{ungrouped} collectives name no process group and none could be inferred (see group_from): not matched by group"
        ));
    }
    let mut out = Vec::new();
    for (g, by_rank) in per {
        let members: Vec<i64> = ranks_of
            .get(&g)
            .cloned()
            .or_else(|| groups.iter().find(|x| x.name == g).map(|x| x.ranks.clone()))
            .unwrap_or_else(|| by_rank.keys().map(|&i| ranks[i].rank).collect());
        // the open members, in rank order (`ranks` is sorted)
        let idx: Vec<usize> = (0..ranks.len()).filter(|&i| members.contains(&ranks[i].rank)).collect();
        let strays: Vec<i64> = by_rank.keys().map(|&i| ranks[i].rank).filter(|r| !members.contains(r)).collect();
        if !strays.is_empty() {
            notes.push(format!(
                "group {g}: ranks {strays:?} record collectives on it but are not among its ranks {members:?}"
            ));
        }
        let counts: Vec<usize> = idx.iter().map(|i| by_rank.get(i).map_or(0, |v| v.len())).collect();
        let n = counts.iter().copied().min().unwrap_or(0);
        if counts.iter().any(|&c| c != n) {
            let per_rank: Vec<String> =
                idx.iter().zip(&counts).map(|(&i, c)| format!("rank {} {c}", ranks[i].rank)).collect();
            notes.push(format!(
                "group {g}: the ranks recorded different numbers of collectives ({}): the first {n} matched",
                per_rank.join(", ")
            ));
        }
        let group_size = size_of.get(&g).copied().unwrap_or(members.len());
        for k in 0..n {
            let owned: Vec<(usize, CommOp)> = idx
                .iter()
                .map(|&i| {
                    let oi = by_rank[&i][k];
                    let mut op = ranks[i].comm_records.ops[oi].clone();
                    op.group_size.get_or_insert(group_size as i64);
                    (oi, op)
                })
                .collect();
            let ops: Vec<(usize, &CommOp)> = owned.iter().map(|(i, o)| (*i, o)).collect();
            let first = ops[0].1;
            let kind = kind_of(&first.name);
            if let Some((j, other)) = ops.iter().enumerate().find(|(_, o)| kind_of(&o.1.name) != kind) {
                notes.push(format!(
                    "group {g}, collective {k}: rank {} called {}, rank {} {}",
                    ranks[idx[0]].rank, first.name, ranks[idx[j]].rank, other.1.name
                ));
            }
            let starts: Vec<i64> = ops.iter().zip(&idx).map(|(o, &i)| o.1.start_ns + off(i)).collect();
            let ends: Vec<i64> = ops.iter().zip(&idx).map(|(o, &i)| o.1.end_ns + off(i)).collect();
            let first_in = starts.iter().copied().min().unwrap_or(0);
            let last_in = starts.iter().copied().max().unwrap_or(0);
            let last_end = ends.iter().copied().max().unwrap_or(0);
            let sizes: Vec<Result<u64, String>> = ops.iter().map(|o| bytes_of(o.1)).collect();
            let known: Vec<u64> = sizes.iter().filter_map(|s| s.as_ref().ok().copied()).collect();
            let (bytes, size_unknown) = match known.first() {
                Some(&b) => {
                    if known.iter().any(|&x| x != b) {
                        notes.push(format!("group {g}, collective {k}: the ranks moved different sizes {known:?}"));
                    }
                    (Some(b), None)
                }
                None => (None, sizes.iter().find_map(|s| s.as_ref().err().cloned())),
            };
            let transfer_ns = last_end - last_in;
            let bw = bytes.and_then(|b| bandwidth(&kind, group_size, b, transfer_ns));
            let step = idx
                .iter()
                .zip(&ops)
                .find_map(|(&i, o)| step_at(&ranks[i].steps, o.1.issued_ns).map(|s| s.name.clone()));
            out.push(GroupCollective {
                group: g.clone(),
                group_from: if first.group.is_none() && inferred_names.contains(&g) { "inferred" } else { "recorded" },
                kind,
                name: first.name.clone(),
                occurrence: k,
                ranks: idx.iter().map(|&i| ranks[i].rank).collect(),
                group_size,
                step,
                skew_ns: last_in - first_in,
                last_ranks: starts
                    .iter()
                    .zip(&idx)
                    .filter(|(s, _)| **s == last_in)
                    .map(|(_, &i)| ranks[i].rank)
                    .collect(),
                starts_ns: starts,
                ends_ns: ends,
                transfer_ns,
                bytes,
                size_unknown,
                algbw_gbps: bw.map(|b| b.0),
                busbw_gbps: bw.map(|b| b.1),
                ops: ops.iter().map(|o| o.0).collect(),
            });
        }
    }
    out.sort_by(|a, b| {
        let ka = (a.starts_ns.iter().min(), &a.group, a.occurrence);
        let kb = (b.starts_ns.iter().min(), &b.group, b.occurrence);
        ka.cmp(&kb)
    });
    (out, notes)
}
