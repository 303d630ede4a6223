//! Pipeline × data parallel: several pipelines side by side, each the ranks its transfers
//! connect, with the same stages. A rank's data-parallel peers are the ranks of its stage in
//! the other pipelines (and the group that holds exactly them, where the traces declare one).

use super::p2p::P2pOp;
use crate::ranks::groups::ProcessGroup;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PipelineLine {
    /// Its ranks by stage.
    pub stage_order: Vec<i64>,
    /// Per stage: the ranks of that stage in the other pipelines.
    pub dp_peers: Vec<Vec<i64>>,
    /// Per stage: the declared group whose ranks are exactly that stage's ranks in every
    /// pipeline, where there is one.
    pub dp_groups: Vec<Option<String>>,
}

/// The pipelines of the ranks in `stage_of`, connected by the transfers of `ranks` (rank, its
/// transfers), ordered by their first stage's rank; `groups` are the declared groups.
pub fn pipelines(
    ranks: &[(i64, &[P2pOp])],
    stage_of: &BTreeMap<i64, usize>,
    groups: &[ProcessGroup],
) -> Vec<PipelineLine> {
    // union-find over the ranks that take part
    let nodes: Vec<i64> = stage_of.keys().copied().collect();
    let mut parent: BTreeMap<i64, i64> = nodes.iter().map(|&r| (r, r)).collect();
    fn find(p: &mut BTreeMap<i64, i64>, x: i64) -> i64 {
        let mut r = x;
        while p[&r] != r {
            r = p[&r];
        }
        p.insert(x, r);
        r
    }
    for &(rank, ops) in ranks {
        if !stage_of.contains_key(&rank) {
            continue;
        }
        for q in ops.iter().filter_map(|o| o.peer).filter(|q| stage_of.contains_key(q)) {
            let (a, b) = (find(&mut parent, rank), find(&mut parent, q));
            if a != b {
                parent.insert(a.max(b), a.min(b));
            }
        }
    }
    let mut comps: BTreeMap<i64, Vec<i64>> = BTreeMap::new();
    for &r in &nodes {
        let root = find(&mut parent, r);
        comps.entry(root).or_default().push(r);
    }
    let lines: Vec<Vec<i64>> = comps
        .into_values()
        .map(|mut v| {
            v.sort_by_key(|r| (stage_of[r], *r));
            v
        })
        .collect();
    let stages = stage_of.values().max().map_or(0, |m| m + 1);
    let at = |line: &Vec<i64>, s: usize| -> Vec<i64> { line.iter().copied().filter(|r| stage_of[r] == s).collect() };
    let mut out: Vec<PipelineLine> = lines
        .iter()
        .enumerate()
        .map(|(k, line)| {
            let dp_peers: Vec<Vec<i64>> = (0..stages)
                .map(|s| lines.iter().enumerate().filter(|(j, _)| *j != k).flat_map(|(_, l)| at(l, s)).collect())
                .collect();
            let dp_groups = (0..stages)
                .map(|s| {
                    let all: BTreeSet<i64> = lines.iter().flat_map(|l| at(l, s)).collect();
                    (all.len() > 1)
                        .then(|| groups.iter().find(|g| g.ranks.iter().copied().collect::<BTreeSet<i64>>() == all))
                        .flatten()
                        .map(|g| g.label())
                })
                .collect();
            PipelineLine { stage_order: line.clone(), dp_peers, dp_groups }
        })
        .collect();
    out.sort_by_key(|l| l.stage_order.first().copied());
    out
}
