//! The figures of one trace, each found at most once. `strobe report`, the several-rank report
//! and the viewer's panes all read them from a `TraceFigures`, so whoever asks first computes a
//! figure and everyone after reads it: the viewer fills them on its background threads while
//! its panes show what has arrived, the CLI asks for them all at once.
//!
//! The step rule decides some figures (the steps, their anomalies, MFU per step) and not the
//! others. `with_rule` gives the figures under another rule, sharing every figure the rule does
//! not decide, so changing View ▸ Steps finds only the steps again.

use crate::anomalies::{step_anomalies_in, StepAnomaly, DEFAULT_K};
use crate::cuda_graphs::{cuda_graphs, CudaGraphs};
use crate::efficiency::ops::{op_runs, OpRun};
use crate::efficiency::{efficiency_of_in_steps, Efficiency, PeakOverride};
use crate::gaps::{largest_gaps, GapRow};
use crate::gpu_time::{device_unions, gpu_time_of, DeviceUnions, GpuTime};
use crate::headline::{headline_of, Headline};
use crate::idle::{idle_totals_of, DeviceIdle, DEFAULT_THRESHOLD_NS};
use crate::kernels::{kernel_stats, KernelStat};
use crate::memory_level::{memory_peaks, MemoryPeak};
use crate::op_table::{op_table, OpTable};
use crate::ranks::memcpy_bandwidth::{memcpy_bandwidth, BandwidthSeries};
use crate::ranks::queue::{queue_length, queue_summary, QueueSeries};
use crate::steps::{capture_range, find_steps_in, CaptureRange, Step, StepRule};
use crate::streams::{stream_stats, StreamStat};
use std::sync::{Arc, OnceLock};
use strobe_store::timing::Phase;
use strobe_store::Store;

/// A value computed once, by whoever asks first; a second asker waits for it rather than
/// computing it again. Clones share it.
pub struct Later<T>(Arc<OnceLock<T>>);

impl<T> Default for Later<T> {
    fn default() -> Self {
        Later(Arc::new(OnceLock::new()))
    }
}

impl<T> Clone for Later<T> {
    fn clone(&self) -> Self {
        Later(self.0.clone())
    }
}

impl<T> Later<T> {
    /// Already there.
    pub fn ready(v: T) -> Later<T> {
        let l = Later::default();
        let _ = l.0.set(v);
        l
    }

    /// The value, once it has arrived.
    pub fn get(&self) -> Option<&T> {
        self.0.get()
    }

    /// The value, computing it with `f` unless it is there; waits while another thread
    /// computes it (`OnceLock::get_or_init`), so it is computed once.
    pub fn get_or_init(&self, f: impl FnOnce() -> T) -> &T {
        self.0.get_or_init(f)
    }

    pub fn is_ready(&self) -> bool {
        self.0.get().is_some()
    }
}

impl<T> Later<Vec<T>> {
    /// The list, empty until it arrives (what a pane draws meanwhile).
    pub fn slice(&self) -> &[T] {
        self.0.get().map(|v| v.as_slice()).unwrap_or(&[])
    }
}

/// The GPU lanes' unions per device, and their busy time over all devices: the one scan of the
/// GPU lanes that busy/idle, overlap, the steps' window and the idle breakdown start from.
#[derive(Default)]
pub struct GpuActivity {
    pub unions: Vec<DeviceUnions>,
    /// The union of several devices' busy time (None with one device or none: `busy`).
    all_busy: Option<Vec<(i64, i64)>>,
}

impl GpuActivity {
    pub fn of(unions: Vec<DeviceUnions>) -> GpuActivity {
        let all_busy = (unions.len() > 1)
            .then(|| crate::intervals::union(unions.iter().flat_map(|d| d.busy.iter().copied()).collect()));
        GpuActivity { unions, all_busy }
    }

    /// GPU busy time over all devices (the union of `unions`' busy; one device's own).
    pub fn busy(&self) -> &[(i64, i64)] {
        match (&self.all_busy, self.unions.first()) {
            (Some(b), _) => b,
            (None, Some(d)) => &d.busy,
            (None, None) => &[],
        }
    }
}

/// The figures that do not depend on the step rule.
#[derive(Clone, Default)]
struct StoreWide {
    capture: Later<Option<CaptureRange>>,
    activity: Later<GpuActivity>,
    kernels: Later<Vec<KernelStat>>,
    cuda_graphs: Later<CudaGraphs>,
    memory_peaks: Later<Vec<MemoryPeak>>,
    streams: Later<Vec<StreamStat>>,
    idle_totals: Later<Vec<DeviceIdle>>,
    largest_gaps: Later<Vec<GapRow>>,
    op_runs: Later<Vec<OpRun>>,
    op_table: Later<OpTable>,
    queue_lengths: Later<Vec<QueueSeries>>,
    queue_summary: Later<Vec<QueueSeries>>,
    copy_bandwidth: Later<Vec<BandwidthSeries>>,
}

/// The figures the step rule decides.
#[derive(Clone, Default)]
struct ByRule {
    steps: Later<Vec<Step>>,
    step_attributions: Later<Vec<crate::attribution::breakdown::StepAttribution>>,
    step_breakdown: Later<Vec<crate::attribution::StepBreakdown>>,
    critical_paths: Later<Vec<Option<crate::attribution::CriticalPath>>>,
    step_anomalies: Later<Vec<StepAnomaly>>,
    headline: Later<Headline>,
    efficiency: Later<Efficiency>,
}

/// One trace's figures under one step rule and one set of device ceilings. Each method takes
/// the trace's store, computes its figure unless it is there, and returns it. Clones share
/// what is computed.
#[derive(Clone)]
pub struct TraceFigures {
    rule: StepRule,
    peaks: PeakOverride,
    /// Whether the queue lengths' points are wanted anyway (a viewer draws them): then the
    /// queue summary is read off them rather than found by a scan of its own.
    queue_points: bool,
    store_wide: StoreWide,
    by_rule: ByRule,
}

impl Default for TraceFigures {
    fn default() -> Self {
        TraceFigures::new(StepRule::default(), PeakOverride::default())
    }
}

impl TraceFigures {
    /// Nothing computed yet; steps found by `rule`, efficiency against the device's ceilings
    /// overridden by `peaks`.
    pub fn new(rule: StepRule, peaks: PeakOverride) -> TraceFigures {
        TraceFigures { rule, peaks, queue_points: false, store_wide: StoreWide::default(), by_rule: ByRule::default() }
    }

    /// These figures for a caller that draws the queue lengths' points (`queue_lengths`).
    pub fn drawing_queue_points(self) -> TraceFigures {
        TraceFigures { queue_points: true, ..self }
    }

    /// The same trace's figures with the steps found by `rule`: what the rule does not decide
    /// is shared with `self`, computed or not.
    pub fn with_rule(&self, rule: StepRule) -> TraceFigures {
        TraceFigures { rule, by_rule: ByRule::default(), ..self.clone() }
    }

    pub fn rule(&self) -> &StepRule {
        &self.rule
    }

    /// The figures a viewer's overview waits for set to none where they are not there: their
    /// analysis failed, and the panes stop waiting for them.
    pub fn give_up(&self) {
        self.store_wide.activity.get_or_init(GpuActivity::default);
        self.store_wide.kernels.get_or_init(Vec::new);
        self.store_wide.cuda_graphs.get_or_init(CudaGraphs::default);
        self.store_wide.memory_peaks.get_or_init(Vec::new);
        self.by_rule.steps.get_or_init(Vec::new);
    }

    /// The `cudaProfilerStart`/`Stop` range, where the trace records one (steps outside it
    /// are left out).
    pub fn capture(&self, store: &Store) -> Option<&CaptureRange> {
        self.store_wide
            .capture
            .get_or_init(|| {
                let _t = Phase::start("figures: capture range");
                capture_range(store)
            })
            .as_ref()
    }

    /// The iterations by the rule, sorted by start.
    pub fn steps(&self, store: &Store) -> &[Step] {
        self.by_rule.steps.get_or_init(|| {
            let capture = self.capture(store);
            let _t = Phase::start("figures: steps");
            find_steps_in(store, &self.rule, capture)
        })
    }

    pub fn steps_ready(&self) -> Option<&[Step]> {
        self.by_rule.steps.get().map(|s| s.as_slice())
    }

    /// The GPU lanes' unions per device.
    pub fn activity(&self, store: &Store) -> &GpuActivity {
        self.store_wide.activity.get_or_init(|| {
            let _t = Phase::start("figures: gpu activity");
            GpuActivity::of(device_unions(store))
        })
    }

    pub fn activity_ready(&self) -> Option<&GpuActivity> {
        self.store_wide.activity.get()
    }

    /// Busy/idle/overlap per device, with each device's memory water level peak and its
    /// sampled metrics (over its window and per step) where the trace has them.
    pub fn gpus(&self, store: &Store) -> Vec<GpuTime> {
        let mut gpus = gpu_time_of(&self.activity(store).unions);
        for m in self.memory_peaks(store) {
            if let Some(g) = gpus.iter_mut().find(|g| g.device == m.device) {
                g.memory = Some(m.clone());
            }
        }
        let with_metrics = crate::gpu_metrics::devices(store);
        if !with_metrics.is_empty() {
            let _t = Phase::start("figures: GPU metrics");
            let steps = self.steps(store);
            for g in gpus.iter_mut().filter(|g| with_metrics.contains(&g.device)) {
                g.metrics = crate::gpu_metrics::device_metrics(store, g.device, (g.start_ns, g.end_ns), steps);
                let unions = self.activity(store).unions.iter().find(|u| u.device == g.device);
                g.busy_not_working =
                    unions.and_then(|u| crate::gpu_metrics::not_working::busy_not_working(store, g.device, &u.compute));
            }
        }
        gpus
    }

    /// Every kernel name by total time.
    pub fn kernels(&self, store: &Store) -> &[KernelStat] {
        self.store_wide.kernels.get_or_init(|| {
            let _t = Phase::start("figures: kernel stats");
            kernel_stats(store)
        })
    }

    pub fn kernels_ready(&self) -> Option<&[KernelStat]> {
        self.store_wide.kernels.get().map(|k| k.as_slice())
    }

    /// The CUDA graphs: launches with their kernels, replays of one graph together.
    pub fn cuda_graphs(&self, store: &Store) -> &CudaGraphs {
        self.store_wide.cuda_graphs.get_or_init(|| {
            let _t = Phase::start("figures: cuda graphs");
            cuda_graphs(store)
        })
    }

    pub fn cuda_graphs_ready(&self) -> Option<&CudaGraphs> {
        self.store_wide.cuda_graphs.get()
    }

    /// Each GPU's memory water level peak (the trace's `[memory]` / nsys counters).
    pub fn memory_peaks(&self, store: &Store) -> &[MemoryPeak] {
        self.store_wide.memory_peaks.get_or_init(|| {
            let _t = Phase::start("figures: memory peaks");
            memory_peaks(store)
        })
    }

    pub fn memory_peaks_ready(&self) -> Option<&[MemoryPeak]> {
        self.store_wide.memory_peaks.get().map(|k| k.as_slice())
    }

    pub fn streams(&self, store: &Store) -> &[StreamStat] {
        self.store_wide.streams.get_or_init(|| {
            let _t = Phase::start("figures: stream stats");
            stream_stats(store)
        })
    }

    /// The idle breakdown's totals per device at the default threshold (no record per gap).
    pub fn idle_totals(&self, store: &Store) -> &[DeviceIdle] {
        self.store_wide.idle_totals.get_or_init(|| {
            let unions = &self.activity(store).unions;
            let _t = Phase::start("figures: idle totals");
            idle_totals_of(store, unions, DEFAULT_THRESHOLD_NS)
        })
    }

    /// The headline figures at the default threshold: over the steps, else the capture
    /// range, else the whole trace (`headline`).
    pub fn headline(&self, store: &Store) -> &Headline {
        self.by_rule.headline.get_or_init(|| {
            let (steps, unions) = (self.steps(store), &self.activity(store).unions);
            let capture = self.capture(store);
            let _t = Phase::start("figures: headline");
            headline_of(store, unions, steps, capture, DEFAULT_THRESHOLD_NS)
        })
    }

    /// The longest idle gaps at the default threshold, with the op that held the host
    /// (`gaps`).
    pub fn largest_gaps(&self, store: &Store) -> &[GapRow] {
        self.store_wide.largest_gaps.get_or_init(|| {
            let unions = &self.activity(store).unions;
            let _t = Phase::start("figures: largest gaps");
            largest_gaps(store, unions, DEFAULT_THRESHOLD_NS, crate::gaps::DEFAULT_TOP)
        })
    }

    /// The odd steps among the rule's steps.
    pub fn step_anomalies(&self, store: &Store) -> &[StepAnomaly] {
        self.by_rule.step_anomalies.get_or_init(|| {
            let (steps, busy) = (self.steps(store), self.activity(store).busy());
            let _t = Phase::start("figures: step anomalies");
            step_anomalies_in(store, steps, None, DEFAULT_K, busy)
        })
    }

    pub fn step_anomalies_ready(&self) -> Option<&[StepAnomaly]> {
        self.by_rule.step_anomalies.get().map(|a| a.as_slice())
    }

    /// Each CPU op instance linked to GPU work, with its work where a formula fits. Kept
    /// once asked for (the viewer links the figures with the timeline's spans by them).
    pub fn op_runs(&self, store: &Store) -> &[OpRun] {
        self.store_wide.op_runs.get_or_init(|| {
            let _t = Phase::start("figures: op runs");
            op_runs(store)
        })
    }

    /// torch.profiler's `key_averages()`: per op name (and per name and input shapes) calls,
    /// CPU and device time, total and self.
    pub fn op_table(&self, store: &Store) -> &OpTable {
        self.store_wide.op_table.get_or_init(|| {
            let _t = Phase::start("figures: op table");
            op_table(store)
        })
    }

    pub fn op_table_ready(&self) -> Option<&OpTable> {
        self.store_wide.op_table.get()
    }

    /// Per-op and per-kernel efficiency, MFU per step of the rule's steps. It reads the op
    /// runs kept by `op_runs` when someone asked for them; otherwise it finds them and lets
    /// them go (a report has no other use for them, and on a 1 GB trace they are tens of MB).
    pub fn efficiency(&self, store: &Store) -> &Efficiency {
        self.by_rule.efficiency.get_or_init(|| {
            let steps = self.steps(store);
            let found;
            let runs = match self.store_wide.op_runs.get() {
                Some(r) => r.as_slice(),
                None => {
                    let _t = Phase::start("figures: op runs");
                    found = op_runs(store);
                    found.as_slice()
                }
            };
            let _t = Phase::start("figures: efficiency");
            efficiency_of_in_steps(store, runs, steps, self.peaks)
        })
    }

    pub fn efficiency_ready(&self) -> Option<&Efficiency> {
        self.by_rule.efficiency.get()
    }

    /// Each step's attribution with its stretches, in step order, before the notes on steps
    /// that overlap (`breakdown::attribute`): what the step breakdown and a rank's digest are
    /// made from, found once for both.
    pub fn step_attributions(&self, store: &Store) -> &[crate::attribution::breakdown::StepAttribution] {
        self.by_rule
            .step_attributions
            .get_or_init(|| crate::attribution::breakdown::attribute(store, self, self.steps(store)))
    }

    /// The steps' attributions and critical paths moved out of figures about to be let go,
    /// where they were computed and no clone of these figures shares them; else None (copy
    /// them). A rank's thousands of steps hold tens of MB of them.
    #[allow(clippy::type_complexity)]
    pub fn take_attribution(
        &mut self,
    ) -> Option<(Vec<crate::attribution::breakdown::StepAttribution>, Vec<Option<crate::attribution::CriticalPath>>)>
    {
        // both held by these figures alone, and both there, or neither taken; asked again
        // after, they are computed again
        let by_rule = &mut self.by_rule;
        let (Some(a), Some(p)) =
            (Arc::get_mut(&mut by_rule.step_attributions.0), Arc::get_mut(&mut by_rule.critical_paths.0))
        else {
            return None;
        };
        if a.get().is_none() || p.get().is_none() {
            return None;
        }
        Some((a.take()?, p.take()?))
    }

    pub fn step_attributions_ready(&self) -> Option<&[crate::attribution::breakdown::StepAttribution]> {
        self.by_rule.step_attributions.get().map(|s| s.as_slice())
    }

    /// Each step's time split into the attribution's parts (docs/attribution.md), in step order.
    pub fn step_breakdown(&self, store: &Store) -> &[crate::attribution::StepBreakdown] {
        self.by_rule.step_breakdown.get_or_init(|| crate::attribution::breakdown::of_trace(store, self))
    }

    pub fn step_breakdown_ready(&self) -> Option<&[crate::attribution::StepBreakdown]> {
        self.by_rule.step_breakdown.get().map(|s| s.as_slice())
    }

    /// Each step's critical path (none where the trace cannot give one), in step order.
    pub fn critical_paths(&self, store: &Store) -> &[Option<crate::attribution::CriticalPath>] {
        self.by_rule.critical_paths.get_or_init(|| crate::attribution::critical_path::of_trace(store, self))
    }

    pub fn critical_paths_ready(&self) -> Option<&[Option<crate::attribution::CriticalPath>]> {
        self.by_rule.critical_paths.get().map(|s| s.as_slice())
    }

    /// Each stream's queue length over time, its points included (what the viewer draws).
    pub fn queue_lengths(&self, store: &Store) -> &[QueueSeries] {
        self.store_wide.queue_lengths.get_or_init(|| {
            let _t = Phase::start("figures: queue lengths");
            queue_length(store)
        })
    }

    /// Each stream's maximum and mean queue length without the points: read off the lengths
    /// when they are drawn (`drawing_queue_points`), else found without keeping a point per
    /// launch (a whole report held two points per launch: tens of MB a rank).
    pub fn queue_summary(&self, store: &Store) -> &[QueueSeries] {
        let lengths = self.queue_points.then(|| self.queue_lengths(store));
        self.store_wide.queue_summary.get_or_init(|| {
            match lengths.or_else(|| self.store_wide.queue_lengths.get().map(|q| q.as_slice())) {
                Some(q) => q
                    .iter()
                    .map(|s| QueueSeries {
                        device: s.device,
                        stream: s.stream,
                        points: Vec::new(),
                        max_len: s.max_len,
                        mean_len: s.mean_len,
                    })
                    .collect(),
                None => {
                    let _t = Phase::start("figures: queue summary");
                    queue_summary(store)
                }
            }
        })
    }

    /// Achieved memcpy bandwidth per device and copy kind over time.
    pub fn copy_bandwidth(&self, store: &Store) -> &[BandwidthSeries] {
        self.store_wide.copy_bandwidth.get_or_init(|| {
            let _t = Phase::start("figures: copy bandwidth");
            memcpy_bandwidth(store)
        })
    }
}
