//! The order rule for groups inferred from timing: every member of a process group issues the
//! group's collectives in the same order (c10d's rule), so with each worker lane given a
//! group, the k-th op of a group must be the same kind and element count on every member, and
//! its members must all be inside it at one instant. `settle` starts from each lane's first
//! choice and moves lanes to their other candidates while that lowers the disagreements.

use std::collections::{BTreeMap, BTreeSet};

/// One unnamed collective of a rank, as the rule reads it (times aligned).
#[derive(Clone, Debug)]
pub struct LaneOp {
    pub start: i64,
    pub end: i64,
    pub kind: String,
    pub nelems: Option<u64>,
    pub lane: u32,
}

/// Per rank: lane → group.
pub type Assignment = Vec<BTreeMap<u32, String>>;

/// Most moves tried before the first choices are kept as they stand.
const MAX_MOVES: usize = 10_000;

/// How far `group`'s members disagree under `assign`: per position k of the group's ops, one
/// for each member without a k-th op, with another kind or size than the first member's, or
/// (all alike) one when the members are not all inside it at one instant.
fn disagreement(group: &str, members: &[usize], ops: &[Vec<LaneOp>], assign: &Assignment) -> usize {
    let seqs: Vec<Vec<&LaneOp>> = members
        .iter()
        .map(|&m| {
            let mut v: Vec<&LaneOp> =
                ops[m].iter().filter(|o| assign[m].get(&o.lane).is_some_and(|g| g == group)).collect();
            v.sort_by_key(|o| (o.start, o.end));
            v
        })
        .collect();
    let n = seqs.iter().map(Vec::len).max().unwrap_or(0);
    let mut cost = 0;
    for k in 0..n {
        let here: Vec<&LaneOp> = seqs.iter().filter_map(|s| s.get(k).copied()).collect();
        cost += seqs.len() - here.len();
        let first = here[0];
        let unlike = here.iter().filter(|o| o.kind != first.kind || o.nelems != first.nelems).count();
        cost += unlike;
        if unlike == 0 {
            let last_in = here.iter().map(|o| o.start).max().unwrap_or(0);
            let first_out = here.iter().map(|o| o.end).min().unwrap_or(0);
            if last_in > first_out {
                cost += 1;
            }
        }
    }
    cost
}

/// Each lane's group: `choice[rank][lane]` lists its candidates, first choice first; `members`
/// gives each group's open members (indices into `ops`).
pub fn settle(
    ops: &[Vec<LaneOp>],
    choice: &[BTreeMap<u32, Vec<String>>],
    members: &BTreeMap<String, Vec<usize>>,
) -> Assignment {
    let mut assign: Assignment =
        choice.iter().map(|c| c.iter().filter_map(|(l, v)| Some((*l, v.first()?.clone()))).collect()).collect();
    let cost_of = |g: &str, a: &Assignment| members.get(g).map_or(0, |m| disagreement(g, m, ops, a));
    let mut cost: BTreeMap<String, usize> = members.keys().map(|g| (g.clone(), cost_of(g, &assign))).collect();
    for _ in 0..MAX_MOVES {
        let bad: BTreeSet<&String> = cost.iter().filter(|(_, c)| **c > 0).map(|(g, _)| g).collect();
        if bad.is_empty() {
            break;
        }
        // (gain, rank, lane, new group): the move that removes the most disagreement
        let mut best: Option<(usize, usize, u32, String)> = None;
        for (ri, lanes) in choice.iter().enumerate() {
            for (lane, cands) in lanes {
                let Some(cur) = assign[ri].get(lane).cloned() else { continue };
                if cands.len() < 2 || !(bad.contains(&cur) || cands.iter().any(|c| bad.contains(c))) {
                    continue;
                }
                for alt in cands.iter().filter(|c| **c != cur) {
                    let before = cost.get(&cur).copied().unwrap_or(0) + cost.get(alt).copied().unwrap_or(0);
                    // try the move in place, then put the lane back
                    assign[ri].insert(*lane, alt.clone());
                    let after = cost_of(&cur, &assign) + cost_of(alt, &assign);
                    assign[ri].insert(*lane, cur.clone());
                    if after < before && best.as_ref().is_none_or(|b| before - after > b.0) {
                        best = Some((before - after, ri, *lane, alt.clone()));
                    }
                }
            }
        }
        let Some((_, ri, lane, alt)) = best else { break };
        let cur = assign[ri].insert(lane, alt.clone()).unwrap_or_default();
        for g in [cur, alt] {
            let c = cost_of(&g, &assign);
            cost.insert(g, c);
        }
    }
    assign
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(start: i64, kind: &str, n: u64, lane: u32) -> LaneOp {
        LaneOp { start, end: start + 10, kind: kind.into(), nelems: Some(n), lane }
    }

    /// Ranks 0 and 1 all-reduce then all-gather on group "a", ranks 2 and 3 likewise on "b" at
    /// the same times; rank 1's second lane first chose "c" (its group with rank 3, which runs
    /// like collectives then): the order moves it to "a", where rank 0 has an op rank 1 lacks.
    #[test]
    fn a_lane_on_the_wrong_group_of_one_size_is_moved() {
        let mk = |r: usize| vec![op(0, "all_reduce", 8, 1), op(20, "all_gather", 4, 2 + r as u32 % 2)];
        let ops: Vec<Vec<LaneOp>> = (0..4).map(mk).collect();
        // rank r's lanes: 1 (all-reduce) and 2 or 3 (all-gather)
        let choice: Vec<BTreeMap<u32, Vec<String>>> = vec![
            [(1, vec!["a".into()]), (2, vec!["a".into()])].into_iter().collect(),
            [(1, vec!["a".into()]), (3, vec!["c".into(), "a".into()])].into_iter().collect(),
            [(1, vec!["b".into()]), (2, vec!["b".into()])].into_iter().collect(),
            [(1, vec!["b".into()]), (3, vec!["b".into(), "c".into()])].into_iter().collect(),
        ];
        let members: BTreeMap<String, Vec<usize>> =
            [("a".to_string(), vec![0, 1]), ("b".to_string(), vec![2, 3]), ("c".to_string(), vec![1, 3])]
                .into_iter()
                .collect();
        let a = settle(&ops, &choice, &members);
        assert_eq!(a[1][&3], "a");
        assert_eq!(a[3][&3], "b");
        // nothing to settle: the first choices stand
        let ok = settle(&ops, &choice[..0], &BTreeMap::new());
        assert!(ok.is_empty());
    }
}
