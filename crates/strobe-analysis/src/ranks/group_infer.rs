//! The group of a collective whose record names none. gloo writes no `record_param_comms`
//! for collectives, only its work record (`gloo:all_reduce`, on a worker thread), so the group
//! must come from the other traces: every member of a group ends one of its collectives at
//! nearly the same time (none can finish before the last has sent its part), while ranks of
//! other groups running the same kind and size at the same time end apart. Of the declared
//! groups holding the rank, the collective's group is taken as the **largest** whose open
//! members all have an unnamed collective of the same kind and element count ending within
//! `END_TOLERANCE` of this one (a subgroup of the true group passes this test too; a larger
//! group than the true one does not), and of groups of one size the one whose members end
//! closest together.

use super::comm_ops::kind_of;
use super::digest::RankDigest;
use super::groups::ProcessGroup;
use std::collections::BTreeMap;

/// How close the members' ends must be: this fraction of the collective's own duration, and
/// at least `MIN_END_TOLERANCE_NS`.
const END_TOLERANCE: f64 = 0.05;
const MIN_END_TOLERANCE_NS: i64 = 50_000;
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
    // per rank: its unnamed collectives as (aligned end, kind, nelems, op index), by end
    let unnamed: Vec<Vec<(i64, String, Option<u64>, usize)>> = ranks
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let mut v: Vec<(i64, String, Option<u64>, usize)> = r
                .comm_records
                .ops
                .iter()
                .enumerate()
                .filter(|(_, o)| o.group.is_none())
                .map(|(k, o)| (o.end_ns + off(i), kind_of(&o.name), o.in_nelems, k))
                .filter(|x| x.1 != "send" && x.1 != "recv")
                .collect();
            v.sort_by_key(|x| x.0);
            v
        })
        .collect();
    for (ri, r) in ranks.iter().enumerate() {
        let mut mine: Vec<&ProcessGroup> = groups.iter().filter(|g| g.ranks.contains(&r.rank)).collect();
        mine.sort_by_key(|g| std::cmp::Reverse(g.ranks.len()));
        for (end, kind, n, k) in &unnamed[ri] {
            let op = &r.comm_records.ops[*k];
            let tol = ((op.end_ns - op.start_ns) as f64 * END_TOLERANCE) as i64;
            let tol = tol.max(MIN_END_TOLERANCE_NS);
            // the closest end of a like collective on rank q, within the tolerance
            let gap = |q: usize| -> Option<i64> {
                let v = &unnamed[q];
                let lo = v.partition_point(|x| x.0 < end - tol);
                v[lo..]
                    .iter()
                    .take_while(|x| x.0 <= end + tol)
                    .filter(|x| &x.1 == kind && x.2 == *n)
                    .map(|x| (x.0 - end).abs())
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
                out.insert((ri, *k), g.name.clone());
            }
        }
    }
    out
}
