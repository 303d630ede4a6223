//! Is a faster kernel worth it: each profiled kernel's possible gain weighed against the step
//! it runs in, from a trace open beside the ncu report (its launches already linked to the
//! trace's kernel spans, `ncu_match::match_stores`).
//!
//! Per kernel (the trace's name of the linked spans, its ncu launches together):
//! - its time per step: every kernel span of that name in the trace that starts inside a step,
//!   summed, ÷ the number of steps (`steps::steps`);
//! - the step: the mean step duration;
//! - two estimates of how much of the kernel's time could go, each a duration-weighted mean
//!   over its launches: ncu's (the largest global rule estimate, `ncu_detail::estimated_speedup`)
//!   and the roofline's (its distance to its ceiling, `roofline::roofline_speedup_pct`);
//! - the gain per step: time per step × estimate, ncu's where it has one (it knows the
//!   cause), else the roofline's; and that gain as % of the step.
//!
//! Ranked by gain: "where a faster kernel pays most".

use crate::roofline::RooflineReport;
use std::collections::BTreeMap;
use strobe_model::{LaneKind, SpanKind};
use strobe_store::Store;

#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct KernelGain {
    /// ncu's name of the kernel (its first launch's).
    pub name: String,
    /// The trace's name of it.
    pub timeline_name: String,
    /// Its launches, indices into `RooflineReport::kernels`.
    pub launches: Vec<usize>,
    /// ncu's estimate, % of the kernel's time, and the rule of its longest launch.
    pub ncu_speedup_pct: Option<f64>,
    pub ncu_rule: Option<String>,
    /// The roofline's estimate, % of the kernel's time.
    pub roofline_speedup_pct: Option<f64>,
    /// The kernel's time per step in the trace, ns.
    pub ns_per_step: f64,
    /// Calls per step.
    pub calls_per_step: f64,
    /// Gain per step, ns: by ncu's estimate where there is one, else the roofline's.
    pub gain_ns: f64,
    /// Which estimate `gain_ns` uses: `ncu` or `roofline`.
    pub gain_from: &'static str,
    pub gain_pct_of_step: f64,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct StepGains {
    pub steps: usize,
    /// Mean step duration, ns.
    pub step_ns: f64,
    /// Largest gain first.
    pub kernels: Vec<KernelGain>,
}

impl KernelGain {
    /// The estimate `gain_ns` uses, % of the kernel's time.
    pub fn speedup_pct(&self) -> f64 {
        match self.gain_from {
            "ncu" => self.ncu_speedup_pct.unwrap_or(0.0),
            _ => self.roofline_speedup_pct.unwrap_or(0.0),
        }
    }

    /// "+30 % on this kernel = 1.20 ms of a 77.0 ms step, 1.6 %".
    pub fn sentence(&self, step_ns: f64) -> String {
        format!(
            "+{:.0} % on this kernel = {} of a {} step, {:.1} %",
            self.speedup_pct(),
            duration(self.gain_ns),
            duration(step_ns),
            self.gain_pct_of_step
        )
    }
}

/// A duration for a sentence: µs below a millisecond, else ms (two decimals below 10 ms).
pub fn duration(ns: f64) -> String {
    if ns.abs() < 1e6 {
        format!("{:.1} µs", ns / 1e3)
    } else if ns.abs() < 1e7 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.1} ms", ns / 1e6)
    }
}

/// Duration-weighted mean over `(value, weight)` pairs (equal weights when none has one).
fn weighted_mean(v: &[(f64, f64)]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    let w: f64 = v.iter().map(|x| x.1).sum();
    if w > 0.0 {
        Some(v.iter().map(|x| x.0 * x.1).sum::<f64>() / w)
    } else {
        Some(v.iter().map(|x| x.0).sum::<f64>() / v.len() as f64)
    }
}

/// One kernel's timeline figures: (time per step ns, calls per step).
pub type PerStep = (f64, f64);

/// The gains from already-gathered figures: `groups` = (timeline name, launches, per step).
pub fn rank(
    report: &RooflineReport,
    groups: Vec<(String, Vec<usize>, PerStep)>,
    steps: usize,
    step_ns: f64,
) -> StepGains {
    let mut kernels: Vec<KernelGain> = groups
        .into_iter()
        .filter_map(|(timeline_name, launches, (ns_per_step, calls_per_step))| {
            let ks: Vec<&crate::roofline::KernelSol> = launches.iter().filter_map(|&i| report.kernels.get(i)).collect();
            let first = ks.first()?;
            let dur = |k: &crate::roofline::KernelSol| k.duration_ns.unwrap_or(0) as f64;
            let ncu: Vec<(f64, f64)> =
                ks.iter().filter_map(|k| Some((k.estimated_speedup.as_ref()?.pct, dur(k)))).collect();
            let roof: Vec<(f64, f64)> = ks.iter().filter_map(|k| Some((k.roofline_speedup_pct?, dur(k)))).collect();
            let ncu_pct = weighted_mean(&ncu).map(|p| p.clamp(0.0, 100.0));
            let roof_pct = weighted_mean(&roof);
            let longest =
                ks.iter().filter(|k| k.estimated_speedup.is_some()).max_by_key(|k| k.duration_ns.unwrap_or(0));
            let (pct, from) = match (ncu_pct, roof_pct) {
                (Some(p), _) => (p, "ncu"),
                (None, Some(p)) => (p, "roofline"),
                (None, None) => (0.0, "roofline"),
            };
            let gain_ns = ns_per_step * pct / 100.0;
            Some(KernelGain {
                name: first.name.clone(),
                timeline_name,
                launches,
                ncu_speedup_pct: ncu_pct,
                ncu_rule: longest.and_then(|k| k.estimated_speedup.as_ref()).map(|e| e.rule.clone()),
                roofline_speedup_pct: roof_pct,
                ns_per_step,
                calls_per_step,
                gain_ns,
                gain_from: from,
                gain_pct_of_step: if step_ns > 0.0 { gain_ns * 100.0 / step_ns } else { 0.0 },
            })
        })
        .collect();
    kernels.sort_by(|a, b| b.gain_ns.total_cmp(&a.gain_ns).then_with(|| a.timeline_name.cmp(&b.timeline_name)));
    StepGains { steps, step_ns, kernels }
}

/// The gains over a trace: `links` gives, per launch of `report`, its kernel span in `store`.
/// None when the trace has no steps or no launch is linked.
pub fn weigh(report: &RooflineReport, links: &[Option<u32>], store: &Store) -> Option<StepGains> {
    let steps = crate::steps::steps(store);
    if steps.is_empty() {
        return None;
    }
    let step_ns = steps.iter().map(|s| s.dur_ns as f64).sum::<f64>() / steps.len() as f64;
    // Launches by the name id of their linked span, in first-launch order.
    let mut by_name: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
    let mut order = Vec::new();
    for (i, l) in links.iter().enumerate() {
        let Some(span) = *l else { continue };
        let name = store.span_meta(span).name;
        let v = by_name.entry(name).or_default();
        if v.is_empty() {
            order.push(name);
        }
        v.push(i);
    }
    if order.is_empty() {
        return None;
    }
    // Each linked name's kernel time and calls inside the steps.
    let mut total: BTreeMap<u32, (i64, u64)> = order.iter().map(|&n| (n, (0, 0))).collect();
    for (lane, desc) in store.lanes.iter().enumerate() {
        if !matches!(desc.kind, LaneKind::GpuStream { .. }) {
            continue;
        }
        let v = store.lane_spans(lane as u32);
        for ((&sid, &start), &end) in v.span.iter().zip(v.starts).zip(v.ends) {
            let m = store.span_meta(sid);
            if SpanKind::from_u8(m.kind) != SpanKind::Kernel {
                continue;
            }
            let Some(t) = total.get_mut(&m.name) else { continue };
            if steps.iter().any(|s| start >= s.start_ns && start < s.end_ns()) {
                t.0 += end - start;
                t.1 += 1;
            }
        }
    }
    let n = steps.len() as f64;
    let groups = order
        .into_iter()
        .map(|name| {
            let (ns, calls) = total[&name];
            (
                store.string(name).to_string(),
                by_name.remove(&name).unwrap_or_default(),
                (ns as f64 / n, calls as f64 / n),
            )
        })
        .collect();
    Some(rank(report, groups, steps.len(), step_ns))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ncu_detail::EstimatedSpeedup;
    use crate::roofline::KernelSol;

    fn k(dur: i64, ncu: Option<f64>, roof: Option<f64>) -> KernelSol {
        KernelSol {
            name: "k".into(),
            duration_ns: Some(dur),
            estimated_speedup: ncu.map(|pct| EstimatedSpeedup { pct, rule: "UncoalescedGlobalAccess".into() }),
            roofline_speedup_pct: roof,
            ..KernelSol::default()
        }
    }

    #[test]
    fn gains_are_time_per_step_times_the_estimate() {
        let report = RooflineReport {
            format: "ncu",
            layout: strobe_model::ncu::NcuLayout::Raw,
            device: Default::default(),
            // a GEMM with ncu's 30 % on both launches (weights 1:3), a softmax with only a roofline figure
            kernels: vec![k(100, Some(20.0), Some(50.0)), k(300, Some(40.0), Some(10.0)), k(50, None, Some(80.0))],
            by_name: Vec::new(),
            notes: Vec::new(),
        };
        let groups =
            vec![("gemm".to_string(), vec![0, 1], (4.0e6, 2.0)), ("softmax".to_string(), vec![2], (1.0e6, 1.0))];
        let g = rank(&report, groups, 10, 77.0e6);
        // gemm: (20·100 + 40·300) / 400 = 35 % of 4 ms = 1.4 ms; softmax: 80 % of 1 ms = 0.8 ms
        assert_eq!(g.kernels[0].timeline_name, "gemm");
        assert!((g.kernels[0].ncu_speedup_pct.unwrap() - 35.0).abs() < 1e-9);
        assert!((g.kernels[0].gain_ns - 1.4e6).abs() < 1e-3);
        assert_eq!(g.kernels[0].gain_from, "ncu");
        assert!((g.kernels[0].gain_pct_of_step - 1.4 / 77.0 * 100.0).abs() < 1e-9);
        assert_eq!(g.kernels[1].gain_from, "roofline");
        assert!((g.kernels[1].gain_ns - 0.8e6).abs() < 1e-3);
        assert_eq!(g.kernels[0].sentence(g.step_ns), "+35 % on this kernel = 1.40 ms of a 77.0 ms step, 1.8 %");
    }
}
