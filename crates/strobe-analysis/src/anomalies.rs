//! Step anomalies: the odd steps of a step-time series, found for the user (docs/ranks.md,
//! "Step anomalies").
//!
//! - **Outlier**: a step whose duration's modified z-score `0.6745 · (dur − median) / MAD`
//!   (Iglewicz–Hoaglin; MAD = median |dur − median|, floored at 1 % of the median so that a
//!   perfectly steady series does not flag nanoseconds) is ≥ `k` (3.5). Only slow steps: a fast
//!   step is not a problem to find. Needs ≥ `MIN_STEPS` steps.
//! - **Periodic**: when ≥ 3 steps are outliers and they fall every N steps (N ≥ 2: equal gaps in
//!   step order, none missing between the first and the last), they are one spike pattern, kind
//!   `periodic` (a checkpoint, an evaluation, a data-loader refill every N steps).
//!
//! The evidence compares the odd step with the typical one (the step whose duration is closest
//! to the median): the kernel names whose time changed most (`diff::diff_windows`, kernels that
//! start in each step) and the GPU idle time in each (a CPU-side gap shows as idle).
//!
//! A kernel name is evidence only when its time in the odd step grew by at least the steps'
//! usual variation — the MAD the score divides by, itself at least 1 % of the median step. A
//! smaller change is within what any two ordinary steps differ by, so it cannot explain why
//! this step is an outlier (a 6 ms slow step whose kernels each ran 2 µs longer was slowed by
//! something else); the rule scales with the step length and with how steady the steps are,
//! so no constant is tuned to one trace.

use crate::diff::diff_windows;
use crate::gpu_time::device_unions;
use crate::intervals::union;
use crate::report::fmt_ns;
use crate::steps::Step;
use serde::Serialize;
use strobe_store::Store;

pub const MIN_STEPS: usize = 5;
pub const DEFAULT_K: f64 = 3.5;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AnomalyKind {
    Outlier,
    Periodic,
}

#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct KernelChange {
    pub name: String,
    pub count_typical: u64,
    pub count_step: u64,
    pub total_typical_ns: i64,
    pub total_step_ns: i64,
}

#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct StepAnomaly {
    /// The rank, in a several-rank report; None for a single trace.
    pub rank: Option<i64>,
    pub step: String,
    pub dur_ns: i64,
    /// The median step duration.
    pub typical_ns: i64,
    /// Modified z-score.
    pub score: f64,
    pub kind: AnomalyKind,
    /// For `periodic`: every how many steps.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub period: Option<usize>,
    /// The step compared against (closest to the median).
    pub typical_step: String,
    pub gpu_idle_ns: i64,
    pub typical_gpu_idle_ns: i64,
    /// The steps' usual variation (the MAD the score divides by): a kernel's time must grow
    /// by at least this to be listed in `kernel_changes`.
    #[serde(default)]
    pub variation_ns: i64,
    pub kernel_changes: Vec<KernelChange>,
    pub evidence: String,
}

fn median(v: &[i64]) -> i64 {
    crate::stats::median(v).unwrap_or(0)
}

/// `a` as the report names rank `rank` (the evidence names the rank).
pub fn with_rank(mut a: StepAnomaly, rank: Option<i64>) -> StepAnomaly {
    a.rank = rank;
    a.evidence = evidence(&a);
    a
}

/// The anomalies of `steps` (sorted by start) of `store`, `rank` as the report names it.
pub fn step_anomalies(store: &Store, steps: &[Step], rank: Option<i64>, k: f64) -> Vec<StepAnomaly> {
    if steps.len() < MIN_STEPS {
        return Vec::new();
    }
    let busy = union(device_unions(store).into_iter().flat_map(|d| d.busy).collect());
    step_anomalies_in(store, steps, rank, k, &busy)
}

/// `step_anomalies` with the store's GPU busy time (the union over its devices) already
/// computed: the report has it, and finding it again was a scan of every GPU span.
pub fn step_anomalies_in(
    store: &Store,
    steps: &[Step],
    rank: Option<i64>,
    k: f64,
    busy: &[(i64, i64)],
) -> Vec<StepAnomaly> {
    if steps.len() < MIN_STEPS {
        return Vec::new();
    }
    let durs: Vec<i64> = steps.iter().map(|s| s.dur_ns).collect();
    let med = median(&durs);
    let dev: Vec<i64> = durs.iter().map(|d| (d - med).abs()).collect();
    let mad = median(&dev).max(med / 100).max(1);
    let z = |d: i64| 0.6745 * (d - med) as f64 / mad as f64;
    let odd: Vec<usize> = (0..steps.len()).filter(|&i| z(durs[i]) >= k).collect();
    if odd.is_empty() {
        return Vec::new();
    }
    let period = periodic(&odd);
    let typical = (0..steps.len()).min_by_key(|&i| ((durs[i] - med).abs(), i)).unwrap_or(0);
    let idle_in = |s: &Step| s.dur_ns - crate::intervals::total_within(busy, s.start_ns, s.end_ns());
    let t = &steps[typical];
    let typical_idle = idle_in(t);
    odd.iter()
        .map(|&i| {
            let s = &steps[i];
            let d = diff_windows(store, (t.start_ns, t.end_ns()), store, (s.start_ns, s.end_ns()));
            let kernel_changes: Vec<KernelChange> = d
                .kernels
                .iter()
                .filter(|r| r.delta_ns > 0 && r.delta_ns >= mad)
                .take(3)
                .map(|r| KernelChange {
                    name: r.name.clone(),
                    count_typical: r.count_a,
                    count_step: r.count_b,
                    total_typical_ns: r.total_a_ns,
                    total_step_ns: r.total_b_ns,
                })
                .collect();
            let mut a = StepAnomaly {
                rank,
                step: s.name.clone(),
                dur_ns: s.dur_ns,
                typical_ns: med,
                score: z(s.dur_ns),
                kind: if period.is_some() { AnomalyKind::Periodic } else { AnomalyKind::Outlier },
                period,
                typical_step: t.name.clone(),
                gpu_idle_ns: idle_in(s),
                typical_gpu_idle_ns: typical_idle,
                variation_ns: mad,
                kernel_changes,
                evidence: String::new(),
            };
            a.evidence = evidence(&a);
            a
        })
        .collect()
}

/// N when the odd steps (indices, ascending, ≥ 3 of them) fall every N ≥ 2 steps.
fn periodic(odd: &[usize]) -> Option<usize> {
    if odd.len() < 3 {
        return None;
    }
    let n = odd[1] - odd[0];
    (n >= 2 && odd.windows(2).all(|w| w[1] - w[0] == n)).then_some(n)
}

fn short(name: &str) -> String {
    if name.chars().count() > 60 {
        name.chars().take(59).chain(['…']).collect()
    } else {
        name.to_string()
    }
}

fn evidence(a: &StepAnomaly) -> String {
    let who = a.rank.map(|r| format!("rank {r} ")).unwrap_or_default();
    let what = match a.period {
        Some(n) => format!("a spike every {n} steps"),
        None => "an outlier".to_string(),
    };
    let ks: Vec<String> = a
        .kernel_changes
        .iter()
        .map(|k| {
            format!(
                "{} {}× {} vs {}× {}",
                short(&k.name),
                k.count_step,
                fmt_ns(k.total_step_ns),
                k.count_typical,
                fmt_ns(k.total_typical_ns)
            )
        })
        .collect();
    format!(
        "{who}{} took {} against a typical {} (score {:.1}, {what}); vs {}: GPU idle {} vs {}{}",
        a.step,
        fmt_ns(a.dur_ns),
        fmt_ns(a.typical_ns),
        a.score,
        a.typical_step,
        fmt_ns(a.gpu_idle_ns),
        fmt_ns(a.typical_gpu_idle_ns),
        if ks.is_empty() {
            format!("; no kernel's time grew by more than the steps' usual variation ({})", fmt_ns(a.variation_ns))
        } else {
            format!("; kernels up: {}", ks.join(", "))
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::steps::StepSource;
    use strobe_model::{LaneKind, SourceFormat, SpanKind, TraceMeta};
    use strobe_store::{SpanInput, StoreBuilder};

    #[test]
    fn evidence_lists_only_kernels_that_grew_past_the_usual_variation() {
        // six 1 ms steps (± 10 µs), step 3 takes 1.5 ms: its `big` kernel ran 400 µs longer,
        // its `small` one 3 µs longer (noise, as in every step)
        let mut b = StoreBuilder::in_memory();
        let gpu = b.lane(LaneKind::GpuStream { device: 0, stream: 7 });
        let (big, small, ck) = (b.intern("big"), b.intern("small"), b.intern("kernel"));
        let durs = [1_000_000, 1_010_000, 990_000, 1_500_000, 1_005_000, 995_000];
        let mut steps = Vec::new();
        let mut t = 0;
        for (i, &d) in durs.iter().enumerate() {
            steps.push(Step { name: format!("step_{i}"), start_ns: t, dur_ns: d, source: StepSource::Nvtx });
            let (big_len, small_len) = if i == 3 { (500_000, 103_000) } else { (100_000, 100_000 + i as i64 * 1000) };
            for (name, start, len) in [(big, t, big_len), (small, t + 600_000, small_len)] {
                let s = SpanInput {
                    lane: gpu,
                    start,
                    end: start + len,
                    name,
                    cat: ck,
                    kind: SpanKind::Kernel,
                    flags: 0,
                    args: b"",
                    correlation: 0,
                    copy_dir: None,
                };
                b.push_span(s).unwrap();
            }
            t += d;
        }
        let store = b.finish(&TraceMeta::new(SourceFormat::Kineto, "t")).unwrap().into_store().unwrap();
        let a = &step_anomalies(&store, &steps, None, DEFAULT_K)[0];
        assert_eq!(a.step, "step_3");
        // median 1 002 500 ns; |dev| sorted 2.5k 2.5k 7.5k 7.5k 12.5k 497.5k → MAD 7 500 ns,
        // under 1 % of the median: 10 025 ns
        assert_eq!(a.variation_ns, 10_025);
        let names: Vec<&str> = a.kernel_changes.iter().map(|k| k.name.as_str()).collect();
        assert_eq!(names, ["big"], "{}", a.evidence);
        assert!(a.evidence.contains("kernels up: big"), "{}", a.evidence);
    }

    #[test]
    fn periods() {
        assert_eq!(periodic(&[2, 5, 8, 11]), Some(3));
        assert_eq!(periodic(&[2, 5, 9]), None);
        assert_eq!(periodic(&[2, 5]), None);
        assert_eq!(periodic(&[3, 4, 5]), None);
    }
}
