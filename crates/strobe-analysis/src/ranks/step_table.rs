//! The rank–step table: for each `ProfilerStep#N` and each rank that has it, where the step's
//! time went on that rank's GPU and how long its collectives waited for the others.
//!
//! Every figure is over the step's CPU range `[start, start + dur)` on that rank (GPU work
//! launched in the step but running after its range counts in the next one), from the
//! single-trace unions (`gpu_time`): compute, comm, busy. `exposed_comm` = comm not under
//! compute; `idle` = the range − busy. `wait` = Σ over the step's collectives of (latest
//! arrival − this rank's arrival): the time its comm kernels sat waiting for the last rank.

use super::collectives::Collective;
use super::unions::{clipped, rank_unions};
use super::{rank_steps, RankTrace};
use serde::Serialize;

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
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
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StepRow {
    pub name: String,
    /// The ranks that have this step, in rank order.
    pub per_rank: Vec<RankStep>,
    /// Skew of each of the step's collectives, in time order.
    pub collective_skew_ns: Vec<i64>,
    /// Set by `straggler::find_stragglers`.
    pub straggler: Option<i64>,
}

fn step_number(name: &str) -> u64 {
    name.strip_prefix("ProfilerStep#").and_then(|n| n.parse().ok()).unwrap_or(u64::MAX)
}

/// The table for `ranks` (sorted by rank) and their matched `collectives`, steps in number
/// order. A step missing on some ranks has rows only for the ranks that have it.
pub fn step_table(ranks: &[RankTrace], collectives: &[Collective]) -> Vec<StepRow> {
    let per_rank: Vec<(Vec<crate::steps::Step>, super::unions::RankUnions)> =
        ranks.iter().map(|r| (rank_steps(r.store), rank_unions(r.store))).collect();
    let mut names: Vec<String> = per_rank.iter().flat_map(|(s, _)| s.iter().map(|x| x.name.clone())).collect();
    names.sort_by(|a, b| (step_number(a), a).cmp(&(step_number(b), b)));
    names.dedup();
    names
        .into_iter()
        .map(|name| {
            let mine: Vec<&Collective> = collectives.iter().filter(|c| c.step.as_deref() == Some(&name)).collect();
            let per = ranks
                .iter()
                .zip(&per_rank)
                .enumerate()
                .filter_map(|(i, (r, (steps, u)))| {
                    let s = steps.iter().find(|s| s.name == name)?;
                    let (a, b) = (s.start_ns, s.start_ns + s.dur_ns);
                    let comm = clipped(&u.comm, a, b);
                    Some(RankStep {
                        rank: r.rank,
                        start_ns: s.start_ns,
                        dur_ns: s.dur_ns,
                        compute_ns: clipped(&u.compute, a, b),
                        comm_ns: comm,
                        exposed_comm_ns: comm - clipped(&u.overlapped, a, b),
                        idle_ns: s.dur_ns - clipped(&u.busy, a, b),
                        wait_ns: mine.iter().map(|c| c.skew_ns - c.arrival_ns[i]).sum(),
                    })
                })
                .collect();
            StepRow {
                name,
                per_rank: per,
                collective_skew_ns: mine.iter().map(|c| c.skew_ns).collect(),
                straggler: None,
            }
        })
        .collect()
}

/// Per rank, across the steps it has: the distribution of step time and of wait time.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RankStepSummary {
    pub rank: i64,
    pub step_time: super::distribution::Distribution,
    pub wait: super::distribution::Distribution,
}

pub fn rank_summaries(ranks: &[RankTrace], table: &[StepRow]) -> Vec<RankStepSummary> {
    ranks
        .iter()
        .map(|r| {
            let mine: Vec<&RankStep> =
                table.iter().flat_map(|s| s.per_rank.iter()).filter(|x| x.rank == r.rank).collect();
            let dur: Vec<i64> = mine.iter().map(|x| x.dur_ns).collect();
            let wait: Vec<i64> = mine.iter().map(|x| x.wait_ns).collect();
            RankStepSummary {
                rank: r.rank,
                step_time: super::distribution::Distribution::of(&dur),
                wait: super::distribution::Distribution::of(&wait),
            }
        })
        .collect()
}
