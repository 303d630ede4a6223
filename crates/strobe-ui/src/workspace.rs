//! The open documents (traces, and the snapshot / stats / ncu documents of `documents`) and
//! what the analyses derived from them. Built once per file on the loader thread; panes only
//! read it.

use crate::background::Later;
use std::path::PathBuf;
use std::sync::Arc;
use strobe_analysis::gpu_time::{self, DeviceUnions, GpuTime};
use strobe_analysis::idle::{self, DeviceIdle, IdleGap};
use strobe_analysis::intervals::subtract;
use strobe_analysis::kernels::{self, KernelStat};
use strobe_store::Store;

/// An open trace, for as long as it is open: positions change when a rank is inserted before
/// it, ids never do, so a selection or a fold survives another file opening.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TraceId(pub u32);

/// A span of one open trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SpanRef {
    pub trace: TraceId,
    pub span: u32,
}

/// Per-device bands for the timeline: comm under compute, comm alone, idle gaps.
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

/// Everything the panes show about one trace that is not drawn straight from the store. All
/// of it arrives after the trace is on screen (`Trace::new`), so the first frame waits for
/// no analysis: the overview (GPU time, idle breakdown, top kernels, memory peaks, steps,
/// NVTX projection) comes first, from a pool a step below the UI's priority, then the rest
/// from the analyses thread. Clones share what is filled; panes read without blocking and
/// show what is there.
#[derive(Clone)]
pub struct Derived {
    /// GPU busy time per device and the unions it is measured on.
    pub activity: Later<Activity>,
    /// The idle breakdown at `idle_threshold_ns` (replaced when a user changes it).
    pub idle: Later<IdleFigures>,
    pub idle_threshold_ns: i64,
    pub kernels: Later<Vec<KernelStat>>,
    /// Each GPU's memory water level peaks (from the trace's `[memory]` / nsys counters).
    pub memory: Later<Vec<strobe_analysis::memory_level::MemoryPeak>>,
    /// The iterations (`strobe_analysis::steps`: ProfilerStep, NVTX, a user pattern, or
    /// inferred) and the odd ones among them (the step strip).
    pub steps: Later<Vec<strobe_analysis::steps::Step>>,
    pub step_anomalies: Later<Vec<strobe_analysis::anomalies::StepAnomaly>>,
    /// HTA's queue length per stream and memcpy bandwidth per device, as counter lanes.
    pub series: Later<Vec<DerivedSeries>>,
    /// The per-op figures (`Trace::ops`).
    pub ops: Later<OpFigures>,
    /// CPU ranges projected onto the GPU work they launched, by (device, start).
    pub nvtx_gpu: Later<NvtxGpu>,
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

/// What the GPUs were busy with: per device its busy time, the unions of its compute,
/// communication and copies, and the timeline's bands drawn from them.
#[derive(Default)]
pub struct Activity {
    pub gpu: Vec<GpuTime>,
    pub unions: Vec<DeviceUnions>,
    pub bands: Vec<DeviceBands>,
}

impl Activity {
    pub fn compute(store: &Store) -> Activity {
        // GPU activity is scanned once per load; every figure below and a later idle
        // threshold change (`Trace::set_idle_threshold`) start from these unions
        let unions = gpu_time::device_unions(store);
        let bands = unions
            .iter()
            .map(|u| DeviceBands {
                device: u.device,
                overlapped: u.overlapped.clone(),
                exposed_comm: subtract(&u.comm, &u.compute),
            })
            .collect();
        let gpu = gpu_time::gpu_time_of(&unions);
        Activity { gpu, unions, bands }
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
        let long_gaps = long_gaps(&devices);
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
    pub fn compute(store: &Store) -> OpFigures {
        let runs = strobe_analysis::efficiency::ops::op_runs(store);
        let efficiency = strobe_analysis::efficiency::efficiency_of(store, &runs, Default::default());
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
    pub fn new(idle_threshold_ns: i64) -> Derived {
        Derived {
            activity: Later::default(),
            idle: Later::default(),
            idle_threshold_ns,
            kernels: Later::default(),
            memory: Later::default(),
            steps: Later::default(),
            step_anomalies: Later::default(),
            series: Later::default(),
            ops: Later::default(),
            nvtx_gpu: Later::default(),
        }
    }

    /// Computes the overview's figures not yet there, waiting for those another thread is
    /// computing: what the panes show first, the timeline's rows among them (its bands,
    /// step strip, memory level and NVTX projection), so they arrive together. Two chains
    /// run side by side on the caller's pool; neither waits for a figure of the other.
    pub fn fill_overview(&self, store: &Store) {
        use strobe_store::timing::Phase;
        rayon::join(
            || {
                let activity = self.activity.get_or_init(|| {
                    let _t = Phase::start("ui: gpu activity, unions");
                    Activity::compute(store)
                });
                self.idle.get_or_init(|| {
                    let _t = Phase::start("ui: idle breakdown");
                    IdleFigures::compute(store, &activity.unions, self.idle_threshold_ns)
                });
                self.memory.get_or_init(|| {
                    let _t = Phase::start("ui: memory peaks");
                    strobe_analysis::memory_level::memory_peaks(store)
                });
            },
            || {
                self.kernels.get_or_init(|| {
                    let _t = Phase::start("ui: kernel stats");
                    kernels::kernel_stats(store)
                });
                self.default_steps(store);
                self.nvtx_gpu.get_or_init(|| {
                    let _t = Phase::start("ui: nvtx projection");
                    NvtxGpu::new(strobe_analysis::nvtx_gpu::project(store))
                });
            },
        );
    }

    /// The steps by the built-in rules, found unless there (or set by `set_steps`).
    fn default_steps(&self, store: &Store) -> &[strobe_analysis::steps::Step] {
        self.steps.get_or_init(|| {
            let _t = strobe_store::timing::Phase::start("ui: steps");
            strobe_analysis::steps::find_steps(store, &strobe_analysis::steps::StepRule::default())
        })
    }

    /// Every overview figure not there set to none: an analysis failed.
    fn give_up_overview(&self) {
        self.activity.get_or_init(Activity::default);
        self.idle.get_or_init(IdleFigures::default);
        self.kernels.get_or_init(Vec::new);
        self.memory.get_or_init(Vec::new);
        self.steps.get_or_init(Vec::new);
        self.nvtx_gpu.get_or_init(NvtxGpu::default);
    }

    /// Whether the overview's figures are all there.
    pub fn overview_ready(&self) -> bool {
        self.activity.is_ready()
            && self.idle.is_ready()
            && self.kernels.is_ready()
            && self.memory.is_ready()
            && self.steps.is_ready()
            && self.nvtx_gpu.is_ready()
    }

    /// Computes every figure not yet there, waiting for those another thread is computing:
    /// what blocking opens wait for.
    pub fn fill_all(&self, store: &Store) {
        self.fill_overview(store);
        self.fill_later(store, &|| false);
    }

    /// Whether some figure has not arrived yet.
    pub fn pending(&self) -> bool {
        !(self.overview_ready() && self.step_anomalies.is_ready() && self.series.is_ready() && self.ops.is_ready())
    }

    /// Finds the steps by `rule` (a user's pattern, or the built-in rules) and their
    /// anomalies, on the spot (a user asked).
    pub fn set_steps(&mut self, store: &Store, rule: &strobe_analysis::steps::StepRule) {
        let steps = strobe_analysis::steps::find_steps(store, rule);
        self.step_anomalies = Later::ready(step_anomalies(store, &steps));
        self.steps = Later::ready(steps);
    }

    /// Computes the figures after the overview not yet there (the analyses thread runs it
    /// on a clone, which shares what it fills), waiting for one another thread computes.
    /// Once `gone()` says the trace was closed, the figures not begun are left unset.
    fn fill_later(&self, store: &Store, gone: &dyn Fn() -> bool) {
        use strobe_store::timing::Phase;
        if gone() {
            return;
        }
        let steps = self.default_steps(store);
        self.step_anomalies.get_or_init(|| {
            let _t = Phase::start("ui: step anomalies");
            step_anomalies(store, steps)
        });
        if gone() {
            return;
        }
        self.series.get_or_init(|| {
            let _t = Phase::start("ui: derived series");
            derived_series(store)
        });
        if gone() {
            return;
        }
        self.ops.get_or_init(|| {
            let _t = Phase::start("ui: per-op figures");
            OpFigures::compute(store)
        });
    }
}

fn step_anomalies(
    store: &Store,
    steps: &[strobe_analysis::steps::Step],
) -> Vec<strobe_analysis::anomalies::StepAnomaly> {
    strobe_analysis::anomalies::step_anomalies(store, steps, None, strobe_analysis::anomalies::DEFAULT_K)
}

fn derived_series(store: &Store) -> Vec<DerivedSeries> {
    let mut out = Vec::new();
    for q in strobe_analysis::ranks::queue::queue_length(store) {
        out.push(DerivedSeries {
            name: format!("queue length · GPU {} stream {}", q.device, q.stream),
            ts: q.points.iter().map(|p| p.0).collect(),
            vals: q.points.iter().map(|p| p.1 as f64).collect(),
        });
    }
    for b in strobe_analysis::ranks::memcpy_bandwidth::memcpy_bandwidth(store) {
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
fn spawn_analyses(derived: &Derived, store: &Arc<Store>) {
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

/// "rank N · file" where the rank is known, else the file name.
pub fn trace_label(path: &std::path::Path, rank: Option<i64>) -> String {
    let file = path.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
    match rank {
        Some(r) => format!("rank {r} · {file}"),
        None => file,
    }
}

pub struct Trace {
    /// Given by the workspace when the trace is added (`Workspace::add_trace`).
    pub id: TraceId,
    pub path: PathBuf,
    /// Short name for headers: the rank where the trace says, else the file name.
    pub label: String,
    pub store: Arc<Store>,
    pub derived: Derived,
    /// First start and last end of the recorded activity (`activity_extent`).
    pub t_min: i64,
    pub t_max: i64,
    /// Added to this trace's times on the shared axis (rank alignment; 0 = as recorded).
    pub offset_ns: i64,
    /// Per name id: cached colour (0 = not yet computed).
    pub name_colors: std::cell::RefCell<Vec<u32>>,
}

impl Trace {
    /// A loaded trace, its figures computed behind the first frame (`Derived`), its store
    /// written behind it where it is still to write.
    pub fn new(path: PathBuf, store: Store, idle_threshold_ns: i64) -> Trace {
        let t = Trace::unanalysed(path, store, idle_threshold_ns);
        if t.store.is_pending() {
            // built now, its file still to write (`LoadOptions::write_behind`: a compressed
            // store): cached behind the first frame, at the analyses' low priority
            let store = t.store.clone();
            crate::background::spawn("strobe-cache-write", move || {
                if let Err(e) = store.write_pending() {
                    eprintln!("strobe: could not cache the store: {e}");
                }
            });
        }
        spawn_analyses(&t.derived, &t.store);
        t
    }

    /// A trace whose figures nobody computes until asked (`wait_for_analyses`): the frames
    /// drawn before they arrive, in tests.
    pub fn unanalysed(path: PathBuf, store: Store, idle_threshold_ns: i64) -> Trace {
        let store = Arc::new(store);
        let (t_min, t_max) = activity_extent(&store);
        let label = trace_label(&path, store.meta.distributed.as_ref().and_then(|d| d.rank));
        let n = store.string_count();
        Trace {
            id: TraceId::default(),
            path,
            label,
            store,
            derived: Derived::new(idle_threshold_ns),
            t_min,
            t_max,
            offset_ns: 0,
            name_colors: std::cell::RefCell::new(vec![0; n]),
        }
    }

    /// The per-op figures, once computed (None for the first moments after a load).
    pub fn ops(&self) -> Option<&OpFigures> {
        self.derived.ops.get()
    }

    /// The per-op figures, waiting for (or doing) the computation: tests and headless tools.
    pub fn ops_blocking(&self) -> &OpFigures {
        self.derived.ops.get_or_init(|| OpFigures::compute(&self.store))
    }

    /// Every figure the analyses thread fills, waiting for (or doing) what is not there.
    pub fn wait_for_analyses(&self) {
        self.derived.fill_all(&self.store);
    }

    /// GPU busy time per device (none until the overview arrives).
    pub fn gpu(&self) -> &[GpuTime] {
        self.derived.activity.get().map(|a| a.gpu.as_slice()).unwrap_or(&[])
    }

    /// The devices' compute / communication / copy unions (none until the overview arrives).
    pub fn unions(&self) -> &[DeviceUnions] {
        self.derived.activity.get().map(|a| a.unions.as_slice()).unwrap_or(&[])
    }

    /// The timeline's overlap bands per device (none until the overview arrives).
    pub fn bands(&self) -> &[DeviceBands] {
        self.derived.activity.get().map(|a| a.bands.as_slice()).unwrap_or(&[])
    }

    /// The idle breakdown per device (none until the overview arrives).
    pub fn idle(&self) -> &[DeviceIdle] {
        self.derived.idle.get().map(|i| i.devices.as_slice()).unwrap_or(&[])
    }

    /// The kernels by total time (none until the overview arrives).
    pub fn kernels(&self) -> &[KernelStat] {
        self.derived.kernels.slice()
    }

    /// Each GPU's memory water level peak (none until the overview arrives).
    pub fn memory_peaks(&self) -> &[strobe_analysis::memory_level::MemoryPeak] {
        self.derived.memory.slice()
    }

    /// The iterations (none until the overview arrives).
    pub fn steps(&self) -> &[strobe_analysis::steps::Step] {
        self.derived.steps.slice()
    }

    /// The derived counter series (none until they arrive).
    pub fn series(&self) -> &[DerivedSeries] {
        self.derived.series.slice()
    }

    /// The CPU ranges projected onto the GPU (none until they arrive).
    pub fn nvtx_gpu(&self) -> &[strobe_analysis::nvtx_gpu::ProjectedRange] {
        self.derived.nvtx_gpu.get().map(|n| n.ranges.as_slice()).unwrap_or(&[])
    }

    /// The same, indexed for drawing (none until they arrive).
    pub fn nvtx_gpu_index(&self) -> Option<&NvtxGpu> {
        self.derived.nvtx_gpu.get()
    }

    /// The odd steps (none until they arrive).
    pub fn step_anomalies(&self) -> &[strobe_analysis::anomalies::StepAnomaly] {
        self.derived.step_anomalies.slice()
    }

    /// The idle breakdown again at threshold `ns`, on the spot (a user asked); waits for
    /// the unions when they are still being computed.
    pub fn set_idle_threshold(&mut self, ns: i64) {
        let store = &self.store;
        let activity = self.derived.activity.get_or_init(|| Activity::compute(store));
        self.derived.idle = Later::ready(IdleFigures::compute(store, &activity.unions, ns));
        self.derived.idle_threshold_ns = ns;
    }
}

/// First start and last end of what the trace recorded, leaving out the profiler's own
/// pseudo processes (a "Record Window End" instant or the session span can sit far past the
/// last kernel): what Fit shows and zoom is bounded by. Everything when nothing else is there.
fn activity_extent(store: &Store) -> (i64, i64) {
    let extent = |skip_profiler: bool| {
        let (mut a, mut b) = (i64::MAX, i64::MIN);
        for (li, d) in store.lane_index().iter().zip(&store.lanes) {
            let pseudo = match &d.kind {
                strobe_model::LaneKind::CpuThread { pid, .. } => strobe_model::profiler_pseudo_process(pid).is_some(),
                _ => false,
            };
            if li.member_end > li.member_begin && !(skip_profiler && pseudo) {
                a = a.min(li.min_start);
                b = b.max(li.max_end);
            }
        }
        (a <= b).then_some((a, b))
    };
    extent(true).or_else(|| extent(false)).unwrap_or((0, 1))
}

fn long_gaps(idle: &[DeviceIdle]) -> Vec<(i64, Vec<IdleGap>)> {
    idle.iter()
        .map(|d| (d.device, d.gaps.iter().filter(|g| g.end - g.start >= d.threshold_ns).copied().collect()))
        .collect()
}

/// Every open document: the traces (in rank order) and the snapshot, memory_stats() dump and
/// Nsight Compute report that have panes of their own (one of each; opening another replaces it).
#[derive(Default)]
pub struct Workspace {
    /// In rank order (`add_trace`); refer to one by its `TraceId`, not its position.
    pub traces: Vec<Trace>,
    /// Bumped whenever a document opens or closes, or a trace's clock offset or label
    /// changes: what panes derived from the workspace is stale when it moved.
    pub generation: u64,
    next_id: u32,
    pub memory: Option<crate::documents::MemoryDoc>,
    /// `torch.cuda.memory_stats()` shown beside the snapshot, in whichever order they open.
    pub memory_stats: Option<strobe_analysis::memory::StatsReport>,
    pub ncu: Option<crate::documents::NcuDoc>,
    /// The pipeline the traces form, when they do (`pipeline::PipelinePane` finds it): the
    /// timeline stacks the ranks in its stage order and draws its microbatches and bubbles.
    pub pipeline: Option<std::sync::Arc<crate::pipeline::PipelineView>>,
    /// A folder of rank summaries (`strobe summarize`): the ranks pane merges them, the
    /// ranks' traces open one by one on demand.
    pub summaries: Option<PathBuf>,
}

impl Workspace {
    /// Time range covering every open trace (absolute ns).
    pub fn extent(&self) -> Option<(i64, i64)> {
        let a = self.traces.iter().map(|t| t.to_shared(t.t_min)).min()?;
        let b = self.traces.iter().map(|t| t.to_shared(t.t_max)).max()?;
        Some((a, b.max(a + 1)))
    }

    /// What the steps of every trace cover on the shared axis: the window the viewer opens
    /// on (the iterations, not the CUDA-init prologue), when any trace has steps.
    pub fn steps_extent(&self) -> Option<(i64, i64)> {
        let spans = self
            .traces
            .iter()
            .flat_map(|t| t.steps().iter().map(move |s| (t.to_shared(s.start_ns), t.to_shared(s.start_ns + s.dur_ns))));
        spans.fold(None, |acc: Option<(i64, i64)>, (a, b)| Some(acc.map_or((a, b), |(x, y)| (x.min(a), y.max(b)))))
    }

    /// The start of the shared axis: the ruler, Details, marks and areas read times from it.
    pub fn origin(&self) -> i64 {
        self.extent().map(|e| e.0).unwrap_or(0)
    }

    /// The positions in `traces` in the order the timeline stacks them: a pipeline's ranks
    /// in stage order first, then the rest in rank order.
    pub fn display_order(&self) -> Vec<usize> {
        let mut out: Vec<usize> = match &self.pipeline {
            Some(p) => p.traces.iter().filter_map(|&id| self.index_of(id)).collect(),
            None => Vec::new(),
        };
        for i in 0..self.traces.len() {
            if !out.contains(&i) {
                out.push(i);
            }
        }
        out
    }

    /// The pipeline stage of trace `id`, when it is one.
    pub fn stage_of(&self, id: TraceId) -> Option<usize> {
        self.pipeline.as_ref()?.rank_of(id).map(|r| r.stage)
    }

    /// Where trace `id` is now in `traces`.
    pub fn index_of(&self, id: TraceId) -> Option<usize> {
        self.traces.iter().position(|t| t.id == id)
    }

    pub fn trace(&self, id: TraceId) -> Option<&Trace> {
        self.traces.iter().find(|t| t.id == id)
    }

    pub fn trace_mut(&mut self, id: TraceId) -> Option<&mut Trace> {
        self.generation += 1;
        self.traces.iter_mut().find(|t| t.id == id)
    }

    pub fn store(&self, id: TraceId) -> Option<&Store> {
        self.trace(id).map(|t| &*t.store)
    }

    /// Adds a trace in rank order (whatever order the loads finish in) and gives it its id.
    pub fn add_trace(&mut self, mut t: Trace) -> TraceId {
        let key = |t: &Trace| {
            let p = t.path.to_string_lossy();
            let rank = t
                .store
                .meta
                .distributed
                .as_ref()
                .and_then(|d| d.rank)
                .or_else(|| strobe_analysis::ranks::identity::rank_from_file_name(&p));
            (rank.unwrap_or(i64::MAX), p.into_owned())
        };
        self.next_id += 1;
        t.id = TraceId(self.next_id);
        let id = t.id;
        let k = key(&t);
        let at = self.traces.partition_point(|x| key(x) <= k);
        self.traces.insert(at, t);
        self.generation += 1;
        id
    }

    /// Closes every trace (the snapshot and ncu documents stay).
    pub fn close_traces(&mut self) {
        self.traces.clear();
        self.pipeline = None;
        self.generation += 1;
    }
}
