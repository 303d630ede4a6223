//! Why a launch's warps wait: each stall reason's share of all stalls, top reasons first,
//! under ncu's names, with a one-line meaning.
//!
//! Two sources, the first the report has:
//! - Warp State Statistics, `smsp__average_warps_issue_stalled_<reason>_per_issue_active.ratio`:
//!   warps stalled on the reason per issued instruction, over every cycle of the launch
//!   (what ncu's Warp State chart draws);
//! - PC sampling, `smsp__pcsamp_warps_issue_stalled_<reason>` (not the `_not_issued` counts):
//!   samples of warps stalled on the reason, which short launches have few of.
//!
//! `selected` (the warp issued) is not a stall and is left out of the shares.

use strobe_model::ncu::NcuLaunch;

const WARP_STATE_PREFIX: &str = "smsp__average_warps_issue_stalled_";
const WARP_STATE_SUFFIX: &str = "_per_issue_active.ratio";
const PC_SAMPLING_PREFIX: &str = "smsp__pcsamp_warps_issue_stalled_";

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StallSource {
    WarpState,
    PcSampling,
}

impl StallSource {
    pub fn describe(self) -> &'static str {
        match self {
            StallSource::WarpState => "warp state statistics (every cycle)",
            StallSource::PcSampling => "PC sampling",
        }
    }
}

#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Stall {
    /// ncu's name of the reason (`long_scoreboard`).
    pub reason: String,
    /// % of all stalls.
    pub pct: f64,
    pub meaning: &'static str,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Stalls {
    pub source: StallSource,
    /// PC samples over the stall reasons (PC sampling only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub samples: Option<f64>,
    /// Largest share first; reasons with no stalls are left out.
    pub reasons: Vec<Stall>,
}

/// The reasons of one source: (reason, value) for every metric of the family that has a value.
fn family(l: &NcuLaunch, source: StallSource) -> Vec<(String, f64)> {
    let mut out = Vec::new();
    for (id, m) in &l.metrics {
        let reason = match source {
            StallSource::WarpState => {
                id.strip_prefix(WARP_STATE_PREFIX).and_then(|r| r.strip_suffix(WARP_STATE_SUFFIX))
            }
            StallSource::PcSampling => {
                id.strip_prefix(PC_SAMPLING_PREFIX).filter(|r| !r.ends_with("_not_issued") && !r.contains('.'))
            }
        };
        if let (Some(r), Some(v)) = (reason, m.value) {
            if r != "selected" && v.is_finite() && v >= 0.0 {
                out.push((r.to_string(), v));
            }
        }
    }
    out
}

pub fn stalls(l: &NcuLaunch) -> Option<Stalls> {
    for source in [StallSource::WarpState, StallSource::PcSampling] {
        let f = family(l, source);
        let total: f64 = f.iter().map(|(_, v)| v).sum();
        if f.is_empty() || total <= 0.0 {
            continue;
        }
        let mut reasons: Vec<Stall> = f
            .into_iter()
            .filter(|(_, v)| *v > 0.0)
            .map(|(r, v)| Stall { meaning: meaning(&r), pct: v * 100.0 / total, reason: r })
            .collect();
        reasons.sort_by(|a, b| b.pct.total_cmp(&a.pct).then_with(|| a.reason.cmp(&b.reason)));
        let samples = (source == StallSource::PcSampling).then_some(total);
        return Some(Stalls { source, samples, reasons });
    }
    None
}

/// What a reason means, in a line (after the Nsight Compute Profiling Guide's warp stall
/// reasons).
pub fn meaning(reason: &str) -> &'static str {
    match reason {
        "long_scoreboard" => "waiting on L1TEX data: global, local, texture or surface memory",
        "short_scoreboard" => "waiting on MIO data: shared memory or special math (sin, rcp, ...)",
        "barrier" => "waiting at a block barrier (__syncthreads) for the block's other warps",
        "membar" => "waiting on a memory barrier (__threadfence)",
        "mio_throttle" => "the MIO queue (shared memory, special math, dynamic branches) is full",
        "lg_throttle" => "the local/global memory instruction queue is full",
        "tex_throttle" => "the texture unit's queue is full",
        "math_pipe_throttle" => "the math pipe it needs is busy with other warps' instructions",
        "wait" => "a fixed-latency dependency between instructions",
        "dispatch_stall" => "the dispatcher could not issue the picked instruction",
        "drain" => "at exit, waiting for its memory stores to drain",
        "imc_miss" => "waiting for an immediate constant cache miss",
        "no_instruction" | "no_instructions" => {
            "no instruction fetched yet: an instruction cache miss, or just after a branch"
        }
        "branch_resolving" => "waiting for a branch target or the warp's next PC",
        "not_selected" => "ready, but the scheduler issued another warp",
        "sleeping" => "sleeping (__nanosleep) or yielded",
        "misc" => "another hardware reason",
        "gmma" => "waiting on warpgroup MMA (wgmma) work",
        "warpgroup_arrive" => "waiting for a warpgroup's arrive (wgmma fence)",
        "tmem" => "waiting on tensor memory",
        _ => "",
    }
}
