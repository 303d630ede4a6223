//! Lining up the ranks' clocks. Each method gives, per rank, an offset in ns to add to that
//! rank's times so that they read in the reference rank's clock (the lowest rank, offset 0).
//!
//! - **Recorded**: the times as the traces hold them. Kineto writes `ts` in one host-wide
//!   clock, with `baseTimeNanoseconds` the wall-clock of its zero; where two ranks' bases
//!   differ (different hosts) the difference is applied, else the offset is 0.
//! - **StepStart**: the first `ProfilerStep#N` that every rank has starts at the same time.
//! - **CollectiveEnd**: a collective completes on all ranks together (no rank can leave before
//!   the last one joined), so the end of the k-th NCCL kernel of a name is simultaneous on every
//!   rank. The offset is the median over matched collectives of (reference end − rank end):
//!   one odd collective (a kernel that ends late for a local reason) does not move it.
//!
//! A method that does not apply (no common step, no matched collective) falls back to
//! Recorded and says why.

use super::collectives::{comm_kernels, match_kernels};
use super::{rank_steps, RankTrace};
use crate::stats::median;
use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Alignment {
    Recorded,
    StepStart,
    CollectiveEnd,
}

impl Alignment {
    pub fn as_str(self) -> &'static str {
        match self {
            Alignment::Recorded => "recorded",
            Alignment::StepStart => "step_start",
            Alignment::CollectiveEnd => "collective_end",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RankAlignment {
    pub requested: Alignment,
    pub used: Alignment,
    /// Why `used` differs from `requested`.
    pub fallback_reason: Option<String>,
    /// Per rank, in the order of the ranks given (sorted by rank): ns to add to its times.
    pub offsets_ns: Vec<i64>,
    /// What the offsets rest on: the common step's name, or the number of matched collectives.
    pub basis: String,
}

/// Offsets for `ranks` (sorted by rank; the first is the reference) by `how`.
pub fn align(ranks: &[RankTrace], how: Alignment) -> RankAlignment {
    let attempt = match how {
        Alignment::Recorded => Ok(recorded(ranks)),
        Alignment::StepStart => step_start(ranks),
        Alignment::CollectiveEnd => collective_end(ranks),
    };
    match attempt {
        Ok((offsets_ns, basis)) => {
            RankAlignment { requested: how, used: how, fallback_reason: None, offsets_ns, basis }
        }
        Err(why) => {
            let (offsets_ns, basis) = recorded(ranks);
            RankAlignment { requested: how, used: Alignment::Recorded, fallback_reason: Some(why), offsets_ns, basis }
        }
    }
}

fn recorded(ranks: &[RankTrace]) -> (Vec<i64>, String) {
    let base0 = ranks.first().and_then(|r| r.store.meta.base_time_ns);
    let offsets = ranks
        .iter()
        .map(|r| match (base0, r.store.meta.base_time_ns) {
            (Some(b0), Some(b)) => b.saturating_sub(b0),
            _ => 0,
        })
        .collect();
    (offsets, "times as recorded (baseTimeNanoseconds differences applied)".to_string())
}

fn step_start(ranks: &[RankTrace]) -> Result<(Vec<i64>, String), String> {
    let steps: Vec<Vec<crate::steps::Step>> = ranks.iter().map(|r| rank_steps(r.store)).collect();
    let Some(first) = steps.first() else { return Err("no ranks".into()) };
    // the reference rank's steps in time order; the first one every rank has
    let common = first
        .iter()
        .find(|s| steps.iter().all(|v| v.iter().any(|t| t.name == s.name)))
        .ok_or_else(|| "no ProfilerStep# common to all ranks".to_string())?;
    let offsets = steps
        .iter()
        .map(|v| v.iter().find(|t| t.name == common.name).map(|t| common.start_ns - t.start_ns).unwrap_or(0))
        .collect();
    Ok((offsets, format!("start of {}", common.name)))
}

fn collective_end(ranks: &[RankTrace]) -> Result<(Vec<i64>, String), String> {
    if ranks.len() < 2 {
        return Err("one rank: nothing to align".into());
    }
    let per_rank: Vec<_> = ranks.iter().map(|r| comm_kernels(r.store)).collect();
    let matched = match_kernels(&per_rank);
    if matched.is_empty() {
        return Err("no NCCL collective common to all ranks".into());
    }
    let offsets = (0..ranks.len())
        .map(|r| {
            let d: Vec<i64> =
                matched.iter().map(|(_, _, idx)| per_rank[0][idx[0]].end - per_rank[r][idx[r]].end).collect();
            median(&d).unwrap_or(0)
        })
        .collect();
    Ok((offsets, format!("median over {} matched collectives", matched.len())))
}
