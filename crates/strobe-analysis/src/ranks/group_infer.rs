//! The group of a collective whose record names none. gloo writes no `record_param_comms`
//! for collectives, only its work record (`gloo:all_reduce`, on a worker thread), so the group
//! must come from the other traces. Three rules, in turn:
//! 1. **In flight together** (per op): of the groups the rank declares (`pg_config` lists the
//!    groups a rank belongs to), a candidate is one whose open members all have an unnamed
//!    collective of the same kind and element count in flight with this one (none can finish
//!    before the last has arrived).
//! 2. **One group per worker thread** (per lane): gloo runs each group's collectives on worker
//!    threads of its own, so a lane's ops share one group: first the one most of them point at,
//!    the largest group first (a subgroup of the true group passes rule 1 too), then the one
//!    whose members end closest together.
//! 3. **Order within a group** (across ranks, by elimination): every member issues a group's
//!    collectives in the same order, so the k-th op of the group is the same kind and size on
//!    every member, and all members are in it at one instant. Where the lanes' first choices
//!    break that (a member with more, fewer or other ops on a group than its peers), lanes
//!    are moved to their other candidates while that removes disagreements. Timing alone can
//!    pick a wrong group of one size when two groups run like collectives at once (the
//!    data-parallel groups of replicated pipelines); the order does not.
//!
//! Replicas whose collectives are alike in kind, size, order and timing on every group leave
//! more than one consistent answer; the rules then keep the timing's.

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
    // per rank, per lane: candidate groups, best first
    let mut lane_choice: Vec<BTreeMap<u32, Vec<String>>> = vec![BTreeMap::new(); ranks.len()];
    for (ri, r) in ranks.iter().enumerate() {
        let mut mine: Vec<&ProcessGroup> = groups.iter().filter(|g| g.ranks.contains(&r.rank)).collect();
        mine.sort_by_key(|g| std::cmp::Reverse(g.ranks.len()));
        let mut votes: BTreeMap<u32, Vec<String>> = BTreeMap::new();
        // every group that passed for some op of the lane: (ops it passed for, size)
        let mut passed: BTreeMap<u32, BTreeMap<String, (usize, usize)>> = BTreeMap::new();
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
                passed.entry(op.lane).or_default().entry(g.name.clone()).or_insert((0, g.ranks.len())).0 += 1;
                if best.is_none_or(|b| (g.ranks.len(), -widest) > (b.0, -b.1)) {
                    best = Some((g.ranks.len(), widest, g));
                }
            }
            if let Some((_, _, g)) = best {
                votes.entry(op.lane).or_default().push(g.name.clone());
            }
        }
        // one group per lane: the one most of its collectives point at (ties: the first),
        // then the lane's other candidates, for the order rule to fall back on
        for (lane, v) in &votes {
            let mut count: BTreeMap<&String, usize> = BTreeMap::new();
            for g in v {
                *count.entry(g).or_default() += 1;
            }
            let Some(top) = v.iter().max_by_key(|g| (count[g], std::cmp::Reverse(v.iter().position(|x| x == *g))))
            else {
                continue;
            };
            let mut others: Vec<(&String, &(usize, usize))> =
                passed.get(lane).map(|m| m.iter().filter(|(g, _)| *g != top).collect()).unwrap_or_default();
            others.sort_by_key(|(g, (n, size))| (std::cmp::Reverse(*n), std::cmp::Reverse(*size), (*g).clone()));
            let mut list = vec![top.clone()];
            list.extend(others.into_iter().map(|(g, _)| g.clone()));
            lane_choice[ri].insert(*lane, list);
        }
    }
    let members: BTreeMap<String, Vec<usize>> = groups
        .iter()
        .map(|g| (g.name.clone(), g.ranks.iter().filter_map(|m| index.get(m).copied()).collect()))
        .collect();
    let picked = super::group_order::settle(&unnamed_ops(ranks, &unnamed), &lane_choice, &members);
    for (ri, per) in unnamed.iter().enumerate() {
        for &(_, _, _, _, k) in per {
            let lane = ranks[ri].comm_records.ops[k].lane;
            if let Some(g) = picked[ri].get(&lane) {
                out.insert((ri, k), g.clone());
            }
        }
    }
    out
}

/// The unnamed ops as the order rule reads them.
#[allow(clippy::type_complexity)]
fn unnamed_ops(
    ranks: &[RankDigest],
    unnamed: &[Vec<(i64, i64, String, Option<u64>, usize)>],
) -> Vec<Vec<super::group_order::LaneOp>> {
    unnamed
        .iter()
        .zip(ranks)
        .map(|(v, r)| {
            v.iter()
                .map(|(s, e, kind, n, k)| super::group_order::LaneOp {
                    start: *s,
                    end: *e,
                    kind: kind.clone(),
                    nelems: *n,
                    lane: r.comm_records.ops[*k].lane,
                })
                .collect()
        })
        .collect()
}
