//! Which schedule the stages ran, from the order of their microbatch work in one step, and
//! its theoretical bubble.
//!
//! - **GPipe**: every stage runs all its forwards, then all its backwards.
//! - **1F1B**: stage s (of p) runs min(p − s, m) forwards before its first backward (p − s − 1
//!   warm-up forwards and the first of the steady phase), then alternates one forward, one
//!   backward until the forwards run out, then the remaining backwards.
//! - **interleaved**: a stage runs each microbatch's forward more than once (v model chunks:
//!   `PP:<chunk>F<mb>` names, or the same `Forward 3` v times).
//!
//! Weight-gradient work (`W`, zero-bubble schedules) is left out of the order: it fills gaps.

use super::microbatch::{Microbatch, Phase};
use serde::Serialize;
use std::collections::HashMap;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Schedule {
    Gpipe,
    #[serde(rename = "1f1b")]
    OneFOneB,
    Interleaved,
    Unknown,
}

impl Schedule {
    pub fn as_str(self) -> &'static str {
        match self {
            Schedule::Gpipe => "gpipe",
            Schedule::OneFOneB => "1f1b",
            Schedule::Interleaved => "interleaved",
            Schedule::Unknown => "unknown",
        }
    }
}

/// The model chunks per stage: distinct chunk numbers, else how often one forward repeats.
pub fn virtual_stages(stage_mbs: &[Vec<&Microbatch>]) -> usize {
    let mut v = 1;
    for mbs in stage_mbs {
        let chunks: std::collections::BTreeSet<u32> = mbs.iter().filter_map(|m| m.chunk).collect();
        v = v.max(chunks.len());
        let mut reps: HashMap<u32, usize> = HashMap::new();
        for m in mbs.iter().filter(|m| m.phase == Phase::Forward) {
            *reps.entry(m.index).or_default() += 1;
        }
        v = v.max(reps.values().copied().max().unwrap_or(1));
    }
    v
}

/// The schedule of one step: `stage_mbs[s]` is stage s's microbatch work in start order.
pub fn recognise(stage_mbs: &[Vec<&Microbatch>]) -> Schedule {
    let p = stage_mbs.len();
    if p < 2 || stage_mbs.iter().any(|v| v.is_empty()) {
        return Schedule::Unknown;
    }
    if virtual_stages(stage_mbs) > 1 {
        return Schedule::Interleaved;
    }
    let seqs: Vec<Vec<Phase>> =
        stage_mbs.iter().map(|v| v.iter().map(|m| m.phase).filter(|&x| x != Phase::Weight).collect()).collect();
    let gpipe = seqs.iter().all(|s| {
        let f = s.iter().take_while(|&&x| x == Phase::Forward).count();
        f > 0 && s[f..].iter().all(|&x| x == Phase::Backward) && s.len() == 2 * f
    });
    // with m = 1 the two are the same order: GPipe
    if gpipe {
        return Schedule::Gpipe;
    }
    let one_f_one_b = seqs.iter().enumerate().all(|(s, q)| {
        let m = q.iter().filter(|&&x| x == Phase::Forward).count();
        let warm = (p - s).min(m);
        if q.len() != 2 * m || q[..warm].iter().any(|&x| x != Phase::Forward) {
            return false;
        }
        // steady: B then F alternating while forwards remain, then B's
        let rest = &q[warm..];
        let steady = m - warm;
        rest.iter().enumerate().all(|(i, &x)| {
            if i < 2 * steady {
                x == if i % 2 == 0 { Phase::Backward } else { Phase::Forward }
            } else {
                x == Phase::Backward
            }
        })
    });
    if one_f_one_b {
        Schedule::OneFOneB
    } else {
        Schedule::Unknown
    }
}

/// The theoretical bubble fraction of `schedule` with p stages, m microbatches and v chunks:
/// (p − 1) / (m + p − 1) for GPipe and 1F1B, (p − 1) / (v·m + p − 1) interleaved (the
/// (p − 1)/m of the Megatron paper divided by v, as a share of the step). With the formula.
pub fn theoretical_bubble(schedule: Schedule, p: usize, m: usize, v: usize) -> Option<(f64, String)> {
    if p < 2 || m == 0 {
        return None;
    }
    match schedule {
        Schedule::Gpipe | Schedule::OneFOneB => {
            let d = m + p - 1;
            Some(((p - 1) as f64 / d as f64, format!("(p−1)/(m+p−1) = {}/{d}, p = {p}, m = {m}", p - 1)))
        }
        Schedule::Interleaved => {
            let d = v * m + p - 1;
            Some(((p - 1) as f64 / d as f64, format!("(p−1)/(v·m+p−1) = {}/{d}, p = {p}, m = {m}, v = {v}", p - 1)))
        }
        Schedule::Unknown => None,
    }
}
