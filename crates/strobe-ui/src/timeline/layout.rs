//! The rows of the timeline: per trace (rank) a header, then its GPU groups (bands, streams,
//! copy engines, annotations, memory water level), CPU process groups (threads, NVTX, async),
//! counters and derived series. Groups fold by a typed `GroupKey`.

use super::{
    bands, counters, gpu_metrics, header, lanes, memory_level, nvtx_gpu, pipeline_strip, rank_summary, series,
    step_strip,
};
use crate::workspace::{TraceId, Workspace};
use std::collections::{BTreeMap, HashMap};
use strobe_model::{gpu_memory, LaneKind};

/// A foldable group of rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GroupKey {
    /// A whole trace (rank); folded it is one summary lane.
    Trace(TraceId),
    /// A GPU of a trace.
    Gpu(TraceId, i64),
    /// A CPU process of a trace, by its order in the trace.
    Process(TraceId, usize),
    /// The trace's counters that belong to no GPU.
    Counters(TraceId),
    /// A GPU's sampled metrics past the usual ones (clocks, warps in flight, …).
    GpuMetrics(TraceId, i64),
    /// Series derived from the trace (queue length, memcpy bandwidth).
    Series(TraceId),
    /// The profiler's own pseudo processes (Kineto's session span, iteration markers, overhead).
    Profiler(TraceId),
}

impl GroupKey {
    /// Derived series start folded, and CPU processes while `fold_cpu` (ranks side by side:
    /// their GPUs one above the other).
    pub fn starts_folded(self, fold_cpu: bool) -> bool {
        match self {
            GroupKey::Series(_) | GroupKey::Profiler(_) | GroupKey::GpuMetrics(..) => true,
            GroupKey::Process(..) => fold_cpu,
            GroupKey::Trace(_) | GroupKey::Gpu(..) | GroupKey::Counters(_) => false,
        }
    }
}

/// What a row shows; `ti` is its trace's position in `ws.traces`. Each kind's height, drawer
/// and tooltip text are in a module of its own (`rows`).
#[derive(Clone, Debug, PartialEq)]
pub enum RowKind {
    Header {
        ti: usize,
        key: GroupKey,
        label: String,
        level: u8,
        collapsed: bool,
    },
    Lane {
        ti: usize,
        lane: u32,
        /// A copy of the lane in the pinned rows at the top (they do not scroll).
        pinned: bool,
    },
    Bands {
        ti: usize,
        device: i64,
    },
    Counter {
        ti: usize,
        series: usize,
    },
    /// One sampled metric of a GPU (an index into the store's counters), in the GPU's group.
    GpuMetric {
        ti: usize,
        series: usize,
    },
    /// A series derived from the trace (queue length, memcpy bandwidth), index into
    /// `Derived::series`.
    Series {
        ti: usize,
        series: usize,
    },
    /// A GPU's memory water level: allocated and reserved bytes on one scale from 0, the
    /// allocated peak marked.
    MemoryLevel {
        ti: usize,
        device: i64,
    },
    /// A collapsed trace (rank) as one lane: GPU compute / comm / memory busy and long idle gaps.
    RankSummary {
        ti: usize,
    },
    /// The trace's iterations as boxes with their durations, the odd ones marked.
    Steps {
        ti: usize,
    },
    /// A device's CPU ranges projected onto its GPU work.
    NvtxGpu {
        ti: usize,
        device: i64,
    },
    /// A pipeline stage's microbatches (`F3`, `B3`) and its bubbles, shaded by kind.
    Pipeline {
        ti: usize,
    },
}

impl RowKind {
    /// The position of the row's trace in `ws.traces`.
    pub fn ti(&self) -> usize {
        match *self {
            RowKind::Header { ti, .. }
            | RowKind::Lane { ti, .. }
            | RowKind::Bands { ti, .. }
            | RowKind::Counter { ti, .. }
            | RowKind::GpuMetric { ti, .. }
            | RowKind::Series { ti, .. }
            | RowKind::MemoryLevel { ti, .. }
            | RowKind::RankSummary { ti }
            | RowKind::Steps { ti }
            | RowKind::NvtxGpu { ti, .. }
            | RowKind::Pipeline { ti } => ti,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Row {
    pub kind: RowKind,
    /// Offset from the top of the lane area (before scrolling).
    pub y: f32,
    pub h: f32,
}

/// A trace's lanes by the group they are drawn in: per GPU (in display order), per CPU
/// process (in the trace's order, labelled), and the profiler's own pseudo processes.
pub struct Groups {
    pub devices: BTreeMap<i64, Vec<u32>>,
    pub procs: Vec<(String, Vec<u32>)>,
    pub profiler: Vec<u32>,
}

impl Groups {
    pub fn of(t: &crate::workspace::Trace) -> Groups {
        let s = &*t.store;
        let mut devices: BTreeMap<i64, Vec<u32>> = BTreeMap::new();
        let mut procs: Vec<(String, Vec<u32>)> = Vec::new();
        let mut profiler: Vec<u32> = Vec::new();
        for lane in s.lanes_in_order() {
            let li = s.lane_index()[lane as usize];
            if li.member_end == li.member_begin {
                continue;
            }
            let kind = &s.lanes[lane as usize].kind;
            if let Some(d) = kind.device() {
                devices.entry(d).or_default().push(lane);
                continue;
            }
            let (LaneKind::CpuThread { pid, .. } | LaneKind::Nvtx { pid, .. } | LaneKind::Async { pid, .. }) = kind
            else {
                continue;
            };
            if strobe_model::profiler_pseudo_process(pid).is_some() {
                profiler.push(lane);
                continue;
            }
            let pname = s.names.processes.iter().rev().find(|(p, _)| p == pid).map(|(_, n)| n.clone());
            let label = match pname {
                Some(n) => format!("CPU · {n} (pid {pid})"),
                // another tool's named pseudo process: its name is its meaning
                None if pid.as_num().is_none() => pid.to_string(),
                None => format!("CPU · pid {pid}"),
            };
            match procs.iter_mut().find(|(l, _)| *l == label) {
                Some((_, v)) => v.push(lane),
                None => procs.push((label, vec![lane])),
            }
        }
        for lanes in devices.values_mut() {
            lanes.sort_by_key(|&l| (lane_group_order(&s.lanes[l as usize].kind), s.lanes[l as usize].kind.clone()));
        }
        Groups { devices, procs, profiler }
    }

    /// The groups lane `lane` of trace `t` sits in, outermost first (what to unfold to show it).
    pub fn containing(t: &crate::workspace::Trace, lane: u32) -> Vec<GroupKey> {
        let g = Groups::of(t);
        let mut out = vec![GroupKey::Trace(t.id)];
        if let Some((d, _)) = g.devices.iter().find(|(_, l)| l.contains(&lane)) {
            out.push(GroupKey::Gpu(t.id, *d));
        } else if let Some(pi) = g.procs.iter().position(|(_, l)| l.contains(&lane)) {
            out.push(GroupKey::Process(t.id, pi));
        } else if g.profiler.contains(&lane) {
            out.push(GroupKey::Profiler(t.id));
        }
        out
    }
}

/// The laid-out rows, where each lane starts, and the height of them all.
#[derive(Clone, Debug, Default)]
pub struct Layout {
    pub rows: Vec<Row>,
    /// Where each (trace, lane) starts, by id: what a selection or a jump looks up.
    pub lane_y: HashMap<(TraceId, u32), f32>,
    pub content_h: f32,
    /// The pinned rows come first and take `[0, pinned_h)`: they stay at the top while the
    /// rest scrolls under them.
    pub pinned_h: f32,
    /// Where each pipeline stage's strip (`RowKind::Pipeline`) starts: the P2P flows' ends
    /// when the transfer's own lane is folded.
    pub pipeline_y: HashMap<TraceId, f32>,
    /// The lanes left out (hidden by the user).
    pub hidden: Vec<(TraceId, u32)>,
}

/// Whether one of `lanes` holds GPU work (kernels, copies): what the overview's device rows
/// are made of.
fn has_gpu_work(s: &strobe_store::Store, lanes: impl IntoIterator<Item = u32>) -> bool {
    lanes.into_iter().any(|l| {
        let li = s.lane_index()[l as usize];
        li.member_end > li.member_begin
            && matches!(s.lanes[l as usize].kind, LaneKind::GpuStream { .. } | LaneKind::CopyEngine { .. })
    })
}

fn lane_group_order(k: &LaneKind) -> u8 {
    match k {
        LaneKind::GpuStream { .. } => 0,
        LaneKind::CopyEngine { .. } => 1,
        LaneKind::GpuAnnotation { .. } => 2,
        LaneKind::CpuThread { .. } => 3,
        LaneKind::Nvtx { .. } => 4,
        LaneKind::Async { .. } => 5,
    }
}

impl Layout {
    fn push(&mut self, kind: RowKind, h: f32) -> f32 {
        let at = self.content_h;
        self.rows.push(Row { kind, y: at, h });
        self.content_h += h;
        at
    }

    fn header(
        &mut self,
        folded: &impl Fn(GroupKey) -> bool,
        ti: usize,
        key: GroupKey,
        label: String,
        level: u8,
    ) -> bool {
        let collapsed = folded(key);
        self.push(RowKind::Header { ti, key, label, level, collapsed }, header::HEIGHT);
        collapsed
    }

    /// A row per lane, as tall as its nesting.
    fn lanes(&mut self, s: &strobe_store::Store, (ti, id): (usize, TraceId), lanes: &[u32]) {
        for &l in lanes {
            if self.hidden.contains(&(id, l)) {
                continue;
            }
            let depths = s.lane_index()[l as usize].max_depth + 1;
            let y = self.push(RowKind::Lane { ti, lane: l, pinned: false }, lanes::height(depths));
            self.lane_y.insert((id, l), y);
        }
    }

    /// Lays out the rows of every open trace (cheap: lanes are few); `folded` says which
    /// groups are folded, `hidden` which lanes are left out.
    pub fn new(
        ws: &Workspace,
        folded: impl Fn(GroupKey) -> bool,
        show_bands: bool,
        pinned: &[(TraceId, u32)],
        hidden: &[(TraceId, u32)],
    ) -> Layout {
        let mut out = Layout { hidden: hidden.to_vec(), ..Default::default() };
        for &(id, lane) in pinned.iter().filter(|p| !hidden.contains(p)) {
            let (Some(ti), Some(t)) = (ws.index_of(id), ws.trace(id)) else { continue };
            if let Some(li) = t.store.lane_index().get(lane as usize) {
                out.push(RowKind::Lane { ti, lane, pinned: true }, lanes::height(li.max_depth + 1));
            }
        }
        out.pinned_h = out.content_h;
        // a pipeline's ranks stack in stage order, each header naming its stage
        for ti in ws.display_order() {
            out.trace(ws, ti, &folded, show_bands);
        }
        out
    }

    /// The rows of trace `ti`: its header, then, unfolded, its steps, pipeline strip and
    /// groups; folded, its pipeline strip and one summary row.
    fn trace(&mut self, ws: &Workspace, ti: usize, folded: &impl Fn(GroupKey) -> bool, show_bands: bool) {
        let t = &ws.traces[ti];
        let s = &*t.store;
        let stage = ws.stage_of(t.id).map(|st| format!("stage {st} · ")).unwrap_or_default();
        let label = if t.offset_ns != 0 {
            format!("{stage}{}  (aligned {:+.3} ms)", t.label, t.offset_ns as f64 / 1e6)
        } else {
            format!("{stage}{}", t.label)
        };
        let folded_trace = self.header(folded, ti, GroupKey::Trace(t.id), label, 0);
        // until the overview arrives, its rows are held where they will be drawn (what the
        // store tells of them), so the lanes do not move when it does
        let pending = !t.derived.overview_ready();
        if folded_trace {
            // folded, a stage still shows its strip: stacked, they read as the schedule
            if ws.stage_of(t.id).is_some() {
                let y = self.push(RowKind::Pipeline { ti }, pipeline_strip::HEIGHT);
                self.pipeline_y.insert(t.id, y);
            }
            if !t.unions().is_empty() || (pending && has_gpu_work(s, 0..s.lanes.len() as u32)) {
                self.push(RowKind::RankSummary { ti }, rank_summary::HEIGHT);
            }
            return;
        }
        // most traces have steps (found or inferred): held while they are looked for
        if pending || !t.steps().is_empty() {
            self.push(RowKind::Steps { ti }, step_strip::HEIGHT);
        }
        if ws.stage_of(t.id).is_some() {
            let y = self.push(RowKind::Pipeline { ti }, pipeline_strip::HEIGHT);
            self.pipeline_y.insert(t.id, y);
        }
        let Groups { mut devices, procs, profiler } = Groups::of(t);
        // a GPU sampled for metrics but with no work of this trace still gets its group
        for d in gpu_metrics::devices(s) {
            devices.entry(d).or_default();
        }
        for (d, lanes) in devices {
            self.gpu_group((ti, t), (d, &lanes), folded, show_bands, (pending, !procs.is_empty()));
        }
        for (pi, (label, lanes)) in procs.into_iter().enumerate() {
            if !self.header(folded, ti, GroupKey::Process(t.id, pi), label, 1) {
                self.lanes(s, (ti, t.id), &lanes);
            }
        }
        if !profiler.is_empty() {
            let label = "Profiler · session, markers, overhead".to_string();
            if !self.header(folded, ti, GroupKey::Profiler(t.id), label, 1) {
                self.lanes(s, (ti, t.id), &profiler);
            }
        }
        // a GPU's own series are drawn in its group (MemoryLevel), not here
        if s.counters.iter().any(|c| c.device.is_none())
            && !self.header(folded, ti, GroupKey::Counters(t.id), "Counters".into(), 1)
        {
            for (i, _) in s.counters.iter().enumerate().filter(|(_, c)| c.device.is_none()) {
                self.push(RowKind::Counter { ti, series: i }, counters::HEIGHT);
            }
        }
        if !t.series().is_empty() {
            let label = "Queue length per stream · memcpy bandwidth (HTA)".to_string();
            if !self.header(folded, ti, GroupKey::Series(t.id), label, 1) {
                for i in 0..t.series().len() {
                    self.push(RowKind::Series { ti, series: i }, series::HEIGHT);
                }
            }
        }
    }

    /// GPU `d`'s group: its header, then, unfolded, its band row, its CPU ranges projected
    /// onto it, its lanes and its water level. `pending`: the trace's overview is still due;
    /// `has_procs`: the trace has CPU ranges to project.
    fn gpu_group(
        &mut self,
        (ti, t): (usize, &crate::workspace::Trace),
        (d, lanes): (i64, &[u32]),
        folded: &impl Fn(GroupKey) -> bool,
        show_bands: bool,
        (pending, has_procs): (bool, bool),
    ) {
        let s = &*t.store;
        let dev_name = s.meta.devices.iter().find(|x| x.id == d).map(|x| format!(" · {}", x.name)).unwrap_or_default();
        if self.header(folded, ti, GroupKey::Gpu(t.id, d), format!("GPU {d}{dev_name}"), 1) {
            return;
        }
        if show_bands
            && (t.unions().iter().any(|u| u.device == d) || (pending && has_gpu_work(s, lanes.iter().copied())))
        {
            self.push(RowKind::Bands { ti, device: d }, bands::HEIGHT);
        }
        let nvtx_h = if pending {
            // a projection row when the trace has CPU ranges to project, at its
            // tallest: how deep the ranges overlap on the GPU is known only once they
            // are projected, and most traces' ranges (a step around the phases around
            // the layers) fill it; a lower one moves the lanes up once
            (has_gpu_work(s, lanes.iter().copied()) && has_procs).then(|| nvtx_gpu::height_of(nvtx_gpu::MAX_ROWS))
        } else {
            nvtx_gpu::height(t, d)
        };
        if let Some(h) = nvtx_h {
            self.push(RowKind::NvtxGpu { ti, device: d }, h);
        }
        self.lanes(s, (ti, t.id), lanes);
        let level = if pending {
            strobe_analysis::memory_level::has_water_level(s, d)
        } else {
            t.memory_peaks().iter().any(|m| m.device == d)
        };
        if level {
            self.push(RowKind::MemoryLevel { ti, device: d }, memory_level::HEIGHT);
        }
        let (usual, rest) = gpu_metrics::series_of(s, d);
        for series in usual {
            self.push(RowKind::GpuMetric { ti, series }, gpu_metrics::HEIGHT);
        }
        if !rest.is_empty() {
            let label = format!("GPU {d} · {} more metrics", rest.len());
            if !self.header(folded, ti, GroupKey::GpuMetrics(t.id, d), label, 2) {
                for series in rest {
                    self.push(RowKind::GpuMetric { ti, series }, gpu_metrics::HEIGHT);
                }
            }
        }
        // the GPU's other sampled counters (a Perfetto trace's SM active, DRAM throughput)
        let own = s.counters.iter().enumerate().filter(|(_, c)| {
            c.device == Some(d) && c.name != gpu_memory::NAME && c.name != strobe_model::gpu_metrics::NAME
        });
        for (i, _) in own {
            self.push(RowKind::Counter { ti, series: i }, counters::HEIGHT);
        }
    }

    /// The row at `y` pixels below the top of the lane area when scrolled by `scroll`.
    pub fn row_at(&self, y: f32, scroll: f32) -> Option<&Row> {
        if y < self.pinned_h {
            return self.rows.iter().find(|r| y >= r.y && y < r.y + r.h);
        }
        let y = y + scroll;
        self.rows.iter().find(|r| r.y >= self.pinned_h && y >= r.y && y < r.y + r.h)
    }

    /// Where row `r` starts below the top of the lane area when scrolled by `scroll` (pinned
    /// rows do not scroll).
    pub fn row_y(&self, r: &Row, scroll: f32) -> f32 {
        if r.y < self.pinned_h {
            r.y
        } else {
            r.y - scroll
        }
    }
}
