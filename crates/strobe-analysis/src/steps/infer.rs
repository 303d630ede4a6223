//! Steps found from the GPU work itself, when nothing in the trace marks them: a training
//! loop launches the same kernel sequence every iteration, so the sequence of kernel names
//! repeats with the iteration's period.
//!
//! - The kernels of the device with the most of them, by start: a sequence of names.
//! - Candidate periods: the index gaps between consecutive kernels of one name (the optimizer's
//!   kernel, once per iteration, gives the iteration's), the 64 most frequent, each seen ≥ 3 ×
//!   in the first `MAX_SCAN` kernels.
//! - The period is the candidate L (2 ≤ L, at least 3 periods) whose shifted sequence agrees
//!   most (`seq[i] == seq[i + L]`, the fraction over the second half of the scanned prefix: the
//!   prologue — CUDA init, warm-up — does not repeat), at least `MIN_AGREEMENT`; within 0.5 % of
//!   the best, the shortest (twice the period agrees as well).
//! - Steps are laid from the first kernel where one whole period repeats exactly.
//!   A layer's period loses at every forward/backward/optimizer boundary, the iteration's
//!   does not.
//! - The phase: of the L positions, the one whose kernel the GPU waits longest before (median
//!   over the periods of the idle gap before it) — iterations start after the host syncs
//!   (`loss.item()`, the data loader).
//! - Step k runs from the start of its first kernel to the start of the next step's first
//!   kernel; the last, complete period ends at its last kernel's end. GPU times, so an
//!   inferred step is where the GPU ran the iteration, not where the CPU issued it.

use super::{Step, StepSource};
use strobe_model::{LaneKind, SpanKind};
use strobe_store::Store;

const MAX_SCAN: usize = 200_000;
const MIN_AGREEMENT: f64 = 0.9;

pub fn inferred_steps(store: &Store) -> Vec<Step> {
    let ks = device_kernels(store);
    let seq: Vec<u32> = ks.iter().map(|k| k.2).collect();
    let Some(period) = find_period(&seq[..seq.len().min(MAX_SCAN)]) else { return Vec::new() };
    let same = |i: usize| seq[i] == seq[i + period];
    let Some(first) = (0..seq.len().saturating_sub(2 * period)).find(|&i| (i..i + period).all(same)) else {
        return Vec::new();
    };
    let phase = first + quietest_phase(&ks[first..], period);
    let mut out = Vec::new();
    let mut b = phase;
    let mut k = 0;
    while b + period <= ks.len() {
        let end =
            if b + period < ks.len() { ks[b + period].0 } else { ks[b..].iter().map(|x| x.1).max().unwrap_or(ks[b].0) };
        out.push(Step {
            name: format!("inferred step {k}"),
            start_ns: ks[b].0,
            dur_ns: end - ks[b].0,
            source: StepSource::Inferred,
        });
        b += period;
        k += 1;
    }
    if out.len() < 2 {
        out.clear();
    }
    out
}

/// (start, end, name) of the kernels of the device with the most, by start.
fn device_kernels(store: &Store) -> Vec<(i64, i64, u32)> {
    let mut per: std::collections::BTreeMap<i64, Vec<(i64, i64, u32)>> = Default::default();
    for (lane, desc) in store.lanes.iter().enumerate() {
        let LaneKind::GpuStream { device, .. } = desc.kind else { continue };
        let v = store.lane_spans(lane as u32);
        let e = per.entry(device).or_default();
        for (k, &sid) in v.span.iter().enumerate() {
            let m = store.span_meta(sid);
            if SpanKind::from_u8(m.kind) == SpanKind::Kernel {
                e.push((v.starts[k], v.ends[k], m.name));
            }
        }
    }
    let mut best = per.into_values().max_by_key(|v| v.len()).unwrap_or_default();
    best.sort_unstable();
    best
}

fn find_period(seq: &[u32]) -> Option<usize> {
    let n = seq.len();
    if n < 6 {
        return None;
    }
    let mut last: std::collections::HashMap<u32, usize> = Default::default();
    let mut gaps: std::collections::HashMap<usize, usize> = Default::default();
    for (i, &s) in seq.iter().enumerate() {
        if let Some(p) = last.insert(s, i) {
            *gaps.entry(i - p).or_default() += 1;
        }
    }
    let mut cands: Vec<(usize, usize)> =
        gaps.into_iter().filter(|&(l, c)| l >= 2 && c >= 3 && l * 3 <= n).map(|(l, c)| (c, l)).collect();
    cands.sort_unstable_by(|a, b| b.cmp(a));
    cands.truncate(64);
    let scored: Vec<(f64, usize)> = cands
        .iter()
        .map(|&(_, l)| {
            let from = (n - l) / 2;
            let same = (from..n - l).filter(|&i| seq[i] == seq[i + l]).count();
            (same as f64 / (n - l - from).max(1) as f64, l)
        })
        .collect();
    let best = scored.iter().map(|s| s.0).fold(f64::NAN, f64::max);
    if best.is_nan() || best < MIN_AGREEMENT {
        return None;
    }
    scored.iter().filter(|s| s.0 >= best - 0.005).map(|s| s.1).min()
}

fn quietest_phase(ks: &[(i64, i64, u32)], period: usize) -> usize {
    // idle gap before each kernel: its start − the latest end of the kernels before it
    let mut reach = i64::MIN;
    let gap: Vec<i64> = ks
        .iter()
        .map(|k| {
            let g = if reach == i64::MIN { 0 } else { (k.0 - reach).max(0) };
            reach = reach.max(k.1);
            g
        })
        .collect();
    (0..period)
        .max_by_key(|&p| {
            let mut g: Vec<i64> = gap.iter().skip(p).step_by(period).copied().collect();
            g.sort_unstable();
            (g[g.len() / 2], std::cmp::Reverse(p))
        })
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::find_period;

    #[test]
    fn period_of_a_repeating_sequence_with_layers() {
        // an iteration: 3 "layers" of (a b), then c d (the optimizer), 5 times over
        let it = [1, 2, 1, 2, 1, 2, 3, 4];
        let seq: Vec<u32> = it.iter().copied().cycle().take(it.len() * 5).collect();
        assert_eq!(find_period(&seq), Some(8));
        // no repetition at all
        let seq: Vec<u32> = (0..40).collect();
        assert_eq!(find_period(&seq), None);
    }
}
