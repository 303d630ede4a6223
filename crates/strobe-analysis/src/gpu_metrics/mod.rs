//! Sampled GPU metrics (Nsight Systems `--gpu-metrics-devices`): each metric's mean, median
//! and 90th percentile per GPU over the device's window and per step, and what they say
//! about the GPU's busy time (`not_working`: busy but not working; `kernels`: memory-bound
//! kernels far from the DRAM bandwidth).
//!
//! A sample at `t` stands for the sampling period that starts there (Nsight Systems draws it
//! so), so a window `[a, b)` holds the samples with `a ≤ t < b`. The percentiles interpolate
//! linearly between the two nearest ranks (numpy's default, Python's
//! `statistics.quantiles(method="inclusive")`).

pub mod kernels;
pub mod not_working;
pub mod text;

use crate::steps::Step;
use serde::{Deserialize, Serialize};
use strobe_model::gpu_metrics as names;
use strobe_store::{CounterSeries, Store};

/// One metric of one GPU over a window.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct GpuMetric {
    /// Its name without the unit (`SMs Active`).
    pub name: String,
    /// `%` (of the unit's peak), `MHz`, … (empty where the profiler gives none).
    pub unit: String,
    pub mean: f64,
    pub p50: f64,
    pub p90: f64,
    pub samples: u64,
    /// The same per step, for the steps that hold samples.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<StepMetric>,
}

/// One metric over one step.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct StepMetric {
    pub step: String,
    pub start_ns: i64,
    pub mean: f64,
    pub p50: f64,
    pub p90: f64,
    pub samples: u64,
}

/// Mean, median, 90th percentile and count of some values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Summary {
    pub mean: f64,
    pub p50: f64,
    pub p90: f64,
    pub samples: u64,
}

/// The summary of `vals` (any order; sorted here); None when empty.
pub fn summarize(vals: &mut [f64]) -> Option<Summary> {
    if vals.is_empty() {
        return None;
    }
    vals.sort_by(f64::total_cmp);
    let mean = vals.iter().sum::<f64>() / vals.len() as f64;
    Some(Summary { mean, p50: quantile(vals, 0.5), p90: quantile(vals, 0.9), samples: vals.len() as u64 })
}

/// The `q` quantile of sorted `v` (not empty), linear between the nearest ranks.
pub fn quantile(v: &[f64], q: f64) -> f64 {
    let pos = q * (v.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = (lo + 1).min(v.len() - 1);
    v[lo] + (v[hi] - v[lo]) * (pos - lo as f64)
}

/// The values of the samples at `a ≤ t < b` (`ts` sorted).
pub fn values_in<'a>(ts: &[i64], vals: &'a [f64], a: i64, b: i64) -> &'a [f64] {
    let i = ts.partition_point(|&t| t < a);
    let j = ts.partition_point(|&t| t < b).max(i);
    &vals[i..j]
}

/// The metric series of `device`, usual ones first (`strobe_model::gpu_metrics::USUAL`),
/// then by name.
pub fn device_series(store: &Store, device: i64) -> Vec<&CounterSeries> {
    let mut v: Vec<&CounterSeries> =
        store.counters.iter().filter(|c| c.device == Some(device) && c.name == names::NAME).collect();
    v.sort_by(|a, b| (names::rank(&a.series), &a.series).cmp(&(names::rank(&b.series), &b.series)));
    v
}

/// The GPUs with metric series, sorted.
pub fn devices(store: &Store) -> Vec<i64> {
    let mut d: Vec<i64> = store.counters.iter().filter(|c| c.name == names::NAME).filter_map(|c| c.device).collect();
    d.sort_unstable();
    d.dedup();
    d
}

/// The series of `device` whose short name starts with `short` (case ignored).
pub fn find<'s>(store: &'s Store, device: i64, short: &str) -> Option<&'s CounterSeries> {
    let want = short.to_ascii_lowercase();
    device_series(store, device)
        .into_iter()
        .find(|c| names::short_name(&c.series).to_ascii_lowercase().starts_with(&want))
}

/// Each metric of `device` over `[a, b)` and over each of `steps`; metrics with no sample
/// in the window are left out.
pub fn device_metrics(store: &Store, device: i64, (a, b): (i64, i64), steps: &[Step]) -> Vec<GpuMetric> {
    let mut out = Vec::new();
    for c in device_series(store, device) {
        let (ts, vals) = store.counter_points(c);
        let Some(s) = summarize(&mut values_in(ts, vals, a, b).to_vec()) else { continue };
        let steps = steps
            .iter()
            .filter_map(|st| {
                let s = summarize(&mut values_in(ts, vals, st.start_ns, st.end_ns()).to_vec())?;
                Some(StepMetric {
                    step: st.name.clone(),
                    start_ns: st.start_ns,
                    mean: s.mean,
                    p50: s.p50,
                    p90: s.p90,
                    samples: s.samples,
                })
            })
            .collect();
        out.push(GpuMetric {
            name: names::short_name(&c.series).to_string(),
            unit: names::unit(&c.series).to_string(),
            mean: s.mean,
            p50: s.p50,
            p90: s.p90,
            samples: s.samples,
            steps,
        });
    }
    out
}

/// Each sample's period: from its time to the next sample's, the last one as long as the
/// median period (a single sample: none).
pub fn periods(ts: &[i64]) -> Vec<(i64, i64)> {
    if ts.len() < 2 {
        return Vec::new();
    }
    let mut gaps: Vec<i64> = ts.windows(2).map(|w| w[1] - w[0]).collect();
    let last = *ts.last().unwrap_or(&0);
    gaps.sort_unstable();
    let median = gaps[gaps.len() / 2];
    let mut out: Vec<(i64, i64)> = ts.windows(2).map(|w| (w[0], w[1])).collect();
    out.push((last, last + median));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_match_linear_interpolation() {
        let mut v = vec![4.0, 1.0, 3.0, 2.0];
        let s = summarize(&mut v).unwrap();
        assert_eq!(s.mean, 2.5);
        assert_eq!(s.p50, 2.5);
        // position 0.9 × 3 = 2.7: 3 + 0.7 × (4 − 3)
        assert!((s.p90 - 3.7).abs() < 1e-12);
        assert_eq!(summarize(&mut [7.0]).unwrap().p90, 7.0);
        assert!(summarize(&mut []).is_none());
    }

    #[test]
    fn windows_are_half_open() {
        let ts = [10, 20, 30, 40];
        let vals = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(values_in(&ts, &vals, 20, 40), &[2.0, 3.0]);
        assert_eq!(values_in(&ts, &vals, 41, 50), &[] as &[f64]);
        assert_eq!(periods(&ts), vec![(10, 20), (20, 30), (30, 40), (40, 50)]);
    }
}
