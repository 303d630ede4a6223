//! The open documents (traces, and the snapshot / stats / ncu documents of `documents`) and
//! what the analyses derived from them. Built once per file on the loader thread; panes only
//! read it.

use crate::figures::{spawn_analyses, Derived};
pub use crate::figures::{DerivedSeries, DeviceBands, FigureSettings, NvtxGpu, OpFigures};
use std::path::PathBuf;
use std::sync::Arc;
use strobe_analysis::gpu_time::{DeviceUnions, GpuTime};
use strobe_analysis::idle::DeviceIdle;
use strobe_analysis::kernels::KernelStat;
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
    /// A loaded trace, its figures computed under `settings` behind the first frame
    /// (`Derived`), its store written behind it where it is still to write.
    pub fn new(path: PathBuf, store: Store, settings: &FigureSettings) -> Trace {
        let t = Trace::unanalysed(path, store, settings);
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
    pub fn unanalysed(path: PathBuf, store: Store, settings: &FigureSettings) -> Trace {
        let store = Arc::new(store);
        let (t_min, t_max) = activity_extent(&store);
        let label = trace_label(&path, store.meta.distributed.as_ref().and_then(|d| d.rank));
        let n = store.string_count();
        Trace {
            id: TraceId::default(),
            path,
            label,
            store,
            derived: Derived::new(settings),
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
        self.derived.ops.get_or_init(|| OpFigures::of(&self.store, &self.derived.analysis))
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
        self.derived.analysis.activity_ready().map(|a| a.unions.as_slice()).unwrap_or(&[])
    }

    /// The timeline's overlap bands per device (none until the overview arrives).
    pub fn bands(&self) -> &[DeviceBands] {
        self.derived.activity.get().map(|a| a.bands.as_slice()).unwrap_or(&[])
    }

    /// The idle breakdown per device (none until the overview arrives).
    pub fn idle(&self) -> &[DeviceIdle] {
        self.derived.idle.get().map(|i| i.devices.as_slice()).unwrap_or(&[])
    }

    /// The summary strip's figures (None until the overview arrives).
    pub fn headline(&self) -> Option<&strobe_analysis::headline::Headline> {
        self.derived.headline.get()
    }

    /// The longest idle gaps at the user's threshold, longest first (none until the overview
    /// arrives).
    pub fn largest_gaps(&self) -> &[strobe_analysis::gaps::GapRow] {
        self.derived.gaps.slice()
    }

    /// The kernels by total time (none until the overview arrives).
    pub fn kernels(&self) -> &[KernelStat] {
        self.derived.analysis.kernels_ready().unwrap_or(&[])
    }

    /// The CUDA graphs (None until they arrive).
    pub fn cuda_graphs(&self) -> Option<&strobe_analysis::cuda_graphs::CudaGraphs> {
        self.derived.analysis.cuda_graphs_ready()
    }

    /// Each GPU's memory water level peak (none until the overview arrives).
    pub fn memory_peaks(&self) -> &[strobe_analysis::memory_level::MemoryPeak] {
        self.derived.analysis.memory_peaks_ready().unwrap_or(&[])
    }

    /// The iterations (none until the overview arrives).
    pub fn steps(&self) -> &[strobe_analysis::steps::Step] {
        self.derived.analysis.steps_ready().unwrap_or(&[])
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

    /// Each step's time split into parts, with its critical path (None until they arrive).
    pub fn step_figures(&self) -> Option<&crate::step_view::StepFigures> {
        self.derived.step_figures.get()
    }

    /// The odd steps (none until they arrive).
    pub fn step_anomalies(&self) -> &[strobe_analysis::anomalies::StepAnomaly] {
        self.derived.analysis.step_anomalies_ready().unwrap_or(&[])
    }

    /// The figures under `settings` from now on: what they change is computed again behind
    /// the frames (nothing when the figures are already under them).
    pub fn set_figure_settings(&mut self, settings: &FigureSettings) {
        if !self.derived.is_under(settings) {
            self.derived = self.derived.under(settings);
            spawn_analyses(&self.derived, &self.store);
        }
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
    /// The snapshot open before `memory`, kept so the memory pane can compare the two.
    pub memory_before: Option<crate::documents::MemoryDoc>,
    /// `torch.cuda.memory_stats()` shown beside the snapshot, in whichever order they open.
    pub memory_stats: Option<strobe_analysis::memory::StatsReport>,
    pub ncu: Option<crate::documents::NcuDoc>,
    /// Flight-recorder dumps, one per rank in rank order (a second dump of a rank replaces the first).
    pub flight_recorder: Vec<strobe_model::flight_recorder::FrDump>,
    /// The pipeline the traces form, when they do (`pipeline::PipelinePane` finds it): the
    /// timeline stacks the ranks in its stage order and draws its microbatches and bubbles.
    pub pipeline: Option<std::sync::Arc<crate::pipeline::PipelineView>>,
    /// Whether `pipeline` is settled for the open traces (found, or known to be none).
    pub pipeline_settled: bool,
    /// The ranks comparison's matched collectives, for a collective's details and tooltip.
    pub collectives: Option<std::sync::Arc<crate::collective_index::CollectiveIndex>>,
    /// A folder of rank summaries (`strobe summarize`): the ranks pane merges them, the
    /// ranks' traces open one by one on demand.
    pub summaries: Option<PathBuf>,
    /// What every trace's figures are computed under (the step rule, the idle threshold):
    /// the one place they are kept; `set_figure_settings` changes them.
    settings: FigureSettings,
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
        // loaded under other settings (they changed during its load): its figures follow
        t.set_figure_settings(&self.settings);
        self.next_id += 1;
        t.id = TraceId(self.next_id);
        let id = t.id;
        let k = key(&t);
        let at = self.traces.partition_point(|x| key(x) <= k);
        self.traces.insert(at, t);
        self.pipeline_settled = false;
        self.generation += 1;
        id
    }

    /// What the figures are computed under.
    pub fn figure_settings(&self) -> &FigureSettings {
        &self.settings
    }

    /// Every trace's figures under `settings` from now on, those they change computed again
    /// behind the frames.
    pub fn set_figure_settings(&mut self, settings: FigureSettings) {
        for t in &mut self.traces {
            t.set_figure_settings(&settings);
        }
        if settings.step_pattern() != self.settings.step_pattern() {
            // the pipeline's steps are found again with the ranks' figures
            self.pipeline_settled = false;
        }
        self.settings = settings;
        self.generation += 1;
    }

    /// Closes every trace (the snapshot and ncu documents stay).
    pub fn close_traces(&mut self) {
        self.traces.clear();
        self.pipeline = None;
        self.pipeline_settled = false;
        self.generation += 1;
    }
}
