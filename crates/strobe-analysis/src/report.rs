//! `strobe report`: the answers to "is the GPU idle, what is it running, does comm overlap"
//! for one trace, as data (JSON) and as text.

use crate::anomalies::StepAnomaly;
use crate::efficiency::{Efficiency, PeakOverride};
use crate::figures::TraceFigures;
use crate::gaps::GapRow;
use crate::gpu_time::GpuTime;
use crate::headline::{Covers, Headline};
use crate::kernels::KernelStat;
use crate::steps::{steps_window, CaptureRange, Step, StepRule};
use crate::streams::StreamStat;
use serde::Serialize;
use std::fmt::Write;
use strobe_model::LoadSummary;
use strobe_store::Store;

#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub format: String,
    pub source: String,
    pub events: u64,
    pub gpus: Vec<GpuTime>,
    pub top_kernels: Vec<KernelStat>,
    /// CUDA graphs, replays of one graph together, by GPU time (`cuda_graphs`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub cuda_graphs: Vec<crate::cuda_graphs::CudaGraph>,
    pub streams: Vec<StreamStat>,
    pub steps: Vec<ReportStep>,
    /// Which window the figures cover: the `gpus` figures always cover the whole trace; where
    /// there are steps, `in_steps` gives the same per device over the steps only.
    pub window: Window,
    pub in_steps: Vec<StepsGpuTime>,
    pub step_anomalies: Vec<StepAnomaly>,
    /// HTA's idle breakdown per device at the default 10 µs threshold (the timeline's bands).
    pub idle_breakdown: Vec<IdleSplit>,
    /// Per-op and per-kernel efficiency from the recorded shapes, MFU per step (docs/efficiency.md).
    pub efficiency: Efficiency,
    /// torch.profiler's `key_averages()` per event name, by device total (every row; the text
    /// lists the top host rows).
    pub ops: Vec<crate::op_table::OpRow>,
    /// The headline figures: over the steps, else the capture range, else the whole trace
    /// (`headline::Covers`).
    pub headline: Headline,
    /// The longest idle gaps (at least the default threshold), longest first, with their
    /// cause and the op that held the launching thread (`gaps`).
    pub largest_gaps: Vec<GapRow>,
    /// Each step's time on its GPU split into parts that add up to it (docs/attribution.md).
    /// None (left out) in a rank's report within the several-rank report, whose own
    /// `step_breakdown` holds every rank's steps, with what the other ranks tell of them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step_breakdown: Option<Vec<crate::attribution::StepBreakdown>>,
    pub load: LoadSummary,
    /// Each step's critical path (docs/critical_path.md), or why it has none.
    pub critical_paths: Vec<crate::attribution::critical_path::CriticalPathEntry>,
    /// A profile_memory trace's `[memory]` instants: each GPU's allocated peak by category and
    /// source line (docs/memory.md); empty for other traces.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub memory_breakdown: Vec<crate::memory::profile::ProfileBreakdown>,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Window {
    /// `"trace"` (no steps: the whole trace) or `"steps"` (first step start to last step end).
    pub covers: String,
    pub start_ns: Option<i64>,
    pub end_ns: Option<i64>,
    /// The step source (`profiler_step`, `nvtx`, `annotation`, `inferred`), where there are steps.
    pub steps_from: Option<String>,
    /// The `cudaProfilerStart`/`Stop` range, where the trace records one (steps outside it are
    /// left out).
    pub capture: Option<CaptureRange>,
}

/// A step with the GPU's busy and idle time inside it (over every device: time no device
/// was busy is idle), whatever the format the steps came from.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ReportStep {
    #[serde(flatten)]
    pub step: Step,
    pub gpu_busy_ns: i64,
    pub gpu_idle_ns: i64,
}

impl std::ops::Deref for ReportStep {
    type Target = Step;
    fn deref(&self) -> &Step {
        &self.step
    }
}

/// One device's busy/idle over the steps window (the same definitions as `gpus`, clipped).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct StepsGpuTime {
    pub device: i64,
    pub window_ns: i64,
    pub busy_ns: i64,
    pub idle_ns: i64,
    pub idle_pct: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct IdleSplit {
    pub device: i64,
    pub threshold_ns: i64,
    pub idle_ns: i64,
    pub host_wait_ns: i64,
    pub kernel_wait_ns: i64,
    pub other_ns: i64,
    pub gaps_over_threshold: u64,
}

pub fn report(store: &Store, top: usize) -> Report {
    report_with(store, top, &StepRule::default(), PeakOverride::default())
}

/// The report with steps found by `rule` (`--steps REGEX`) and the device's ceilings
/// overridden by `peaks` (`--peak-tflops`, `--peak-gbps`).
pub fn report_with(store: &Store, top: usize, rule: &StepRule, peaks: PeakOverride) -> Report {
    report_from(store, &TraceFigures::new(rule.clone(), peaks), top)
}

/// The report from the trace's figures, computing those not there yet.
pub fn report_from(store: &Store, figs: &TraceFigures, top: usize) -> Report {
    report_of(store, figs, top, Attribution::Both)
}

/// A rank's report within the several-rank report: its critical paths, but not its step
/// breakdown, which the several-rank report lists for every rank (`ranks::report`).
pub fn rank_report_from(store: &Store, figs: &TraceFigures, top: usize) -> Report {
    report_of(store, figs, top, Attribution::PathsOnly)
}

/// What of the steps' attribution a report carries.
#[derive(Clone, Copy, PartialEq)]
enum Attribution {
    /// The step breakdown and the critical paths.
    Both,
    /// The critical paths alone (`step_breakdown` left out).
    PathsOnly,
    /// Neither (both lists empty).
    Neither,
}

/// The report without the step attribution and the critical paths (their lists left empty):
/// the baseline `strobe bench report` measures their cost against.
pub fn report_without_attribution(store: &Store, top: usize, rule: &StepRule, peaks: PeakOverride) -> Report {
    report_of(store, &TraceFigures::new(rule.clone(), peaks), top, Attribution::Neither)
}

fn report_of(store: &Store, figs: &TraceFigures, top: usize, attribution: Attribution) -> Report {
    // the steps and the one scan of the GPU lanes (for busy/idle/overlap, the steps' window
    // and the idle breakdown) are independent: found side by side
    rayon::join(|| figs.steps(store), || figs.activity(store));
    let steps = figs.steps(store).to_vec();
    let report_steps = report_steps(store, figs);
    let unions = &figs.activity(store).unions;
    let span = steps_window(&steps);
    let in_steps = match span {
        Some((a, b)) => unions
            .iter()
            .map(|d| {
                let busy = crate::intervals::total_within(&d.busy, a, b);
                let w = b - a;
                StepsGpuTime {
                    device: d.device,
                    window_ns: w,
                    busy_ns: busy,
                    idle_ns: w - busy,
                    idle_pct: if w > 0 { (w - busy) as f64 * 100.0 / w as f64 } else { 0.0 },
                }
            })
            .collect(),
        None => Vec::new(),
    };
    let window = Window {
        covers: if span.is_some() { "steps" } else { "trace" }.to_string(),
        start_ns: span.map(|s| s.0),
        end_ns: span.map(|s| s.1),
        steps_from: steps.first().map(|s| s.source.as_str().to_string()),
        capture: figs.capture(store).cloned(),
    };
    // the analyses are independent scans of the store: on the cold path of a several-rank
    // report the last rank's report is alone on the machine, so it takes every core there is
    use rayon::join;
    join(
        || join(|| figs.step_anomalies(store), || figs.kernels(store)),
        || {
            join(
                || join(|| figs.memory_peaks(store), || figs.streams(store)),
                || {
                    join(
                        || join(|| figs.idle_totals(store), || figs.largest_gaps(store)),
                        // the attribution finds the op runs, keeps them and has the
                        // efficiency figures read them: one scan for both
                        || {
                            join(
                                || match attribution {
                                    Attribution::Both => {
                                        figs.step_breakdown(store);
                                    }
                                    Attribution::PathsOnly => {
                                        rayon::join(|| figs.step_attributions(store), || figs.critical_paths(store));
                                    }
                                    Attribution::Neither => {
                                        figs.efficiency(store);
                                    }
                                },
                                || figs.op_table(store),
                            )
                        },
                    )
                },
            )
        },
    );
    let mut top_kernels = figs.kernels(store).to_vec();
    top_kernels.truncate(top);
    let mut gpus = figs.gpus(store);
    crate::gpu_metrics::kernels::fill(store, &mut gpus, figs.efficiency(store));
    Report {
        format: store.meta.format.as_str().to_string(),
        source: store.meta.source.clone(),
        events: store.meta.load.events,
        gpus,
        top_kernels,
        cuda_graphs: figs.cuda_graphs(store).graphs.clone(),
        streams: figs.streams(store).to_vec(),
        steps: report_steps,
        window,
        in_steps,
        step_anomalies: figs.step_anomalies(store).to_vec(),
        idle_breakdown: idle_splits(store, figs),
        efficiency: figs.efficiency(store).clone(),
        ops: figs.op_table(store).by_name.clone(),
        headline: figs.headline(store).clone(),
        largest_gaps: figs.largest_gaps(store).to_vec(),
        step_breakdown: match attribution {
            Attribution::Both => Some(figs.step_breakdown(store).to_vec()),
            Attribution::PathsOnly => None,
            Attribution::Neither => Some(Vec::new()),
        },
        load: store.meta.load.clone(),
        critical_paths: match attribution {
            Attribution::Both | Attribution::PathsOnly => {
                crate::attribution::critical_path::report_entries(store, figs)
            }
            Attribution::Neither => Vec::new(),
        },
        memory_breakdown: if figs.memory_peaks(store).is_empty() {
            Vec::new()
        } else {
            crate::memory::profile::profile_breakdowns(store)
        },
    }
}

/// The report's `steps`: each step with the GPU's busy and idle time inside it.
pub fn report_steps(store: &Store, figs: &TraceFigures) -> Vec<ReportStep> {
    let busy = figs.activity(store).busy();
    figs.steps(store)
        .iter()
        .map(|s| {
            let b = crate::intervals::total_within(busy, s.start_ns, s.end_ns());
            ReportStep { step: s.clone(), gpu_busy_ns: b, gpu_idle_ns: s.dur_ns - b }
        })
        .collect()
}

/// The report's `idle_breakdown`: each device's idle time split by cause.
pub fn idle_splits(store: &Store, figs: &TraceFigures) -> Vec<IdleSplit> {
    figs.idle_totals(store)
        .iter()
        .map(|d| IdleSplit {
            device: d.device,
            threshold_ns: d.threshold_ns,
            idle_ns: d.idle_ns,
            host_wait_ns: d.host_wait_ns,
            kernel_wait_ns: d.kernel_wait_ns,
            other_ns: d.other_ns,
            gaps_over_threshold: d.long_gaps,
        })
        .collect()
}

/// Human-friendly duration: ns, µs, ms or s with 3 significant decimals.
pub fn fmt_ns(ns: i64) -> String {
    let a = ns.unsigned_abs() as f64;
    let s = if a < 1e3 {
        format!("{ns} ns")
    } else if a < 1e6 {
        format!("{:.3} µs", ns as f64 / 1e3)
    } else if a < 1e9 {
        format!("{:.3} ms", ns as f64 / 1e6)
    } else {
        format!("{:.3} s", ns as f64 / 1e9)
    };
    s
}

pub fn to_text(r: &Report) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "{} ({}) — {} events", r.source, r.format, r.events);
    if let Some(t) = &r.load.truncated {
        let _ = writeln!(o, "WARNING: {} — the figures cover what was read", t.message());
    }
    if r.gpus.is_empty() {
        let _ = writeln!(o, "\nNo GPU activity in this trace.");
    }
    write_headline(&mut o, &r.headline);
    let whole = if r.headline.covers == Covers::Trace { "" } else { " over the whole trace" };
    for g in &r.gpus {
        let _ = writeln!(o, "\nGPU {}{whole}: window {}", g.device, fmt_ns(g.window_ns));
        let _ =
            writeln!(o, "  busy    {:>12}   idle {:>12} ({:.1}%)", fmt_ns(g.busy_ns), fmt_ns(g.idle_ns), g.idle_pct);
        let _ = writeln!(
            o,
            "  compute {:>12}   comm {:>12}   memory {:>12}",
            fmt_ns(g.compute_ns),
            fmt_ns(g.comm_ns),
            fmt_ns(g.memory_ns)
        );
        let _ = writeln!(o, "  comm under compute {} ({:.1}% of comm)", fmt_ns(g.comm_overlapped_ns), g.overlap_pct);
        let _ = writeln!(o, "  {} kernels, {} memcpy, {} memset", g.kernels, g.memcpy, g.memset);
        if let Some(b) = r.idle_breakdown.iter().find(|b| b.device == g.device) {
            let _ = writeln!(
                o,
                "  idle: host wait {}, kernel wait {}, other {} ({} gaps ≥ {})",
                fmt_ns(b.host_wait_ns),
                fmt_ns(b.kernel_wait_ns),
                fmt_ns(b.other_ns),
                b.gaps_over_threshold,
                fmt_ns(b.threshold_ns)
            );
        }
        crate::gpu_metrics::text::gpu_lines(&mut o, g);
        if let Some(m) = &g.memory {
            let size = |b: Option<u64>| b.map_or("–".to_string(), crate::memory::bytes);
            let _ = writeln!(
                o,
                "  memory: peak allocated {} at {} from start, peak reserved {} ({} samples)",
                size(m.peak_allocated_bytes),
                fmt_ns(m.at_ns - g.start_ns),
                size(m.peak_reserved_bytes),
                m.samples
            );
        }
    }
    crate::cuda_graphs::write_text(&mut o, &r.cuda_graphs, 10);
    if !r.top_kernels.is_empty() {
        let _ = writeln!(o, "\nTop kernels by total time:");
        let _ =
            writeln!(o, "  {:>6} {:>12} {:>12} {:>12} {:>12} {:>6}  name", "count", "total", "mean", "min", "max", "%");
        for k in &r.top_kernels {
            let name: String = if k.name.chars().count() > 90 {
                k.name.chars().take(89).chain(['…']).collect()
            } else {
                k.name.clone()
            };
            let _ = writeln!(
                o,
                "  {:>6} {:>12} {:>12} {:>12} {:>12} {:>5.1}%  {}",
                k.count,
                fmt_ns(k.total_ns),
                fmt_ns(k.mean_ns),
                fmt_ns(k.min_ns),
                fmt_ns(k.max_ns),
                k.pct_kernel_time,
                name
            );
        }
    }
    if !r.streams.is_empty() {
        let _ = writeln!(o, "\nStreams:");
        for s in &r.streams {
            let _ = writeln!(
                o,
                "  GPU {} · stream {:<6} {:>7} kernels   busy {}",
                s.device,
                s.stream,
                s.kernels,
                fmt_ns(s.busy_ns)
            );
        }
    }
    write_gaps(&mut o, &r.largest_gaps, r.gpus.iter().map(|g| g.start_ns).min().unwrap_or(0));
    if let Some(c) = &r.window.capture {
        let end = if c.end_ns == i64::MAX { "the end of the trace".to_string() } else { c.end_ns.to_string() };
        let _ =
            writeln!(o, "\nCapture range (cudaProfilerStart/Stop): {} to {end}; steps outside it left out", c.start_ns);
    }
    if r.steps.is_empty() {
        let _ = writeln!(o, "\nSteps: none found (the figures above cover the whole trace)");
    } else {
        let from = r.window.steps_from.as_deref().unwrap_or("-");
        let _ = writeln!(o, "\nSteps ({} from {from}):", r.steps.len());
        let gpu = !r.gpus.is_empty();
        for s in &r.steps {
            if gpu {
                let _ = writeln!(o, "  {:<20} {:>12}   GPU idle {}", s.name, fmt_ns(s.dur_ns), fmt_ns(s.gpu_idle_ns));
            } else {
                let _ = writeln!(o, "  {:<20} {}", s.name, fmt_ns(s.dur_ns));
            }
        }
        for g in &r.in_steps {
            let _ = writeln!(
                o,
                "  GPU {} over the steps only ({}): busy {} idle {} ({:.1}%); the GPU figures above cover the whole trace",
                g.device,
                fmt_ns(g.window_ns),
                fmt_ns(g.busy_ns),
                fmt_ns(g.idle_ns),
                g.idle_pct
            );
        }
    }
    if !r.step_anomalies.is_empty() {
        let _ = writeln!(o, "\nStep anomalies (median + MAD):");
        for a in &r.step_anomalies {
            let _ = writeln!(o, "  {}", a.evidence);
        }
    }
    crate::attribution::text::write(&mut o, r.step_breakdown.as_deref().unwrap_or_default());
    crate::attribution::critical_path::text::write(&mut o, &r.critical_paths);
    for m in &r.memory_breakdown {
        let _ = writeln!(o, "\nGPU {} memory ([memory] events: {}, {} inside an op):", m.device, m.events, m.with_op);
        crate::memory::breakdown_text(&mut o, &m.peak_breakdown);
    }
    crate::efficiency::text::write(&mut o, &r.efficiency);
    crate::op_table::text::write(&mut o, &r.ops, 20);
    let _ = writeln!(o, "\nLoaded: {} events", r.load.events);
    let phases: Vec<String> = r.load.by_phase.iter().map(|(k, v)| format!("{k}: {v}")).collect();
    let _ = writeln!(o, "  by phase: {}", phases.join(", "));
    if !r.load.skipped.is_empty() {
        let sk: Vec<String> = r.load.skipped.iter().map(|(k, v)| format!("{k}: {v}")).collect();
        let _ = writeln!(o, "  skipped: {}", sk.join(", "));
    }
    for n in &r.load.notes {
        let _ = writeln!(o, "  note: {n}");
    }
    if let Some(t) = &r.load.truncated {
        let _ = writeln!(o, "  WARNING: {}", t.message());
    }
    o
}

/// The headline lines: each GPU's idle, its breakdown and comm overlap over the window the
/// headline covers, which they name.
fn write_headline(o: &mut String, h: &Headline) {
    if h.devices.is_empty() {
        return;
    }
    let _ = writeln!(o, "\nHeadline ({}):", h.scope_text());
    for d in &h.devices {
        let _ = writeln!(
            o,
            "  GPU {}: busy {} idle {} ({:.1}%) · host wait {} ({:.0}%) · kernel wait {} ({:.0}%) · other {} ({:.0}%) · comm overlap {:.1}%",
            d.device,
            fmt_ns(d.busy_ns),
            fmt_ns(d.idle_ns),
            d.idle_pct,
            fmt_ns(d.host_wait_ns),
            d.pct_of_idle(d.host_wait_ns),
            fmt_ns(d.kernel_wait_ns),
            d.pct_of_idle(d.kernel_wait_ns),
            fmt_ns(d.other_ns),
            d.pct_of_idle(d.other_ns),
            d.overlap_pct
        );
    }
}

/// The largest gaps, their start from `t0` (the first GPU operation).
fn write_gaps(o: &mut String, gaps: &[GapRow], t0: i64) {
    if gaps.is_empty() {
        return;
    }
    let _ = writeln!(
        o,
        "\nLargest idle gaps (≥ {}; start from the first GPU operation; the op that held the launching thread):",
        fmt_ns(crate::idle::DEFAULT_THRESHOLD_NS)
    );
    let _ = writeln!(o, "  {:>5} {:>12} {:>12}  {:<11}  held by", "GPU", "start", "length", "cause");
    for g in gaps {
        let held = g.held_by_name.as_deref().map_or("–".to_string(), |n| {
            if n.chars().count() > 70 {
                n.chars().take(69).chain(['…']).collect()
            } else {
                n.to_string()
            }
        });
        let _ = writeln!(
            o,
            "  {:>5} {:>12} {:>12}  {:<11}  {held}",
            g.device,
            fmt_ns(g.start_ns - t0),
            fmt_ns(g.len_ns),
            g.cause.label()
        );
    }
}
