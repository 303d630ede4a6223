//! What the sampled metrics say while each of a GPU's longest-running kernel names runs: SMs
//! Active, Tensor Active and DRAM bandwidth (read + write, % of peak), each sample weighted
//! by how much of its period the kernel's launches cover. A kernel is memory-bound by the
//! roofline of its recorded shapes where the trace has them (`efficiency`), else where its
//! DRAM traffic leads its instruction issue (DRAM % ≥ SM Issue %) without tensor work; a
//! memory-bound kernel far below the DRAM bandwidth is waiting on memory latency, not on
//! bandwidth (uncoalesced or dependent loads, too little in flight).
//!
//! A sample measures its whole period: a kernel that fills little of the periods it runs in
//! (microsecond launches under millisecond sampling) shares its samples with idle time, so
//! it is judged only when its launches cover at least `MIN_COVERAGE` of those periods.

use super::{find, periods};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use strobe_model::{LaneKind, SpanKind};
use strobe_store::Store;

/// How many kernel names (by GPU time) are measured.
pub const TOP: usize = 10;
/// A memory-bound kernel below this DRAM bandwidth (% of peak) is flagged.
pub const LOW_DRAM_PCT: f64 = 50.0;
/// A kernel is judged only where its launches fill this much of the sampling periods they
/// run in.
pub const MIN_COVERAGE: f64 = 0.5;

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct KernelMetrics {
    pub name: String,
    pub gpu_ns: i64,
    pub count: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sms_active: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sm_issue: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tensor_active: Option<f64>,
    /// DRAM read + write bandwidth, % of peak.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dram_pct: Option<f64>,
    /// How much of the sampling periods its launches run in they fill (0–1).
    pub coverage: f64,
    /// `roofline` (the recorded shapes' arithmetic intensity) or `measured` (DRAM leads issue).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_bound: Option<String>,
    /// Memory-bound and below `LOW_DRAM_PCT` of the DRAM bandwidth.
    pub low_dram: bool,
}

/// Start and end times.
type Intervals = Vec<(i64, i64)>;

/// A series' times, values and sampling periods.
type Sampled<'a> = (&'a [i64], &'a [f64], Intervals);

/// Launch intervals of each kernel name of `device`, with their total time.
fn kernel_runs(store: &Store, device: i64) -> Vec<(String, i64, Intervals)> {
    let mut by: HashMap<&str, (i64, Intervals)> = HashMap::new();
    for (lane, l) in store.lanes.iter().enumerate() {
        if !matches!(l.kind, LaneKind::GpuStream { device: d, .. } if d == device) {
            continue;
        }
        let s = store.lane_spans(lane as u32);
        for i in 0..s.span.len() {
            let span = s.span[i];
            if store.span_kind(span) != SpanKind::Kernel || s.ends[i] <= s.starts[i] {
                continue;
            }
            let e = by.entry(store.span_name(span)).or_default();
            e.0 += s.ends[i] - s.starts[i];
            e.1.push((s.starts[i], s.ends[i]));
        }
    }
    let mut v: Vec<(String, i64, Intervals)> = by
        .into_iter()
        .map(|(n, (ns, mut iv))| {
            iv.sort_unstable();
            (n.to_string(), ns, iv)
        })
        .collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    v
}

/// The mean of a series over `intervals` (sorted), each sample weighted by the overlap of
/// its period with them; None where no period overlaps.
fn weighted_mean(ts: &[i64], vals: &[f64], per: &[(i64, i64)], intervals: &[(i64, i64)]) -> Option<f64> {
    let (mut w, mut sum) = (0i64, 0.0f64);
    for &(s, e) in intervals {
        // the period holding s: the last starting at or before it
        let mut i = ts.partition_point(|&t| t <= s).saturating_sub(1);
        while i < per.len() && per[i].0 < e {
            let o = per[i].1.min(e) - per[i].0.max(s);
            if o > 0 {
                w += o;
                sum += o as f64 * vals[i];
            }
            i += 1;
        }
    }
    (w > 0).then(|| sum / w as f64)
}

/// How much of the sampling periods `intervals` (sorted) touch they fill; each period counted
/// once however many intervals touch it.
fn coverage(per: &[(i64, i64)], intervals: &[(i64, i64)]) -> f64 {
    let (mut covered, mut touched) = (0i64, 0i64);
    let mut last: Option<usize> = None;
    for &(s, e) in intervals {
        let mut i = per.partition_point(|p| p.1 <= s);
        while i < per.len() && per[i].0 < e {
            let o = per[i].1.min(e) - per[i].0.max(s);
            if o > 0 {
                covered += o;
                if last.is_none_or(|l| i > l) {
                    touched += per[i].1 - per[i].0;
                    last = Some(i);
                }
            }
            i += 1;
        }
    }
    if touched > 0 {
        covered as f64 / touched as f64
    } else {
        0.0
    }
}

/// The metrics during each of `device`'s `TOP` kernel names by GPU time; `roofline` gives,
/// for the kernel names the recorded shapes model, whether their roofline is memory-bound.
pub fn kernel_metrics(store: &Store, device: i64, roofline: &HashMap<String, bool>) -> Vec<KernelMetrics> {
    let series = |short: &str| {
        find(store, device, short).map(|c| {
            let (ts, vals) = store.counter_points(c);
            (ts, vals, periods(ts))
        })
    };
    let (sms, issue, tensor) = (series("SMs Active"), series("SM Issue"), series("Tensor Active"));
    let (read, write) = (series("DRAM Read Bandwidth"), series("DRAM Write Bandwidth"));
    if sms.is_none() && read.is_none() {
        return Vec::new();
    }
    let mean = |s: &Option<Sampled>, iv: &[(i64, i64)]| s.as_ref().and_then(|(ts, v, p)| weighted_mean(ts, v, p, iv));
    let per = sms.as_ref().or(read.as_ref()).map(|s| s.2.clone()).unwrap_or_default();
    kernel_runs(store, device)
        .into_iter()
        .take(TOP)
        .map(|(name, gpu_ns, iv)| {
            let coverage = coverage(&per, &iv);
            let sms_active = mean(&sms, &iv);
            let sm_issue = mean(&issue, &iv);
            let tensor_active = mean(&tensor, &iv);
            let dram_pct = match (mean(&read, &iv), mean(&write, &iv)) {
                (Some(r), Some(w)) => Some(r + w),
                (r, w) => r.or(w),
            };
            let memory_bound = match roofline.get(&name) {
                _ if coverage < MIN_COVERAGE => None,
                Some(&mem) => mem.then(|| "roofline".to_string()),
                None => match (dram_pct, sm_issue) {
                    (Some(d), Some(i)) if d >= i && tensor_active.unwrap_or(0.0) < 1.0 => Some("measured".to_string()),
                    _ => None,
                },
            };
            let low_dram = memory_bound.is_some() && dram_pct.is_some_and(|d| d < LOW_DRAM_PCT);
            KernelMetrics {
                name,
                gpu_ns,
                count: iv.len() as u64,
                sms_active,
                sm_issue,
                tensor_active,
                dram_pct,
                coverage,
                memory_bound,
                low_dram,
            }
        })
        .collect()
}

/// Fills each GPU's `kernel_metrics` (those with metrics), the roofline's verdicts taken
/// from `eff` where its kernels carry one.
pub fn fill(store: &Store, gpus: &mut [crate::gpu_time::GpuTime], eff: &crate::efficiency::Efficiency) {
    if gpus.iter().all(|g| g.metrics.is_empty()) {
        return;
    }
    let roofline: HashMap<String, bool> = eff
        .kernels
        .iter()
        .filter_map(|k| Some((k.name.clone(), k.figures.bound? == crate::efficiency::Bound::Memory)))
        .collect();
    for g in gpus.iter_mut().filter(|g| !g.metrics.is_empty()) {
        g.kernel_metrics = kernel_metrics(store, g.device, &roofline);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_weigh_by_overlap() {
        let ts = [0, 10, 20];
        let vals = [10.0, 50.0, 90.0];
        let per = periods(&ts);
        // 5 ns of the first period (10), 10 of the second (50): (50 + 500) / 15
        let m = weighted_mean(&ts, &vals, &per, &[(5, 20)]).unwrap();
        assert!((m - 550.0 / 15.0).abs() < 1e-12);
        assert_eq!(weighted_mean(&ts, &vals, &per, &[(100, 200)]), None);
    }

    #[test]
    fn coverage_counts_each_period_once() {
        let per = periods(&[0, 10, 20]);
        // 2 + 3 ns of period 0, 10 of period 1: 15 of 20
        assert!((coverage(&per, &[(0, 2), (5, 8), (10, 20)]) - 0.75).abs() < 1e-12);
        assert_eq!(coverage(&per, &[(100, 200)]), 0.0);
    }
}
