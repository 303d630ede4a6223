//! The rank–step table: for each step (`steps`) and each rank that has it, where the step's
//! time went on that rank's GPU and how long its collectives waited for the others.
//!
//! Every figure is over the step's CPU range `[start, start + dur)` on that rank (GPU work
//! launched in the step but running after its range counts in the next one), from the
//! single-trace unions (`gpu_time`): compute, comm, busy. `exposed_comm` = comm not under
//! compute; `idle` = the range − busy. `wait` = Σ over the step's collectives of (latest
//! arrival − this rank's arrival): the time its comm kernels sat waiting for the last rank;
//! `exposed_wait` = the part of it not under the rank's own compute (`exposed`); `score` =
//! the best rank's own time (`dur − exposed_wait`) / this rank's.

use super::collectives::Collective;
use super::digest::RankDigest;
use super::exposed::exposed_wait;
use super::RankTrace;
use crate::steps::step_number;
use serde::Serialize;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RankStep {
    pub rank: i64,
    /// Start of the step in the rank's own clock (add the rank's offset for the shared axis).
    pub start_ns: i64,
    pub dur_ns: i64,
    pub compute_ns: i64,
    pub comm_ns: i64,
    pub exposed_comm_ns: i64,
    pub idle_ns: i64,
    pub wait_ns: i64,
    /// The part of `wait_ns` its own compute did not hide (`exposed::exposed_wait`).
    pub exposed_wait_ns: i64,
    /// The rank's own time in the step (`dur − exposed wait`) relative to the best rank's:
    /// best own time / this rank's, 1 for the best (as NVRx / Megatron's StragglerDetector
    /// score ranks against the fastest).
    pub score: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StepRow {
    pub name: String,
    /// The ranks that have this step, in rank order.
    pub per_rank: Vec<RankStep>,
    /// Skew of each of the step's collectives, in time order.
    pub collective_skew_ns: Vec<i64>,
    /// Set by `straggler::find_stragglers`, with its kind.
    pub straggler: Option<i64>,
    pub straggler_kind: Option<super::straggler::StragglerKind>,
}

/// The table for `ranks` (sorted by rank) and their matched `collectives`, steps in number
/// order. A step missing on some ranks has rows only for the ranks that have it.
pub fn step_table(ranks: &[RankTrace], collectives: &[Collective]) -> Vec<StepRow> {
    step_table_of(&super::digest::digests(ranks), collectives)
}

/// `step_table` on the ranks' digests (sorted by rank): the rank's own figures of each step
/// come with its digest (`StepFigures`), the waits from the matched collectives.
pub fn step_table_of(ranks: &[RankDigest], collectives: &[Collective]) -> Vec<StepRow> {
    let mut names: Vec<String> = ranks.iter().flat_map(|r| r.steps.iter().map(|x| x.name.clone())).collect();
    names.sort_by(|a, b| (step_number(a), a).cmp(&(step_number(b), b)));
    names.dedup();
    // looked up by name, not searched for per step: a long run has thousands of steps and
    // collectives, and the searches made the table quadratic in them
    let mut of_step: std::collections::HashMap<&str, Vec<&Collective>> = Default::default();
    for c in collectives {
        if let Some(s) = c.step.as_deref() {
            of_step.entry(s).or_default().push(c);
        }
    }
    let step_at: Vec<std::collections::HashMap<&str, usize>> = ranks
        .iter()
        .map(|r| {
            let mut m = std::collections::HashMap::with_capacity(r.steps.len());
            for (k, s) in r.steps.iter().enumerate() {
                m.entry(s.name.as_str()).or_insert(k); // the first of a name, as `position` found it
            }
            m
        })
        .collect();
    names
        .iter()
        .map(|name| {
            let mine: &[&Collective] = of_step.get(name.as_str()).map(Vec::as_slice).unwrap_or(&[]);
            let per = ranks
                .iter()
                .enumerate()
                .filter_map(|(i, r)| {
                    let k = *step_at[i].get(name.as_str())?;
                    let (s, f) = (&r.steps[k], r.step_figures.get(k).copied().unwrap_or_default());
                    Some(RankStep {
                        rank: r.rank,
                        start_ns: s.start_ns,
                        dur_ns: s.dur_ns,
                        compute_ns: f.compute_ns,
                        comm_ns: f.comm_ns,
                        exposed_comm_ns: f.exposed_comm_ns,
                        idle_ns: f.idle_ns,
                        wait_ns: mine.iter().map(|c| c.skew_ns - c.arrival_ns[i]).sum(),
                        exposed_wait_ns: mine.iter().map(|c| exposed_wait(c, i, r)).sum(),
                        score: 1.0,
                    })
                })
                .collect();
            let per = with_scores(per);
            StepRow {
                name: name.clone(),
                per_rank: per,
                collective_skew_ns: mine.iter().map(|c| c.skew_ns).collect(),
                straggler: None,
                straggler_kind: None,
            }
        })
        .collect()
}

fn with_scores(mut per: Vec<RankStep>) -> Vec<RankStep> {
    let own = |p: &RankStep| (p.dur_ns - p.exposed_wait_ns).max(1);
    let best = per.iter().map(own).min().unwrap_or(1);
    for p in &mut per {
        p.score = best as f64 / own(p) as f64;
    }
    per
}

/// Per rank, across the steps it has: the distribution of step time and of wait time.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RankStepSummary {
    pub rank: i64,
    pub step_time: super::distribution::Distribution,
    pub wait: super::distribution::Distribution,
}

pub fn rank_summaries(ranks: &[RankTrace], table: &[StepRow]) -> Vec<RankStepSummary> {
    rank_summaries_of(&ranks.iter().map(|r| r.rank).collect::<Vec<_>>(), table)
}

/// `rank_summaries` for the rank numbers `ranks` (ascending).
pub fn rank_summaries_of(ranks: &[i64], table: &[StepRow]) -> Vec<RankStepSummary> {
    // one pass over the table, not one per rank (a thousand ranks × a hundred steps)
    let mut by_rank: std::collections::HashMap<i64, (Vec<i64>, Vec<i64>)> = Default::default();
    for x in table.iter().flat_map(|s| s.per_rank.iter()) {
        let e = by_rank.entry(x.rank).or_default();
        e.0.push(x.dur_ns);
        e.1.push(x.wait_ns);
    }
    ranks
        .iter()
        .map(|&rank| {
            let (dur, wait) = by_rank.remove(&rank).unwrap_or_default();
            RankStepSummary {
                rank,
                step_time: super::distribution::Distribution::of(&dur),
                wait: super::distribution::Distribution::of(&wait),
            }
        })
        .collect()
}
