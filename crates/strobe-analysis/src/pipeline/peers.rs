//! Point-to-point peers as global ranks. A c10d op records its peer as a rank of the op's
//! process group (`Concrete Inputs`), and on gloo not the group itself: with a group per
//! stage pair (`pp_1_to_2` holding ranks 1 and 2) a send from rank 1 to rank 2 records peer
//! `1`. The global rank is found by the first rule that decides:
//! - `recorded`: the op's record names its group (NCCL's `record_param_comms`): the group's
//!   rank list at the peer's index;
//! - `as_global`: the rank declares no process groups: the peer is taken as it is;
//! - `elimination`: over the groups the rank declares that hold it, the peer's index gives one
//!   other rank;
//! - `matched`: the candidates left are narrowed by the other traces (`peer_matching`): a
//!   send and its receive overlap in time, and every send is some receive's; a candidate
//!   that leaves no way to pair every transfer is dropped, and the one left decides;
//! - `unresolved`: none decides; the op keeps no peer and a note says so.

use super::p2p::{Dir, P2pOp};
use crate::ranks::groups::ProcessGroup;
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PeerRule {
    Recorded,
    AsGlobal,
    Elimination,
    Matched,
    Unresolved,
}

impl PeerRule {
    pub fn as_str(self) -> &'static str {
        match self {
            PeerRule::Recorded => "recorded",
            PeerRule::AsGlobal => "as_global",
            PeerRule::Elimination => "elimination",
            PeerRule::Matched => "matched",
            PeerRule::Unresolved => "unresolved",
        }
    }
}

/// How the peers of one rank's ops in one direction with one group peer were resolved.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PeerResolution {
    pub rank: i64,
    pub dir: Dir,
    pub group_peer: i64,
    pub peer: Option<i64>,
    /// The group the peer was read in, where one group decides.
    pub group: Option<String>,
    pub rule: PeerRule,
    pub ops: usize,
}

/// The candidates of one op: (global rank, the group that gives it).
fn candidates(rank: i64, q: i64, groups: &[ProcessGroup]) -> Vec<(i64, String)> {
    let mut out: Vec<(i64, String)> = Vec::new();
    for g in groups.iter().filter(|g| g.ranks.contains(&rank)) {
        if let Some(c) = g.global(q).filter(|&c| c != rank) {
            out.push((c, g.name.clone()));
        }
    }
    out
}

/// Resolves the peer of every op of `ops` (per rank, in the order of `ranks`: the rank and
/// the groups its trace declares). Returns each rank's resolutions, summed, and notes.
pub fn resolve(ranks: &[(i64, &[ProcessGroup])], ops: &mut [Vec<P2pOp>]) -> (Vec<PeerResolution>, Vec<String>) {
    let mut notes = Vec::new();
    // pending: (rank index, op index) → candidate global ranks
    let mut pending: Vec<(usize, usize, Vec<i64>)> = Vec::new();
    for (ri, &(rank, groups)) in ranks.iter().enumerate() {
        let Some(list) = ops.get_mut(ri) else { continue };
        for (oi, o) in list.iter_mut().enumerate() {
            let Some(q) = o.group_peer else { continue };
            o.peer = None;
            if !o.group_ranks.is_empty() {
                let g = ProcessGroup {
                    name: o.group.clone().unwrap_or_default(),
                    desc: None,
                    ranks: o.group_ranks.clone(),
                };
                o.peer = g.global(q);
                o.peer_rule = Some(if o.peer.is_some() { PeerRule::Recorded } else { PeerRule::Unresolved });
                continue;
            }
            if groups.is_empty() {
                o.peer = Some(q);
                o.peer_rule = Some(PeerRule::AsGlobal);
                continue;
            }
            let c = candidates(rank, q, groups);
            let mut distinct: Vec<i64> = c.iter().map(|x| x.0).collect();
            distinct.sort_unstable();
            distinct.dedup();
            match distinct.as_slice() {
                [] => {
                    o.peer_rule = Some(PeerRule::Unresolved);
                }
                [one] => {
                    o.peer = Some(*one);
                    o.peer_rule = Some(PeerRule::Elimination);
                    // the smallest group that gives it: the one the op most likely ran on
                    o.group = c
                        .iter()
                        .filter(|x| x.0 == *one)
                        .filter_map(|x| groups.iter().find(|g| g.name == x.1))
                        .min_by_key(|g| g.ranks.len())
                        .map(|g| g.name.clone());
                }
                _ => pending.push((ri, oi, distinct)),
            }
        }
    }
    if !pending.is_empty() {
        let decided = super::peer_matching::decide(ranks, ops, &pending);
        for ((ri, oi), peer) in decided {
            let o = &mut ops[ri][oi];
            o.peer = peer;
            o.peer_rule = Some(if peer.is_some() { PeerRule::Matched } else { PeerRule::Unresolved });
        }
    }
    let mut unresolved: BTreeMap<i64, usize> = BTreeMap::new();
    // the summary per rank, direction, group peer, peer and rule
    type Row = (i64, Dir, i64, Option<i64>, Option<String>, PeerRule);
    let mut sum: BTreeMap<Row, usize> = BTreeMap::new();
    for (ri, &(rank, _)) in ranks.iter().enumerate() {
        for o in ops.get(ri).map(|v| v.as_slice()).unwrap_or(&[]) {
            let (Some(q), Some(rule)) = (o.group_peer, o.peer_rule) else { continue };
            if rule == PeerRule::Unresolved {
                *unresolved.entry(rank).or_default() += 1;
            }
            let group = if rule == PeerRule::Matched { None } else { o.group.clone() };
            *sum.entry((rank, o.dir, q, o.peer, group, rule)).or_default() += 1;
        }
    }
    for (rank, n) in unresolved {
        notes.push(format!(
            "rank {rank}: {n} point-to-point ops whose group rank names no single global rank (no group, out of range, or several candidates that the other traces do not tell apart)"
        ));
    }
    let rows = sum
        .into_iter()
        .map(|((rank, dir, group_peer, peer, group, rule), n)| PeerResolution {
            rank,
            dir,
            group_peer,
            peer,
            group,
            rule,
            ops: n,
        })
        .collect();
    (rows, notes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(dir: Dir, q: i64, t: (i64, i64), bytes: u64) -> P2pOp {
        P2pOp {
            dir,
            peer: Some(q),
            group_peer: Some(q),
            peer_rule: None,
            group: None,
            group_ranks: vec![],
            span: 0,
            lane: 0,
            start_ns: t.0,
            end_ns: t.1,
            flight_start_ns: t.0,
            flight_end_ns: t.1,
            kernel: None,
            bytes: Some(bytes),
        }
    }

    fn g(name: &str, r: &[i64]) -> ProcessGroup {
        ProcessGroup { name: name.into(), desc: None, ranks: r.to_vec() }
    }

    #[test]
    fn per_pair_groups() {
        // stages 0 → 1 → 2 on ranks 2, 0, 1, a group per pair: rank 0 sends to rank 1
        // on [0, 1] (peer 1) and receives from rank 2 on [0, 2] (peer 1 too)
        let world = g("0", &[0, 1, 2]);
        let a = g("1", &[0, 2]);
        let b = g("2", &[0, 1]);
        let r0 = vec![world.clone(), a.clone(), b.clone()];
        let r1 = vec![world.clone(), b.clone()];
        let r2 = vec![world.clone(), a.clone()];
        let mut ops = vec![
            vec![op(Dir::Recv, 1, (10, 20), 8), op(Dir::Send, 1, (30, 40), 8)],
            vec![op(Dir::Recv, 0, (30, 40), 8)],
            vec![op(Dir::Send, 0, (10, 20), 8)],
        ];
        let ranks: Vec<(i64, &[ProcessGroup])> = vec![(0, &r0), (1, &r1), (2, &r2)];
        let (rows, notes) = resolve(&ranks, &mut ops);
        assert!(notes.is_empty(), "{notes:?}");
        // rank 0's peer 1 is rank 1 or 2: the matching decides, by the flights
        assert_eq!(ops[0][0].peer, Some(2));
        assert_eq!(ops[0][0].peer_rule, Some(PeerRule::Matched));
        assert_eq!(ops[0][1].peer, Some(1));
        // rank 1's peer 0 on [0, 1] or the world: rank 0 either way
        assert_eq!(ops[1][0].peer, Some(0));
        assert_eq!(ops[1][0].peer_rule, Some(PeerRule::Elimination));
        assert_eq!(ops[2][0].peer, Some(0));
        assert_eq!(rows.len(), 4);
    }

    #[test]
    fn out_of_range_and_no_groups() {
        let r0 = vec![g("0", &[0, 1])];
        let mut ops = vec![vec![op(Dir::Send, 5, (0, 1), 4)], vec![op(Dir::Recv, 0, (0, 1), 4)]];
        let ranks: Vec<(i64, &[ProcessGroup])> = vec![(0, &r0), (1, &[])];
        let (_, notes) = resolve(&ranks, &mut ops);
        assert_eq!(ops[0][0].peer, None);
        assert_eq!(ops[0][0].peer_rule, Some(PeerRule::Unresolved));
        assert_eq!(ops[1][0].peer_rule, Some(PeerRule::AsGlobal));
        assert_eq!(notes.len(), 1);
    }
}
