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

pub fn step_mfu(store: &Store, runs: &[OpRun], d: &DevicePeaks) -> Vec<StepMfu> {
    let steps = crate::steps::steps(store);
    steps
        .iter()
        .map(|s| {
            let end = s.start_ns + s.dur_ns;
            let inside: Vec<&OpRun> = runs
                .iter()
                .filter(|r| r.work.is_some())
                .filter(|r| (s.start_ns..end).contains(&store.span_start(r.span)))
                .collect();
            let flops = |recomputed: bool| -> f64 {
                inside
                    .iter()
                    .filter(|r| r.recompute == recomputed)
                    .filter_map(|r| r.work.as_ref())
                    .map(|w| w.flops)
                    .sum()
            };
            let model = flops(false);
            let replayed = flops(true);
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
                mfu: util(model),
                hfu: if replayed > 0.0 { util(model + replayed) } else { None },
            }
        })
        .collect()
}
