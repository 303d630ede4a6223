//! Peers that no group decides, decided by pairing sends with receives across the traces.
//! A send and its receive are in flight together: the receive cannot complete before the send
//! is posted, and a send completes only once its receive is posted (gloo and NCCL both wait
//! for the receiver), so their intervals from post to completion overlap. Every transfer has
//! both ends in the traces, so the sends and receives pair off completely. A candidate peer
//! of an op is kept when some complete pairing gives the op that peer:
//! 1. candidates with no overlapping opposite op towards this rank are dropped, repeatedly;
//! 2. over the remaining pairs, a maximum matching is found; a candidate is kept when forcing
//!    the op onto it still matches as many pairs.
//!
//! An op left with one candidate is resolved; one with several stays unresolved.

use super::p2p::{Dir, P2pOp};
use crate::ranks::groups::ProcessGroup;
use std::collections::BTreeMap;

/// Beyond this many undecided ops the matching (quadratic in them) is not tried.
const MAX_PENDING: usize = 20_000;

type Key = (usize, usize);

/// For each pending op (rank index, op index, candidate global ranks): its peer, or None.
pub fn decide(
    ranks: &[(i64, &[ProcessGroup])],
    ops: &[Vec<P2pOp>],
    pending: &[(usize, usize, Vec<i64>)],
) -> BTreeMap<Key, Option<i64>> {
    let mut out: BTreeMap<Key, Option<i64>> = pending.iter().map(|(r, o, _)| ((*r, *o), None)).collect();
    if pending.len() > MAX_PENDING {
        return out;
    }
    let idx_of: BTreeMap<i64, usize> = ranks.iter().enumerate().map(|(i, r)| (r.0, i)).collect();
    // every op's candidates: its peer where known
    let mut cand: BTreeMap<Key, Vec<i64>> = BTreeMap::new();
    for (ri, list) in ops.iter().enumerate() {
        for (oi, o) in list.iter().enumerate() {
            if let Some(p) = o.peer {
                cand.insert((ri, oi), vec![p]);
            }
        }
    }
    for (r, o, c) in pending {
        cand.insert((*r, *o), c.clone());
    }
    let overlap = |a: &P2pOp, b: &P2pOp| a.start_ns <= b.flight_end_ns && b.start_ns <= a.flight_end_ns;
    let same_size = |a: &P2pOp, b: &P2pOp| a.bytes.is_none() || b.bytes.is_none() || a.bytes == b.bytes;
    // the ops of rank `ci` that may pair with op `k` of rank index `ri`
    let partners = |cand: &BTreeMap<Key, Vec<i64>>, (ri, oi): Key, c: i64| -> Vec<Key> {
        let Some(&ci) = idx_of.get(&c) else { return Vec::new() };
        let (rank, o) = (ranks[ri].0, &ops[ri][oi]);
        ops[ci]
            .iter()
            .enumerate()
            .filter(|(k, x)| {
                x.dir != o.dir
                    && cand.get(&(ci, *k)).is_some_and(|cc| cc.contains(&rank))
                    && overlap(o, x)
                    && same_size(o, x)
            })
            .map(|(k, _)| (ci, k))
            .collect()
    };
    // 1. drop candidates without a partner, until nothing changes
    loop {
        let mut changed = false;
        for (r, o, _) in pending {
            let key = (*r, *o);
            let c = cand[&key].clone();
            if c.len() <= 1 {
                continue;
            }
            let keep: Vec<i64> = c.iter().copied().filter(|&x| !partners(&cand, key, x).is_empty()).collect();
            if keep.len() != c.len() && !keep.is_empty() {
                cand.insert(key, keep);
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    // 2. the pairs that remain possible, sends → receives
    let sends: Vec<Key> = cand.keys().copied().filter(|&(r, o)| ops[r][o].dir == Dir::Send).collect();
    let recvs: Vec<Key> = cand.keys().copied().filter(|&(r, o)| ops[r][o].dir == Dir::Recv).collect();
    let rpos: BTreeMap<Key, usize> = recvs.iter().enumerate().map(|(i, k)| (*k, i)).collect();
    let adj: Vec<Vec<usize>> = sends
        .iter()
        .map(|&s| {
            let mut v: Vec<usize> =
                cand[&s].iter().flat_map(|&c| partners(&cand, s, c)).filter_map(|k| rpos.get(&k).copied()).collect();
            v.sort_unstable();
            v.dedup();
            v
        })
        .collect();
    let base = max_matching(&adj, recvs.len(), None);
    let full = base.0;
    for (r, o, _) in pending {
        let key = (*r, *o);
        let c = cand[&key].clone();
        let kept: Vec<i64> = if c.len() <= 1 {
            c
        } else {
            c.into_iter()
                .filter(|&peer| {
                    // the base matching may already give it this peer
                    if let Some(m) = matched_peer(&base.1, &sends, &recvs, key) {
                        if ranks[m].0 == peer {
                            return true;
                        }
                    }
                    let allowed = |s: usize, rv: usize| -> bool {
                        let (sk, rk) = (sends[s], recvs[rv]);
                        if sk == key {
                            ranks[rk.0].0 == peer
                        } else if rk == key {
                            ranks[sk.0].0 == peer
                        } else {
                            true
                        }
                    };
                    max_matching(&adj, recvs.len(), Some(&allowed)).0 == full
                })
                .collect()
        };
        if let [p] = kept.as_slice() {
            out.insert(key, Some(*p));
        }
    }
    out
}

/// The rank index the op `key` is paired with in `matching` (receive → send).
fn matched_peer(matching: &[Option<usize>], sends: &[Key], recvs: &[Key], key: Key) -> Option<usize> {
    for (rv, s) in matching.iter().enumerate() {
        if let Some(s) = *s {
            if sends[s] == key {
                return Some(recvs[rv].0);
            }
            if recvs[rv] == key {
                return Some(sends[s].0);
            }
        }
    }
    None
}

/// A maximum bipartite matching (Kuhn's augmenting paths, iterative), over the edges `adj`
/// (send → receives) that `allowed` admits: its size and, per receive, its send.
fn max_matching(
    adj: &[Vec<usize>],
    n_right: usize,
    allowed: Option<&dyn Fn(usize, usize) -> bool>,
) -> (usize, Vec<Option<usize>>) {
    let ok = |s: usize, r: usize| allowed.is_none_or(|f| f(s, r));
    let mut match_r: Vec<Option<usize>> = vec![None; n_right];
    let mut size = 0;
    for root in 0..adj.len() {
        let mut seen = vec![false; n_right];
        // stack of (send, next edge index); parent receive of each send on the path
        let mut stack: Vec<(usize, usize)> = vec![(root, 0)];
        let mut via: Vec<usize> = Vec::new();
        let mut found = false;
        while let Some(&mut (s, ref mut e)) = stack.last_mut() {
            if *e >= adj[s].len() {
                stack.pop();
                via.pop();
                continue;
            }
            let r = adj[s][*e];
            *e += 1;
            if seen[r] || !ok(s, r) {
                continue;
            }
            seen[r] = true;
            via.push(r);
            match match_r[r] {
                None => {
                    found = true;
                    break;
                }
                Some(next) => stack.push((next, 0)),
            }
        }
        if found {
            // flip the path: stack[i].0 takes via[i]
            for (i, &(s, _)) in stack.iter().enumerate() {
                match_r[via[i]] = Some(s);
            }
            size += 1;
        }
    }
    (size, match_r)
}

#[cfg(test)]
mod tests {
    use super::max_matching;

    #[test]
    fn augmenting_paths() {
        // send 0 can take receive 0 or 1, send 1 only receive 0: both match
        let adj = vec![vec![0, 1], vec![0]];
        assert_eq!(max_matching(&adj, 2, None).0, 2);
        let forbid = |s: usize, r: usize| !(s == 0 && r == 1);
        assert_eq!(max_matching(&adj, 2, Some(&forbid)).0, 1);
    }
}
