//! The bottleneck stage: the one whose work the others wait for. In a pipeline every stage
//! runs every microbatch, so the stage with the most work per step sets the pace and waits
//! least; the others' P2P wait is the time they spend for it. Named by the median work over
//! the steps, with the evidence: its work beside the others' and the waits.

use super::bubbles::StageStep;
use crate::report::fmt_ns;
use crate::stats::median;

/// (stage, rank, evidence) of the stage with the most median work, from each step's rows.
pub fn bottleneck(steps: &[Vec<StageStep>]) -> Option<(usize, i64, String)> {
    let stages: std::collections::BTreeSet<(usize, i64)> = steps.iter().flatten().map(|s| (s.stage, s.rank)).collect();
    let med = |stage: usize, f: fn(&StageStep) -> i64| {
        let v: Vec<i64> = steps.iter().flatten().filter(|s| s.stage == stage).map(f).collect();
        median(&v).unwrap_or(0)
    };
    let rows: Vec<(usize, i64, i64, i64)> =
        stages.iter().map(|&(st, r)| (st, r, med(st, |s| s.work_ns), med(st, |s| s.p2p_wait_total_ns))).collect();
    if rows.len() < 2 {
        return None;
    }
    let top = *rows.iter().max_by_key(|r| (r.2, std::cmp::Reverse(r.0)))?;
    let others: Vec<String> = rows
        .iter()
        .filter(|r| r.0 != top.0)
        .map(|r| format!("stage {} {} (waits {})", r.0, fmt_ns(r.2), fmt_ns(r.3)))
        .collect();
    let evidence = format!(
        "stage {} (rank {}) has the most microbatch work per step: {} median over {} step(s), against {}; \
         it waits {} for its peers",
        top.0,
        top.1,
        fmt_ns(top.2),
        steps.len(),
        others.join(", "),
        fmt_ns(top.3)
    );
    Some((top.0, top.1, evidence))
}
