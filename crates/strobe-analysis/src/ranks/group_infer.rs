//! The group of a collective whose record names none. gloo writes no `record_param_comms`
//! for collectives, only its work record (`gloo:all_reduce`, on a worker thread), so the group
//! must come from the other traces: every member of a group is inside one of its collectives
//! at the same time (none can finish before the last has arrived). Of the declared groups
//! holding the rank, the collective's group is taken as the **largest** whose open members
//! all have an unnamed collective of the same kind and element count in flight with this one
//! (a subgroup of the true group passes this test too; a larger group than the true one does
//! not, unless its other members happen to run a like collective then), and of groups of one
//! size the one whose members end closest together. gloo runs each group's collectives on worker threads of its own, so the
//! collectives of one lane take the group most of them point at.

use super::comm_ops::kind_of;
use super::digest::RankDigest;
use super::groups::ProcessGroup;
use std::collections::BTreeMap;

/// Beyond this many ranks the pairwise search is skipped (with NCCL the records name groups).
const MAX_RANKS: usize = 512;

/// (rank index, op index) → the inferred group's name, for each op with no group.
pub fn infer_groups(
    ranks: &[RankDigest],
    offsets_ns: &[i64],
    groups: &[ProcessGroup],
) -> BTreeMap<(usize, usize), String> {
    let mut out = BTreeMap::new();
    if ranks.len() > MAX_RANKS || groups.is_empty() {
        return out;
    }
    let off = |i: usize| offsets_ns.get(i).copied().unwrap_or(0);
    let index: BTreeMap<i64, usize> = ranks.iter().enumerate().map(|(i, r)| (r.rank, i)).collect();
    // per rank: its unnamed collectives as (aligned start, aligned end, kind, nelems, op index)
    #[allow(clippy::type_complexity)]
    let unnamed: Vec<Vec<(i64, i64, String, Option<u64>, usize)>> = ranks
        .iter()
        .enumerate()
        .map(|(i, r)| {
            r.comm_records
                .ops
                .iter()
                .enumerate()
                .filter(|(_, o)| o.group.is_none())
                .map(|(k, o)| (o.start_ns + off(i), o.end_ns + off(i), kind_of(&o.name), o.in_nelems, k))
                .filter(|x| x.2 != "send" && x.2 != "recv")
                .collect()
        })
        .collect();
    for (ri, r) in ranks.iter().enumerate() {
        let mut mine: Vec<&ProcessGroup> = groups.iter().filter(|g| g.ranks.contains(&r.rank)).collect();
        mine.sort_by_key(|g| std::cmp::Reverse(g.ranks.len()));
        let mut votes: BTreeMap<u32, Vec<String>> = BTreeMap::new();
        for &(start, end, ref kind, n, k) in &unnamed[ri] {
            let op = &r.comm_records.ops[k];
            // the closest end of a like collective on rank q in flight at the same time
            let gap = |q: usize| -> Option<i64> {
                unnamed[q]
                    .iter()
                    .filter(|x| &x.2 == kind && x.3 == n && x.0 <= end && start <= x.1)
                    .map(|x| (x.1 - end).abs())
                    .min()
            };
            // (size, −widest gap): the largest group, then the one ending closest together
            let mut best: Option<(usize, i64, &ProcessGroup)> = None;
            for g in &mine {
                let open: Vec<usize> = g.ranks.iter().filter_map(|m| index.get(m).copied()).collect();
                if open.len() < 2 {
                    continue;
                }
                let gaps: Option<Vec<i64>> = open.iter().filter(|&&q| q != ri).map(|&q| gap(q)).collect();
                let Some(widest) = gaps.and_then(|v| v.into_iter().max()) else { continue };
                if best.is_none_or(|b| (g.ranks.len(), -widest) > (b.0, -b.1)) {
                    best = Some((g.ranks.len(), widest, g));
                }
            }
            if let Some((_, _, g)) = best {
                votes.entry(op.lane).or_default().push(g.name.clone());
            }
        }
        // one group per lane: the one most of its collectives point at (ties: the first)
        for &(_, _, _, _, k) in &unnamed[ri] {
            let lane = r.comm_records.ops[k].lane;
            if let Some(v) = votes.get(&lane) {
                let mut count: BTreeMap<&String, usize> = BTreeMap::new();
                for g in v {
                    *count.entry(g).or_default() += 1;
                }
                let top = v.iter().max_by_key(|g| (count[g], std::cmp::Reverse(v.iter().position(|x| x == *g))));
                if let Some(g) = top {
                    out.insert((ri, k), g.clone());
                }
            }
        }
    }
    out
}
