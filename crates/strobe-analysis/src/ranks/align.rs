//! Lining up the ranks' clocks. Each method gives, per rank, an offset in ns to add to that
//! rank's times so that they read in the reference rank's clock (the lowest rank, offset 0).
//!
//! - **Recorded**: the times as the traces hold them. Kineto writes `ts` in one host-wide
//!   clock, with `baseTimeNanoseconds` the wall-clock of its zero; where two ranks' bases
//!   differ (different hosts) the difference is applied, else the offset is 0.
//! - **StepStart**: the first step (`steps`) that every rank has starts at the same time.
//! - **CollectiveEnd**: a collective completes on all ranks together (no rank can leave before
//!   the last one joined), so the end of the k-th NCCL kernel of a name is simultaneous on every
//!   rank. The offset is the median over matched collectives of (reference end − rank end):
//!   one odd collective (a kernel that ends late for a local reason) does not move it.
//!
//! Nsight Systems exports count from their session start (`TARGET_INFO_SESSION_START_TIME`,
//! stored as `base_time_ns`), so Recorded applies the same difference to them.
//!
//! Every alignment states its **residual** (`residual`): collectives end together, so what
//! spread of their ends remains after alignment is clock error.
//!
//! A method that does not apply (no common step, no matched collective) falls back to
//! Recorded and says why.

use super::collectives::{match_kernels, CommKernel};
use super::digest::RankDigest;
use super::RankTrace;
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
    /// How well the offsets line the ranks up: the median over matched collectives of the
    /// spread (latest − earliest) of their aligned ends, which a collective has in common on
    /// every rank. None without a collective matched on every rank.
    pub residual_ns: Option<i64>,
    /// Set (by the report) when the residual exceeds the largest collective skew: the
    /// cross-rank figures (skews, waits, stragglers) would be clock error, and are withheld.
    pub refused: Option<String>,
}

/// Median spread of the matched collectives' ends after adding `offsets`.
pub fn residual(ranks: &[RankDigest], offsets: &[i64]) -> Option<i64> {
    if ranks.len() < 2 {
        return None;
    }
    let per_rank: Vec<&[CommKernel]> = ranks.iter().map(|r| r.comm.as_slice()).collect();
    let spreads: Vec<i64> = match_kernels(&per_rank)
        .iter()
        .map(|(_, _, idx)| {
            let ends = idx.iter().enumerate().map(|(r, &i)| per_rank[r][i].end + offsets.get(r).copied().unwrap_or(0));
            let (lo, hi) = ends.fold((i64::MAX, i64::MIN), |(lo, hi), e| (lo.min(e), hi.max(e)));
            hi - lo
        })
        .collect();
    median(&spreads)
}

/// Offsets for `ranks` (sorted by rank; the first is the reference) by `how`.
pub fn align(ranks: &[RankTrace], how: Alignment) -> RankAlignment {
    align_digests(&super::digest::digests(ranks), how)
}

/// `align` on the ranks' digests (sorted by rank).
pub fn align_digests(ranks: &[RankDigest], how: Alignment) -> RankAlignment {
    let attempt = match how {
        Alignment::Recorded => Ok(recorded(ranks)),
        Alignment::StepStart => step_start(ranks),
        Alignment::CollectiveEnd => collective_end(ranks),
    };
    match attempt {
        Ok((offsets_ns, basis)) => RankAlignment {
            requested: how,
            used: how,
            fallback_reason: None,
            residual_ns: residual(ranks, &offsets_ns),
            offsets_ns,
            basis,
            refused: None,
        },
        Err(why) => {
            let (offsets_ns, basis) = recorded(ranks);
            RankAlignment {
                requested: how,
                used: Alignment::Recorded,
                fallback_reason: Some(why),
                residual_ns: residual(ranks, &offsets_ns),
                offsets_ns,
                basis,
                refused: None,
            }
        }
    }
}

fn recorded(ranks: &[RankDigest]) -> (Vec<i64>, String) {
    let base0 = ranks.first().and_then(|r| r.base_time_ns);
    let offsets = ranks
        .iter()
        .map(|r| match (base0, r.base_time_ns) {
            (Some(b0), Some(b)) => b.saturating_sub(b0),
            _ => 0,
        })
        .collect();
    (offsets, "times as recorded (baseTimeNanoseconds differences applied)".to_string())
}

fn step_start(ranks: &[RankDigest]) -> Result<(Vec<i64>, String), String> {
    let steps: Vec<&[crate::steps::Step]> = ranks.iter().map(|r| r.steps.as_slice()).collect();
    let Some(first) = steps.first() else { return Err("no ranks".into()) };
    // the reference rank's steps in time order; the first one every rank has
    let common = first
        .iter()
        .find(|s| steps.iter().all(|v| v.iter().any(|t| t.name == s.name)))
        .ok_or_else(|| "no step common to all ranks".to_string())?;
    let offsets = steps
        .iter()
        .map(|v| v.iter().find(|t| t.name == common.name).map(|t| common.start_ns - t.start_ns).unwrap_or(0))
        .collect();
    Ok((offsets, format!("start of {}", common.name)))
}

fn collective_end(ranks: &[RankDigest]) -> Result<(Vec<i64>, String), String> {
    if ranks.len() < 2 {
        return Err("one rank: nothing to align".into());
    }
    let per_rank: Vec<&[CommKernel]> = ranks.iter().map(|r| r.comm.as_slice()).collect();
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
