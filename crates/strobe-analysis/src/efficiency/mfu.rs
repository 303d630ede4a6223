//! Model FLOPs utilisation per profiler step: the FLOPs of the step's ops (those with a
//! formula that launched GPU work, whose CPU call started in the step) ÷ (step time × peak),
//! the peak being that of the unit with most of the step's FLOPs. Model FLOPs leave out
//! forward ops replayed in the backward pass (activation checkpointing); hardware FLOPs
//! (HFU) count them, and are given where the trace shows such a replay.

use super::ops::OpRun;
use super::peaks::DevicePeaks;
use serde::Serialize;
use strobe_store::Store;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StepMfu {
    pub name: String,
    pub dur_ns: i64,
    pub model_flops: f64,
    /// model + recomputed FLOPs.
    pub hardware_flops: f64,
    pub unit: super::Unit,
    pub peak_flops_per_s: Option<f64>,
    pub mfu: Option<f64>,
    /// Only where recomputation is seen.
    pub hfu: Option<f64>,
}

/// MFU in each of `steps`.
pub fn step_mfu(store: &Store, runs: &[OpRun], steps: &[crate::steps::Step], d: &DevicePeaks) -> Vec<StepMfu> {
    let start = |r: &OpRun| store.span_start(r.span);
    let sorted = runs.windows(2).all(|w| start(&w[0]) <= start(&w[1]));
    steps
        .iter()
        .map(|s| {
            let end = s.start_ns + s.dur_ns;
            // runs come sorted by start (`op_runs`): the step's are one contiguous run of them,
            // found by binary search (a scan per step made this quadratic in the trace's length)
            let (a, b) = match sorted {
                true => (runs.partition_point(|r| start(r) < s.start_ns), runs.partition_point(|r| start(r) < end)),
                false => (0, runs.len()),
            };
            let inside: Vec<&OpRun> = runs[a..b.max(a)]
                .iter()
                .filter(|r| r.work.is_some() && (s.start_ns..end).contains(&start(r)))
                .collect();
            let flops = |recomputed: bool| -> f64 {
                inside
                    .iter()
                    .filter(|r| r.recompute == recomputed)
                    .filter_map(|r| r.work.as_ref())
                    .map(|w| w.flops)
                    .sum()
            };
            // `+ 0.0`: an empty f64 sum is -0.0, which printed as "MFU -0.0%"
            let model = flops(false) + 0.0;
            let replayed = flops(true) + 0.0;
            let unit = super::main_unit(inside.iter().filter_map(|r| r.work.as_ref()).map(|w| (w.unit, w.flops)));
            let peak = d.flops(unit).filter(|p| *p > 0.0);
            let secs = s.dur_ns as f64 * 1e-9;
            let util = |f: f64| peak.filter(|_| secs > 0.0).map(|p| f / (secs * p));
            StepMfu {
                name: s.name.clone(),
                dur_ns: s.dur_ns,
                model_flops: model,
                hardware_flops: model + replayed,
                unit,
                peak_flops_per_s: peak,
                // no op of the step has a formula (an nsys report has no ops at all): the
                // step's FLOPs are unknown, not zero
                mfu: if inside.is_empty() { None } else { util(model) },
                hfu: if replayed > 0.0 { util(model + replayed) } else { None },
            }
        })
        .collect()
}
