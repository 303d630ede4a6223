//! What the panes show about one trace beyond what is drawn straight from the store: the
//! trace's `strobe_analysis::figures::TraceFigures` (the figures `strobe report` prints, found
//! once whoever asks first), plus what only the viewer draws from them (the timeline's bands,
//! the idle gaps at the user's threshold, counter series, the per-op links, the NVTX
//! projection). All of it arrives after the trace is on screen, computed on background
//! threads; panes read without blocking and show what is there.

use crate::background::Later;
use std::sync::Arc;
use strobe_analysis::figures::TraceFigures;
use strobe_analysis::gaps::{largest_of, GapRow};
use strobe_analysis::gpu_time::{gpu_time_of, DeviceUnions, GpuTime};
use strobe_analysis::headline::{headline_of, Headline};
use strobe_analysis::idle::{self, DeviceIdle, IdleGap};
use strobe_analysis::intervals::subtract;
use strobe_analysis::steps::StepRule;
use strobe_store::timing::Phase;
use strobe_store::Store;

/// How many of the longest gaps the Gaps tab lists per trace.
pub const GAPS_LISTED: usize = 200;

/// What every open trace's figures are computed under; the workspace holds the one in force.
#[derive(Clone, Debug)]
pub struct FigureSettings {
    /// How steps are found (View ▸ Steps: a user's pattern, else the built-in rules).
    pub step_rule: StepRule,
    /// Gaps at least this long are marked on the timeline and counted as long.
    pub idle_threshold_ns: i64,
}

impl Default for FigureSettings {
    fn default() -> Self {
        FigureSettings { step_rule: StepRule::default(), idle_threshold_ns: idle::DEFAULT_THRESHOLD_NS }
    }
}

impl FigureSettings {
    /// The step rule as text (None: the built-in rules): what caches of step figures key on.
    pub fn step_pattern(&self) -> Option<&str> {
        self.step_rule.pattern_text()
    }
}

/// Per-device bands for the timeline: comm under compute, comm alone.
#[derive(Clone, Debug, Default)]
pub struct DeviceBands {
    pub device: i64,
    pub overlapped: Vec<(i64, i64)>,
    pub exposed_comm: Vec<(i64, i64)>,
}

/// A time series derived from the trace and drawn as a counter lane (a step function).
#[derive(Clone, Debug, Default)]
pub struct DerivedSeries {
    pub name: String,
    pub ts: Vec<i64>,
    pub vals: Vec<f64>,
}

/// One trace's figures: the analyses' own (`analysis`) and the viewer's extras. The overview
/// (GPU time, idle breakdown, top kernels, memory peaks, steps, NVTX projection) comes first,
/// from a pool a step below the UI's priority, then the rest from the analyses thread. Clones
/// share what is filled.
#[derive(Clone)]
pub struct Derived {
    /// The figures `strobe report` prints, under the workspace's step rule.
    pub analysis: TraceFigures,
    /// GPU busy time per device and the timeline's bands.
    pub activity: Later<Activity>,
    /// The idle breakdown at `idle_threshold_ns`.
    pub idle: Later<IdleFigures>,
    /// The summary strip's figures at `idle_threshold_ns`: over the steps, else the capture
    /// range, else the whole trace (`strobe_analysis::headline`).
    pub headline: Later<Headline>,
    /// The longest gaps at `idle_threshold_ns` with the op that held the host (the Gaps tab).
    pub gaps: Later<Vec<GapRow>>,
    pub idle_threshold_ns: i64,
    /// HTA's queue length per stream and memcpy bandwidth per device, as counter lanes.
    pub series: Later<Vec<DerivedSeries>>,
    /// The per-op figures (`Trace::ops`).
    pub ops: Later<OpFigures>,
    /// CPU ranges projected onto the GPU work they launched, by (device, start).
    pub nvtx_gpu: Later<NvtxGpu>,
    /// Each step's time split into parts, with its critical path (the Steps tab, the
    /// summary strip's losses, the timeline's critical-path outline).
    pub step_figures: Later<crate::step_view::StepFigures>,
}

/// The CPU ranges projected onto the GPU (`strobe_analysis::nvtx_gpu::project`), indexed for
/// drawing: a frame reads the ranges in its window and each device's depth, without a pass
/// over all of them (a long nsys export projects ~10⁵ ranges).
#[derive(Default)]
pub struct NvtxGpu {
    /// Sorted by (device, start).
    pub ranges: Vec<strobe_analysis::nvtx_gpu::ProjectedRange>,
    /// Per range: the latest end among its device's ranges up to it (non-decreasing within
    /// a device), so the first range that can reach a window is a binary search.
    pub max_end: Vec<i64>,
    /// Per device: its deepest row.
    pub depth: Vec<(i64, u32)>,
}

impl NvtxGpu {
    pub fn new(ranges: Vec<strobe_analysis::nvtx_gpu::ProjectedRange>) -> NvtxGpu {
        let mut max_end: Vec<i64> = Vec::with_capacity(ranges.len());
        let mut depth: Vec<(i64, u32)> = Vec::new();
        for (i, p) in ranges.iter().enumerate() {
            let same = i > 0 && ranges[i - 1].device == p.device;
            max_end.push(if same { max_end[i - 1].max(p.end_ns) } else { p.end_ns });
            match depth.last_mut() {
                Some(d) if d.0 == p.device => d.1 = d.1.max(p.depth),
                _ => depth.push((p.device, p.depth)),
            }
        }
        NvtxGpu { ranges, max_end, depth }
    }

    /// Device `device`'s ranges (sorted by start) and their running max ends, and where they
    /// start in `ranges`.
    pub fn of_device(&self, device: i64) -> (usize, &[strobe_analysis::nvtx_gpu::ProjectedRange], &[i64]) {
        let lo = self.ranges.partition_point(|p| p.device < device);
        let hi = self.ranges.partition_point(|p| p.device <= device);
        (lo, &self.ranges[lo..hi], &self.max_end[lo..hi])
    }
}

/// What the GPUs were busy with: per device its busy time and the timeline's bands, from the
/// analyses' device unions.
#[derive(Default)]
pub struct Activity {
    pub gpu: Vec<GpuTime>,
    pub bands: Vec<DeviceBands>,
}

impl Activity {
    pub fn of(unions: &[DeviceUnions]) -> Activity {
        let bands = unions
            .iter()
            .map(|u| DeviceBands {
                device: u.device,
                overlapped: u.overlapped.clone(),
                exposed_comm: subtract(&u.comm, &u.compute),
            })
            .collect();
        Activity { gpu: gpu_time_of(unions), bands }
    }
}

/// The idle breakdown per device at one threshold, and the gaps at least that long (what
/// the timeline marks).
#[derive(Default)]
pub struct IdleFigures {
    pub devices: Vec<DeviceIdle>,
    pub long_gaps: Vec<(i64, Vec<IdleGap>)>,
}

impl IdleFigures {
    pub fn compute(store: &Store, unions: &[DeviceUnions], threshold_ns: i64) -> IdleFigures {
        let devices = idle::idle_breakdown_of(store, unions, threshold_ns);
        let long_gaps = devices
            .iter()
            .map(|d| (d.device, d.gaps.iter().filter(|g| g.end - g.start >= d.threshold_ns).copied().collect()))
            .collect();
        IdleFigures { devices, long_gaps }
    }
}

/// Work per op from the recorded shapes against the device's peaks, MFU per step, and the
/// links between the figures and the timeline. The slowest of a load's analyses (0.3 s on 2
/// cores for a 1 GB trace, most of it reading the ops' recorded shapes): computed after the
/// trace is on screen, not before.
pub struct OpFigures {
    pub efficiency: strobe_analysis::efficiency::Efficiency,
    /// The efficiency figures per kernel name (the kernel table's columns).
    pub kernel_efficiency: std::collections::HashMap<String, strobe_analysis::efficiency::figures::Figures>,
    /// Per op name, its instances' CPU spans, longest GPU time first (a roofline point
    /// selects the first), and per CPU span its op name (a selected span marks its point).
    pub op_spans: std::collections::HashMap<String, Vec<u32>>,
    pub op_of_span: std::collections::HashMap<u32, String>,
}

impl OpFigures {
    /// From the trace's op runs and efficiency (found by `figs` unless there).
    pub fn of(store: &Store, figs: &TraceFigures) -> OpFigures {
        let runs = figs.op_runs(store);
        let efficiency = figs.efficiency(store).clone();
        let kernel_efficiency = efficiency.kernels.iter().map(|k| (k.name.clone(), k.figures.clone())).collect();
        let mut by_op: std::collections::HashMap<String, Vec<(i64, u32)>> = Default::default();
        let mut op_of_span = std::collections::HashMap::new();
        for r in runs.iter().filter(|r| r.work.is_some()) {
            by_op.entry(r.name.clone()).or_default().push((r.gpu_ns, r.span));
            op_of_span.insert(r.span, r.name.clone());
        }
        let op_spans = by_op
            .into_iter()
            .map(|(n, mut v)| {
                v.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
                (n, v.into_iter().map(|x| x.1).collect())
            })
            .collect();
        OpFigures { efficiency, kernel_efficiency, op_spans, op_of_span }
    }
}

impl Derived {
    /// Nothing computed yet (`fill_overview`, `fill_later` compute it).
    pub fn new(settings: &FigureSettings) -> Derived {
        Derived {
            analysis: TraceFigures::new(settings.step_rule.clone(), Default::default()).drawing_queue_points(),
            activity: Later::default(),
            idle: Later::default(),
            headline: Later::default(),
            gaps: Later::default(),
            idle_threshold_ns: settings.idle_threshold_ns,
            series: Later::default(),
            ops: Later::default(),
            nvtx_gpu: Later::default(),
            step_figures: Later::default(),
        }
    }

    /// The same trace's figures under `settings`: what they do not change is kept, computed
    /// or not; the rest is to compute again (`fill_overview`, `fill_later`).
    pub fn under(&self, settings: &FigureSettings) -> Derived {
        let mut d = self.clone();
        if self.analysis.rule().pattern_text() != settings.step_pattern() {
            d.analysis = self.analysis.with_rule(settings.step_rule.clone());
            // MFU per step and the headline's window follow the steps
            d.ops = Later::default();
            d.headline = Later::default();
            d.step_figures = Later::default();
        }
        if self.idle_threshold_ns != settings.idle_threshold_ns {
            d.idle = Later::default();
            d.headline = Later::default();
            d.gaps = Later::default();
            d.idle_threshold_ns = settings.idle_threshold_ns;
        }
        d
    }

    /// Whether these figures are computed under `settings`.
    pub fn is_under(&self, settings: &FigureSettings) -> bool {
        self.idle_threshold_ns == settings.idle_threshold_ns
            && self.analysis.rule().pattern_text() == settings.step_pattern()
    }

    /// Computes the overview's figures not yet there, waiting for those another thread is
    /// computing: what the panes show first, the timeline's rows among them (its bands,
    /// step strip, memory level and NVTX projection), so they arrive together. Two chains
    /// run side by side on the caller's pool; neither waits for a figure of the other.
    pub fn fill_overview(&self, store: &Store) {
        let a = &self.analysis;
        rayon::join(
            || {
                let unions = &a.activity(store).unions;
                self.activity.get_or_init(|| {
                    let _t = Phase::start("ui: gpu time, bands");
                    Activity::of(unions)
                });
                let idle = self.idle.get_or_init(|| {
                    let _t = Phase::start("ui: idle breakdown");
                    IdleFigures::compute(store, unions, self.idle_threshold_ns)
                });
                self.gaps.get_or_init(|| {
                    let _t = Phase::start("ui: largest gaps");
                    largest_of(store, &idle.devices, GAPS_LISTED)
                });
                a.memory_peaks(store);
            },
            || {
                a.kernels(store);
                a.cuda_graphs(store);
                a.steps(store);
                self.nvtx_gpu.get_or_init(|| {
                    let _t = Phase::start("ui: nvtx projection");
                    NvtxGpu::new(strobe_analysis::nvtx_gpu::project(store))
                });
            },
        );
        self.headline.get_or_init(|| {
            let (unions, steps, capture) = (&a.activity(store).unions, a.steps(store), a.capture(store));
            let _t = Phase::start("ui: headline");
            headline_of(store, unions, steps, capture, self.idle_threshold_ns)
        });
    }

    /// Every overview figure not there set to none: an analysis failed.
    fn give_up_overview(&self) {
        self.activity.get_or_init(Activity::default);
        self.idle.get_or_init(IdleFigures::default);
        self.headline.get_or_init(Headline::default);
        self.gaps.get_or_init(Vec::new);
        self.nvtx_gpu.get_or_init(NvtxGpu::default);
        self.analysis.give_up();
    }

    /// Whether the overview's figures are all there.
    pub fn overview_ready(&self) -> bool {
        let a = &self.analysis;
        self.activity.is_ready()
            && self.idle.is_ready()
            && self.headline.is_ready()
            && self.gaps.is_ready()
            && a.kernels_ready().is_some()
            && a.memory_peaks_ready().is_some()
            && a.steps_ready().is_some()
            && self.nvtx_gpu.is_ready()
    }

    /// Whether the steps are there.
    pub fn steps_ready(&self) -> bool {
        self.analysis.steps_ready().is_some()
    }

    /// Whether the kernels are there.
    pub fn kernels_ready(&self) -> bool {
        self.analysis.kernels_ready().is_some()
    }

    /// Computes every figure not yet there, waiting for those another thread is computing:
    /// what blocking opens wait for.
    pub fn fill_all(&self, store: &Store) {
        self.fill_overview(store);
        self.fill_later(store, &|| false);
    }

    /// Whether some figure has not arrived yet.
    pub fn pending(&self) -> bool {
        !(self.overview_ready()
            && self.analysis.step_anomalies_ready().is_some()
            && self.series.is_ready()
            && self.ops.is_ready()
            && self.analysis.op_table_ready().is_some()
            && self.step_figures.is_ready())
    }

    /// Computes the figures after the overview not yet there (the analyses thread runs it
    /// on a clone, which shares what it fills), waiting for one another thread computes.
    /// Once `gone()` says the trace was closed, the figures not begun are left unset.
    fn fill_later(&self, store: &Store, gone: &dyn Fn() -> bool) {
        let a = &self.analysis;
        if gone() {
            return;
        }
        a.step_anomalies(store);
        if gone() {
            return;
        }
        self.series.get_or_init(|| {
            let _t = Phase::start("ui: derived series");
            derived_series(store, a)
        });
        if gone() {
            return;
        }
        self.ops.get_or_init(|| {
            let _t = Phase::start("ui: per-op links");
            OpFigures::of(store, a)
        });
        if gone() {
            return;
        }
        a.op_table(store);
        if gone() {
            return;
        }
        self.step_figures.get_or_init(|| {
            let _t = Phase::start("ui: step attribution");
            // a failing attribution leaves the Steps tab saying so, not the figures after it
            // unset and the tab waiting for ever (the hook printed why)
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| crate::step_view::StepFigures::of(store, a)))
                .unwrap_or_default()
        });
    }
}

fn derived_series(store: &Store, figs: &TraceFigures) -> Vec<DerivedSeries> {
    let mut out = Vec::new();
    for q in figs.queue_lengths(store) {
        out.push(DerivedSeries {
            name: format!("queue length · GPU {} stream {}", q.device, q.stream),
            ts: q.points.iter().map(|p| p.0).collect(),
            vals: q.points.iter().map(|p| p.1 as f64).collect(),
        });
    }
    for b in figs.copy_bandwidth(store) {
        out.push(DerivedSeries {
            name: format!("GB/s · GPU {} {}", b.device, b.name),
            ts: b.points.iter().map(|p| p.0).collect(),
            vals: b.points.iter().map(|p| p.1).collect(),
        });
    }
    out
}

/// Computes `derived` behind the first frame: the overview on the overview pool (it is what
/// a user reads first), then the rest on the analyses thread. A panicking analysis leaves its
/// figures unset (the panes go on without them), not the app down.
pub fn spawn_analyses(derived: &Derived, store: &Arc<Store>) {
    let (d, store) = (derived.clone(), store.clone());
    crate::background::spawn_overview(move || {
        // the trace holds the store too: when only this job does, it was closed (an Open
        // that replaced it) and its figures would only slow the next load
        if Arc::strong_count(&store) == 1 {
            return;
        }
        if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| d.fill_overview(&store))).is_err() {
            // the hook printed why: the figures not there read as none, so the panes stop
            // saying they are being measured (and the app stops repainting for them)
            d.give_up_overview();
        }
        crate::background::spawn("strobe-analyses", move || {
            let gone = || Arc::strong_count(&store) == 1;
            d.fill_later(&store, &gone)
        });
    });
}
