//! One group's collectives matched across its members by sequence number.
//!
//! At each `collective_seq_id` a member with a dump is *missing* when its last collective on
//! the group came before (it never got there); one whose first recorded collective comes
//! after lost that entry to the ring buffer and is not judged. Among the entries there, the
//! op (backend prefix off), then the sizes (input and output, for the ops whose shapes c10d
//! requires equal on every member) and the dtypes are compared; the value most members have
//! is the majority. An entry is completed when its state says so, or when the rank's
//! `pg_status` counts the group's collectives completed past it (gloo never updates the
//! state).

use super::{Behind, FrReport, GroupSummary, LastCompleted, Mismatch, Stuck, ValueRanks};
use std::collections::BTreeMap;
use strobe_model::flight_recorder::{FrDump, FrEntry, FrState};

/// Ops whose members may pass different shapes: a root's list against the others' nothing
/// (gather, scatter), uneven splits (all-to-all).
fn sizes_may_differ(op: &str) -> bool {
    let op = op.to_ascii_lowercase();
    (op.contains("gather") && !op.contains("all"))
        || (op.contains("scatter") && !op.contains("reduce"))
        || op.contains("alltoall")
        || op.contains("all_to_all")
}

/// Whether `d`'s entry `e` had completed by the time of the dump.
pub fn completed(d: &FrDump, e: &FrEntry) -> bool {
    if e.state == FrState::Completed {
        return true;
    }
    !e.is_p2p
        && d.group_status
            .iter()
            .any(|s| s.pg_id == e.pg_id.to_string() && s.last_completed.is_some_and(|c| c >= e.collective_seq_id))
}

/// One member's collectives on a group, by sequence number.
struct Member<'a> {
    dump: &'a FrDump,
    by_seq: BTreeMap<i64, &'a FrEntry>,
}

impl Member<'_> {
    fn first(&self) -> Option<i64> {
        self.by_seq.keys().next().copied()
    }
    fn last(&self) -> Option<i64> {
        self.by_seq.keys().next_back().copied()
    }
    /// Never got to `seq` (as opposed to having lost it to the ring buffer).
    fn behind(&self, seq: i64) -> bool {
        self.last().is_none_or(|l| l < seq)
    }
}

pub fn match_group(g: &GroupSummary, dumps: &[&FrDump], report: &mut FrReport) {
    let members: Vec<Member> = dumps
        .iter()
        .filter(|d| g.members.contains(&d.rank))
        .map(|d| {
            let mut by_seq = BTreeMap::new();
            for e in d.entries.iter().filter(|e| e.group == g.name && !e.is_p2p) {
                if by_seq.insert(e.collective_seq_id, e).is_some() {
                    report.notes.push(format!(
                        "rank {}: two entries at seq {} on group {:?}; the later one is used",
                        d.rank, e.collective_seq_id, g.name
                    ));
                }
            }
            Member { dump: d, by_seq }
        })
        .collect();
    let mut last_healthy: Option<(i64, String)> = None;
    let mut first_bad: Option<i64> = None;
    for &seq in &g.seqs {
        let here: Vec<(u32, &FrEntry, bool)> = members
            .iter()
            .filter_map(|m| m.by_seq.get(&seq).map(|e| (m.dump.rank, *e, completed(m.dump, e))))
            .collect();
        let missing: Vec<u32> = members.iter().filter(|m| m.behind(seq)).map(|m| m.dump.rank).collect();
        let ops = tally(here.iter().map(|(r, e, _)| (*r, e.op().to_string())));
        let mut odd = Vec::new();
        if ops.len() > 1 {
            odd.push(mismatch(g, seq, "op", &ops));
        } else if !here.is_empty() {
            if !sizes_may_differ(here[0].1.op()) {
                let sizes = tally(
                    here.iter().map(|(r, e, _)| (*r, format!("in {:?} out {:?}", e.input_sizes, e.output_sizes))),
                );
                if sizes.len() > 1 {
                    odd.push(mismatch(g, seq, "size", &sizes));
                }
            }
            let dtypes =
                tally(here.iter().map(|(r, e, _)| (*r, format!("in {:?} out {:?}", e.input_dtypes, e.output_dtypes))));
            if dtypes.len() > 1 {
                odd.push(mismatch(g, seq, "dtype", &dtypes));
            }
        }
        let majority_op = ops.first().map(|v| v.value.clone()).unwrap_or_default();
        if !missing.is_empty() {
            let mut values = ops.clone();
            values.push(ValueRanks { value: "(not arrived)".into(), ranks: missing.clone() });
            odd.push(Mismatch {
                group: g.name.clone(),
                desc: g.desc.clone(),
                seq,
                kind: "missing".into(),
                majority: majority_op.clone(),
                values,
                ranks: missing.clone(),
                p2p: false,
            });
        }
        let all_done = here.iter().all(|(_, _, done)| *done);
        if odd.is_empty() && all_done {
            last_healthy = Some((seq, majority_op.clone()));
        } else if first_bad.is_none() {
            first_bad = Some(seq);
            let not_arrived = members
                .iter()
                .filter(|m| m.behind(seq))
                .map(|m| {
                    let last = m.last();
                    Behind {
                        rank: m.dump.rank,
                        last_seq: last,
                        last_op: last.and_then(|l| m.by_seq.get(&l)).map(|e| e.op().to_string()),
                    }
                })
                .collect();
            report.stuck.push(Stuck {
                group: g.name.clone(),
                desc: g.desc.clone(),
                seq,
                op: majority_op,
                arrived: here.iter().map(|(r, _, _)| *r).collect(),
                not_completed: here.iter().filter(|(_, _, done)| !done).map(|(r, _, _)| *r).collect(),
                not_arrived,
            });
        }
        report.mismatches.extend(odd);
    }
    if let Some((seq, op)) = last_healthy {
        report.last_completed_everywhere.push(LastCompleted { group: g.name.clone(), seq, op });
    }
    let lost: Vec<u32> =
        members.iter().filter(|m| m.first().is_some_and(|f| f > g.seqs[0])).map(|m| m.dump.rank).collect();
    if !lost.is_empty() {
        report.notes.push(format!(
            "group {:?}: the ring buffer of ranks {lost:?} no longer holds its first collectives; those are not compared",
            g.name
        ));
    }
}

/// Values with the ranks that have each, most ranks first (then by value).
fn tally(items: impl Iterator<Item = (u32, String)>) -> Vec<ValueRanks> {
    let mut by: BTreeMap<String, Vec<u32>> = BTreeMap::new();
    for (r, v) in items {
        by.entry(v).or_default().push(r);
    }
    let mut out: Vec<ValueRanks> = by.into_iter().map(|(value, ranks)| ValueRanks { value, ranks }).collect();
    out.sort_by(|a, b| b.ranks.len().cmp(&a.ranks.len()).then_with(|| a.value.cmp(&b.value)));
    out
}

fn mismatch(g: &GroupSummary, seq: i64, kind: &str, values: &[ValueRanks]) -> Mismatch {
    Mismatch {
        group: g.name.clone(),
        desc: g.desc.clone(),
        seq,
        kind: kind.into(),
        majority: values[0].value.clone(),
        values: values.to_vec(),
        ranks: values[1..].iter().flat_map(|v| v.ranks.iter().copied()).collect(),
        p2p: false,
    }
}

/// What the grid shows for one rank at one sequence number of a group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cell {
    /// Matched and completed.
    Ok,
    /// The rank never got here.
    Missing,
    /// Another op than the majority.
    Op,
    /// Other sizes or dtypes than the majority.
    Size,
    /// Arrived, not completed.
    NotCompleted,
    /// No entry to judge (no dump, not a member, or lost to the ring buffer).
    Unknown,
}

/// The grid's cell for `rank` at `seq` on `group`, from the report's mismatches and the
/// rank's own entry.
pub fn cell(report: &FrReport, dump: Option<&FrDump>, group: &str, seq: i64, rank: u32) -> Cell {
    let odd = |kinds: &[&str]| {
        report.mismatches.iter().any(|m| {
            !m.p2p && m.group == group && m.seq == seq && kinds.contains(&m.kind.as_str()) && m.ranks.contains(&rank)
        })
    };
    if odd(&["missing"]) {
        return Cell::Missing;
    }
    let Some(d) = dump else { return Cell::Unknown };
    let Some(e) = d.entries.iter().find(|e| e.group == group && !e.is_p2p && e.collective_seq_id == seq) else {
        return Cell::Unknown;
    };
    if odd(&["op"]) {
        Cell::Op
    } else if odd(&["size", "dtype"]) {
        Cell::Size
    } else if !completed(d, e) {
        Cell::NotCompleted
    } else {
        Cell::Ok
    }
}
