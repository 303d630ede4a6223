//! Matched send/receive pairs and their split into transfer and wait. Between two ranks
//! the k-th send of one to the other is the k-th receive of the other from it (the c10d
//! semantics: point-to-point messages of a pair arrive in order). The pair's transfer proper
//! is the shorter participant's flight (the data can move only once both are there); the
//! longer one's excess is the wait of whoever came first.

use super::p2p::{Dir, P2pOp};
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct P2pPair {
    pub from_rank: i64,
    pub to_rank: i64,
    /// Index into the sender's and the receiver's transfer lists.
    pub send: usize,
    pub recv: usize,
    pub transfer_ns: i64,
    pub wait_ns: i64,
    /// Which side waited: the one whose flight was longer.
    pub waiter: Dir,
    pub bytes: Option<u64>,
}

/// One direction of one link, summed over its pairs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct P2pLink {
    pub from_rank: i64,
    pub to_rank: i64,
    pub from_stage: usize,
    pub to_stage: usize,
    pub pairs: usize,
    pub bytes: u64,
    pub transfer_ns: i64,
    pub wait_ns: i64,
    /// Of the wait, how much the receiver waited (the rest the sender's request did).
    pub recv_wait_ns: i64,
}

/// The pairs of `ranks` (rank, its transfers).
pub fn pairs(ranks: &[(i64, &[P2pOp])]) -> Vec<P2pPair> {
    let of = |r: i64| ranks.iter().find(|x| x.0 == r).map(|x| x.1);
    let mut out = Vec::new();
    for &(a, ops) in ranks {
        let mut sends: BTreeMap<i64, Vec<usize>> = BTreeMap::new();
        for (i, o) in ops.iter().enumerate() {
            if let (Dir::Send, Some(p)) = (o.dir, o.peer) {
                sends.entry(p).or_default().push(i);
            }
        }
        for (b, s_idx) in sends {
            let Some(bops) = of(b) else { continue };
            let r_idx = bops.iter().enumerate().filter(|(_, o)| o.dir == Dir::Recv && o.peer == Some(a)).map(|x| x.0);
            for (&si, ri) in s_idx.iter().zip(r_idx) {
                let (s, r) = (&ops[si], &bops[ri]);
                let (sf, rf) = (s.flight_ns(), r.flight_ns());
                out.push(P2pPair {
                    from_rank: a,
                    to_rank: b,
                    send: si,
                    recv: ri,
                    transfer_ns: sf.min(rf),
                    wait_ns: (sf - rf).abs(),
                    waiter: if rf > sf { Dir::Recv } else { Dir::Send },
                    bytes: r.bytes.or(s.bytes),
                });
            }
        }
    }
    out
}

/// The pairs summed per direction of each link, in stage order.
pub fn links(pairs: &[P2pPair], stage_of: &BTreeMap<i64, usize>) -> Vec<P2pLink> {
    let mut m: BTreeMap<(usize, usize, i64, i64), P2pLink> = BTreeMap::new();
    for p in pairs {
        let (Some(&fs), Some(&ts)) = (stage_of.get(&p.from_rank), stage_of.get(&p.to_rank)) else { continue };
        let l = m.entry((fs, ts, p.from_rank, p.to_rank)).or_insert(P2pLink {
            from_rank: p.from_rank,
            to_rank: p.to_rank,
            from_stage: fs,
            to_stage: ts,
            pairs: 0,
            bytes: 0,
            transfer_ns: 0,
            wait_ns: 0,
            recv_wait_ns: 0,
        });
        l.pairs += 1;
        l.bytes += p.bytes.unwrap_or(0);
        l.transfer_ns += p.transfer_ns;
        l.wait_ns += p.wait_ns;
        if p.waiter == Dir::Recv {
            l.recv_wait_ns += p.wait_ns;
        }
    }
    m.into_values().collect()
}
