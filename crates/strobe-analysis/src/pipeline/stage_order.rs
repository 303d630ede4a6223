//! The stage order, from the direction of the transfers. Between neighbouring stages
//! activations go forward and gradients come back, so every link carries both ways; the
//! forward direction is the one that moves first: a rank whose first send to a peer comes
//! before its first receive from it is that peer's upstream (microbatch 0's activation leaves
//! before its gradient can return, in every schedule). Those forward edges make a DAG; a
//! rank's stage is its depth in it (the longest path from a rank nothing feeds), so several
//! pipelines side by side (pipeline × data parallel) number their stages alike. Interleaved
//! stages close a cycle (the last rank feeds the first rank's next chunk); it is cut before
//! the rank whose first transfer is a send, the one that starts with no input.

use super::p2p::{Dir, P2pOp};
use std::collections::{BTreeMap, BTreeSet};

/// Per rank (rank, its transfers): the stage of each rank that takes part, or None when
/// there is no forward edge (no pipeline) or the edges form a cycle.
pub fn stages(ranks: &[(i64, &[P2pOp])]) -> Option<BTreeMap<i64, usize>> {
    let known: BTreeSet<i64> = ranks.iter().map(|r| r.0).collect();
    let mut edges: BTreeSet<(i64, i64)> = BTreeSet::new();
    for &(rank, ops) in ranks {
        let mut first: BTreeMap<(i64, Dir), i64> = BTreeMap::new();
        for o in ops {
            if let Some(p) = o.peer.filter(|p| *p != rank && known.contains(p)) {
                let t = first.entry((p, o.dir)).or_insert(o.start_ns);
                *t = (*t).min(o.start_ns);
            }
        }
        for (&(peer, dir), &t) in &first {
            if dir == Dir::Send && first.get(&(peer, Dir::Recv)).is_none_or(|&r| t < r) {
                edges.insert((rank, peer));
            }
        }
    }
    // a link both ends call forward is no order at all
    let both: Vec<(i64, i64)> = edges.iter().copied().filter(|&(a, b)| edges.contains(&(b, a))).collect();
    for e in both {
        edges.remove(&e);
    }
    if edges.is_empty() {
        return None;
    }
    match depths(&edges) {
        Some(d) => Some(d),
        None => {
            // interleaved stages wrap around (the last rank feeds the first rank's next chunk):
            // the pipeline starts at the rank whose first transfer is a send (it has no input)
            let heads: BTreeSet<i64> = ranks
                .iter()
                .filter(|(_, ops)| {
                    ops.iter()
                        .filter(|o| o.peer.is_some())
                        .min_by_key(|o| o.start_ns)
                        .is_some_and(|o| o.dir == Dir::Send)
                })
                .map(|r| r.0)
                .collect();
            edges.retain(|e| !heads.contains(&e.1));
            depths(&edges)
        }
    }
}

/// The depth of each node of `edges` (the longest path from a node nothing feeds), or None
/// when they form a cycle.
fn depths(edges: &BTreeSet<(i64, i64)>) -> Option<BTreeMap<i64, usize>> {
    if edges.is_empty() {
        return None;
    }
    let nodes: BTreeSet<i64> = edges.iter().flat_map(|&(a, b)| [a, b]).collect();
    let mut indeg: BTreeMap<i64, usize> = nodes.iter().map(|&n| (n, 0)).collect();
    for &(_, b) in edges {
        *indeg.get_mut(&b)? += 1;
    }
    // Kahn's order, depth = longest path
    let mut depth: BTreeMap<i64, usize> = BTreeMap::new();
    let mut ready: Vec<i64> = indeg.iter().filter(|e| *e.1 == 0).map(|e| *e.0).collect();
    for &r in &ready {
        depth.insert(r, 0);
    }
    let mut seen = 0;
    while let Some(n) = ready.pop() {
        seen += 1;
        let d = depth[&n];
        for &(_, b) in edges.range((n, i64::MIN)..=(n, i64::MAX)) {
            let e = depth.entry(b).or_insert(0);
            *e = (*e).max(d + 1);
            let k = indeg.get_mut(&b)?;
            *k -= 1;
            if *k == 0 {
                ready.push(b);
            }
        }
    }
    (seen == nodes.len()).then_some(depth)
}

/// The ranks by stage, then rank: the order to stack their timelines in.
pub fn order(stages: &BTreeMap<i64, usize>) -> Vec<i64> {
    let mut v: Vec<(usize, i64)> = stages.iter().map(|(&r, &s)| (s, r)).collect();
    v.sort_unstable();
    v.into_iter().map(|x| x.1).collect()
}
