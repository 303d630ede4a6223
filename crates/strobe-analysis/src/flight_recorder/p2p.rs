//! Point-to-point entries matched across ranks: a send on one rank is the receive on its peer.
//! NCCL names both ends in the entry (`nccl:send 1->2`, `nccl:recv 2<-1`, group ranks), so
//! the peer's global rank is the group's member at that index.
//!
//! A pair of ranks on a group is matched by `p2p_seq_id` when neither rank has any other
//! peer on the group (a group per stage pair, or a pair alone on it): both then count the
//! same transfers, and an id older than what the other rank's ring buffer still holds is lost,
//! not judged. Where a rank talks to several peers on one group its ids count all of them, so
//! the k-th send from A to B is matched with the k-th receive on B from A instead (NCCL runs
//! one pair's transfers in order).
//!
//! At each matched position: no opposite entry on the peer (it never posted its side) is a
//! `missing`; the peer's entry there being a send too (both ranks sending: a deadlock) is an
//! `op`; the sender's input sizes against the receiver's output sizes a `size`, and the dtypes
//! likewise a `dtype`.

use super::{FrReport, GroupSummary, Mismatch, ValueRanks};
use std::collections::{BTreeMap, BTreeSet};
use strobe_model::flight_recorder::{FrDump, FrEntry};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Way {
    Send,
    Recv,
}

/// One end of a transfer, in global ranks.
#[derive(Clone, Copy)]
struct End<'a> {
    way: Way,
    /// The rank holding the entry, and its peer.
    me: u32,
    peer: u32,
    entry: &'a FrEntry,
}

/// `send 1->2` / `recv 2<-1` (after the backend prefix) as (way, src, dst) in group ranks.
fn parse(op: &str) -> Option<(Way, usize, usize)> {
    let (way, rest) = op.split_once(' ')?;
    let rest = rest.trim();
    if way.starts_with("send") {
        let (s, d) = rest.split_once("->")?;
        Some((Way::Send, s.trim().parse().ok()?, d.trim().parse().ok()?))
    } else if way.starts_with("recv") {
        let (d, s) = rest.split_once("<-")?;
        Some((Way::Recv, s.trim().parse().ok()?, d.trim().parse().ok()?))
    } else {
        None
    }
}

/// Every dump's P2P entries as ends, per group; notes for entries that cannot be placed.
fn ends<'a>(dumps: &[&'a FrDump], groups: &[GroupSummary], notes: &mut Vec<String>) -> BTreeMap<String, Vec<End<'a>>> {
    let mut out: BTreeMap<String, Vec<End<'a>>> = BTreeMap::new();
    let mut unnamed: BTreeMap<u32, usize> = BTreeMap::new();
    for d in dumps {
        for e in d.entries.iter().filter(|e| e.is_p2p) {
            let Some((way, src, dst)) = parse(e.op()) else {
                *unnamed.entry(d.rank).or_default() += 1;
                continue;
            };
            let Some(g) = groups.iter().find(|g| g.name == e.group) else { continue };
            let (Some(&s), Some(&t)) = (g.members.get(src), g.members.get(dst)) else {
                notes.push(format!(
                    "rank {}: {} names group rank {} but group {:?} has {} members: not matched",
                    d.rank,
                    e.profiling_name,
                    src.max(dst),
                    g.name,
                    g.members.len()
                ));
                continue;
            };
            let (me, peer) = if way == Way::Send { (s, t) } else { (t, s) };
            if me != d.rank {
                notes.push(format!(
                    "rank {}: {} on group {:?} is rank {me}'s end by the group's members: not matched",
                    d.rank, e.profiling_name, g.name
                ));
                continue;
            }
            out.entry(g.name.clone()).or_default().push(End { way, me, peer, entry: e });
        }
    }
    for (rank, n) in unnamed {
        notes.push(format!(
            "rank {rank}: {n} point-to-point entries name no peer (`send A->B` / `recv A<-B`): not matched"
        ));
    }
    out
}

fn sizes(sz: &[Vec<i64>]) -> String {
    format!("{sz:?}")
}

/// Matches every group's P2P entries across the open ranks; adds what is odd to
/// `report.mismatches` (with `p2p` set) and counts the pairs matched.
pub fn match_p2p(dumps: &[&FrDump], groups: &[GroupSummary], report: &mut FrReport) {
    let open: BTreeSet<u32> = dumps.iter().map(|d| d.rank).collect();
    let first_new = report.mismatches.len();
    let by_group = ends(dumps, groups, &mut report.notes);
    for (group, ends) in &by_group {
        let desc = groups.iter().find(|g| &g.name == group).map(|g| g.desc.clone()).unwrap_or_default();
        // each rank's peers on this group
        let mut peers: BTreeMap<u32, BTreeSet<u32>> = BTreeMap::new();
        for e in ends {
            peers.entry(e.me).or_default().insert(e.peer);
        }
        // unordered pairs with both dumps open
        let pairs: BTreeSet<(u32, u32)> =
            ends.iter().filter(|e| open.contains(&e.peer)).map(|e| (e.me.min(e.peer), e.me.max(e.peer))).collect();
        for (a, b) in pairs {
            let alone = |r: u32| peers.get(&r).is_none_or(|p| p.len() == 1);
            if alone(a) && alone(b) {
                by_seq(group, &desc, ends, (a, b), report);
            } else {
                for (from, to) in [(a, b), (b, a)] {
                    by_order(group, &desc, ends, (from, to), report);
                }
            }
        }
    }
    // per group in the groups' order, then by sequence number
    let pos = |g: &str| groups.iter().position(|x| x.name == g).unwrap_or(usize::MAX);
    report.mismatches[first_new..].sort_by_key(|m| (pos(&m.group), m.seq));
}

/// A pair alone on its group: position = `p2p_seq_id`.
fn by_seq(group: &str, desc: &str, ends: &[End], (a, b): (u32, u32), report: &mut FrReport) {
    let of = |r: u32| -> BTreeMap<i64, End> {
        ends.iter().filter(|e| e.me == r).map(|e| (e.entry.p2p_seq_id, *e)).collect()
    };
    let (ea, eb) = (of(a), of(b));
    let first = |m: &BTreeMap<i64, End>| m.keys().next().copied();
    let seqs: BTreeSet<i64> = ea.keys().chain(eb.keys()).copied().collect();
    for seq in seqs {
        match (ea.get(&seq), eb.get(&seq)) {
            (Some(x), Some(y)) => compare(group, desc, seq, x, y, report),
            (Some(x), None) | (None, Some(x)) => {
                let other = if x.me == a { &eb } else { &ea };
                // older than the other's buffer holds: lost, not missing
                if first(other).is_some_and(|f| seq < f) {
                    continue;
                }
                report.mismatches.push(missing(group, desc, seq, x));
            }
            (None, None) => {}
        }
    }
}

/// A pair sharing its group with others: the k-th send from `from` to `to` against the k-th
/// receive on `to` from `from`.
fn by_order(group: &str, desc: &str, ends: &[End], (from, to): (u32, u32), report: &mut FrReport) {
    let mut sends: Vec<&End> = ends.iter().filter(|e| e.me == from && e.peer == to && e.way == Way::Send).collect();
    let mut recvs: Vec<&End> = ends.iter().filter(|e| e.me == to && e.peer == from && e.way == Way::Recv).collect();
    sends.sort_by_key(|e| e.entry.p2p_seq_id);
    recvs.sort_by_key(|e| e.entry.p2p_seq_id);
    for k in 0..sends.len().max(recvs.len()) {
        match (sends.get(k), recvs.get(k)) {
            (Some(x), Some(y)) => compare(group, desc, x.entry.p2p_seq_id, x, y, report),
            (Some(x), None) | (None, Some(x)) => {
                report.mismatches.push(missing(group, desc, x.entry.p2p_seq_id, x));
            }
            (None, None) => {}
        }
    }
}

fn describe(e: &End) -> String {
    let way = if e.way == Way::Send { "send to" } else { "recv from" };
    format!("{way} {}", e.peer)
}

fn missing(group: &str, desc: &str, seq: i64, x: &End) -> Mismatch {
    Mismatch {
        group: group.into(),
        desc: desc.into(),
        seq,
        kind: "missing".into(),
        majority: describe(x),
        values: vec![
            ValueRanks { value: describe(x), ranks: vec![x.me] },
            ValueRanks { value: "(not posted)".into(), ranks: vec![x.peer] },
        ],
        ranks: vec![x.peer],
        p2p: true,
    }
}

/// The two ends found at one position.
fn compare(group: &str, desc: &str, seq: i64, x: &End, y: &End, report: &mut FrReport) {
    let mk = |kind: &str, vx: String, vy: String| Mismatch {
        group: group.into(),
        desc: desc.into(),
        seq,
        kind: kind.into(),
        majority: vx.clone(),
        values: vec![ValueRanks { value: vx, ranks: vec![x.me] }, ValueRanks { value: vy, ranks: vec![y.me] }],
        ranks: vec![y.me],
        p2p: true,
    };
    if x.way == y.way || x.peer != y.me || y.peer != x.me {
        report.mismatches.push(mk("op", describe(x), describe(y)));
        return;
    }
    let (s, r) = if x.way == Way::Send { (x, y) } else { (y, x) };
    let mut odd = Vec::new();
    if s.entry.input_sizes != r.entry.output_sizes {
        odd.push(("size", sizes(&s.entry.input_sizes), sizes(&r.entry.output_sizes)));
    }
    if s.entry.input_dtypes != r.entry.output_dtypes {
        odd.push(("dtype", format!("{:?}", s.entry.input_dtypes), format!("{:?}", r.entry.output_dtypes)));
    }
    if odd.is_empty() {
        report.p2p_matched += 1;
    }
    for (kind, vs, vr) in odd {
        let (vx, vy) = if x.way == Way::Send { (vs, vr) } else { (vr, vs) };
        report.mismatches.push(mk(kind, format!("{} {vx}", describe(x)), format!("{} {vy}", describe(y))));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use strobe_model::flight_recorder::{FrGroup, FrState};

    fn p2p(group: &str, seq: i64, name: &str, n: i64, dtype: &str, state: FrState) -> FrEntry {
        FrEntry {
            record_id: seq,
            pg_id: 1,
            group: group.into(),
            group_desc: "pp".into(),
            collective_seq_id: 0,
            p2p_seq_id: seq,
            op_id: seq,
            profiling_name: format!("nccl:{name}"),
            is_p2p: true,
            input_sizes: vec![vec![n]],
            input_dtypes: vec![dtype.into()],
            output_sizes: vec![vec![n]],
            output_dtypes: vec![dtype.into()],
            state,
            time_created_ns: seq,
            time_started_ns: None,
            time_completed_ns: None,
            duration_ms: None,
            timeout_ms: None,
            retired: None,
            thread_name: None,
            thread_id: None,
            frames: Vec::new(),
        }
    }

    fn dump(rank: u32, groups: &[(&str, &[u32])], entries: Vec<FrEntry>) -> FrDump {
        FrDump {
            rank,
            version: "2.10".into(),
            groups: groups
                .iter()
                .map(|(n, r)| FrGroup { name: n.to_string(), desc: "pp".into(), ranks: r.to_vec() })
                .collect(),
            entries,
            ..Default::default()
        }
    }

    /// Ranks 4 and 6 on a group of their own (group ranks 0 and 1): three transfers from 4 to
    /// 6; the second's receive is 16 elements against a send of 32, the third's receive is
    /// never posted (6 stops after two); rank 6's buffer no longer holds seq 0, so 4's seq 0
    /// is not judged.
    #[test]
    fn a_pair_alone_on_its_group_by_seq() {
        use FrState::{Completed as C, Started as S};
        let g: &[(&str, &[u32])] = &[("5", &[4, 6])];
        let a = dump(
            4,
            g,
            vec![
                p2p("5", 0, "send 0->1", 32, "Float", C),
                p2p("5", 1, "send 0->1", 32, "Float", C),
                p2p("5", 2, "send 0->1", 32, "Float", C),
                p2p("5", 3, "send 0->1", 32, "Float", S),
            ],
        );
        let b = dump(6, g, vec![p2p("5", 1, "recv 1<-0", 32, "Float", C), p2p("5", 2, "recv 1<-0", 16, "Float", S)]);
        let r = crate::flight_recorder::analyse(&[a, b]);
        let odd: Vec<(i64, &str, &[u32])> =
            r.mismatches.iter().filter(|m| m.p2p).map(|m| (m.seq, m.kind.as_str(), m.ranks.as_slice())).collect();
        assert_eq!(odd, vec![(2, "size", &[6u32][..]), (3, "missing", &[6u32][..])]);
        assert_eq!(r.p2p_matched, 1);
        let size = r.mismatches.iter().find(|m| m.kind == "size").unwrap();
        assert_eq!(size.values[0].value, "send to 6 [[32]]");
        assert_eq!(size.values[1].value, "recv from 4 [[16]]");
        let text = crate::flight_recorder::to_text(&r);
        assert!(
            text.contains("at p2p seq 3 on group 5 (pp): rank 6 never posted its end of rank 4's send to 6"),
            "{text}"
        );
        assert!(text.contains("size mismatch: rank 4 send to 6 [[32]], rank 6 recv from 4 [[16]]"), "{text}");
        // the collective grid is not marked by a transfer's sequence number
        assert!(r.mismatches.iter().all(|m| m.p2p));
    }

    /// Rank 0 sends to ranks 1 and 2 on the world group: its p2p ids count both peers, so each
    /// pair is matched by order. Rank 2 receives a bfloat16 where rank 0 sent float; rank 1
    /// sends to 0 where 0 sends to 1 (both sending).
    #[test]
    fn a_shared_group_by_order() {
        use FrState::Completed as C;
        let g: &[(&str, &[u32])] = &[("0", &[0, 1, 2])];
        let r0 = dump(
            0,
            g,
            vec![
                p2p("0", 0, "send 0->1", 8, "Float", C),
                p2p("0", 1, "send 0->2", 8, "Float", C),
                p2p("0", 2, "send 0->1", 8, "Float", C),
            ],
        );
        let r1 = dump(1, g, vec![p2p("0", 0, "recv 1<-0", 8, "Float", C), p2p("0", 1, "send 1->0", 8, "Float", C)]);
        let r2 = dump(2, g, vec![p2p("0", 0, "recv 2<-0", 8, "BFloat16", C)]);
        let r = crate::flight_recorder::analyse(&[r0, r1, r2]);
        let mut odd: Vec<(u32, &str, u32)> = r
            .mismatches
            .iter()
            .filter(|m| m.p2p)
            .map(|m| (m.values[0].ranks[0], m.kind.as_str(), m.ranks[0]))
            .collect();
        odd.sort();
        // 0's second send to 1 has no receive; 1's send to 0 has no receive on 0; 2's dtype
        assert_eq!(odd, vec![(0, "dtype", 2), (0, "missing", 1), (1, "missing", 0)]);
        assert_eq!(r.p2p_matched, 1);
    }

    /// A group rank past the group's members, and a peer-less name, are notes.
    #[test]
    fn unplaceable_entries_are_notes() {
        use FrState::Completed as C;
        let g: &[(&str, &[u32])] = &[("3", &[0, 1])];
        let a = dump(0, g, vec![p2p("3", 0, "send 0->7", 8, "Float", C), p2p("3", 1, "send", 8, "Float", C)]);
        let r = crate::flight_recorder::analyse(&[a]);
        assert!(r.notes.iter().any(|n| n.contains("names group rank 7")), "{:?}", r.notes);
        assert!(r.notes.iter().any(|n| n.contains("name no peer")), "{:?}", r.notes);
        assert!(r.mismatches.iter().all(|m| !m.p2p));
    }

    #[test]
    fn names() {
        assert_eq!(parse("send 1->2"), Some((Way::Send, 1, 2)));
        assert_eq!(parse("recv 2<-1"), Some((Way::Recv, 1, 2)));
        assert_eq!(parse("send"), None);
        assert_eq!(parse("recv 2<-x"), None);
        assert_eq!(parse("all_reduce"), None);
    }
}
