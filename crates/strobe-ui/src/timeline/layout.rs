//! The rows of the timeline: per trace (rank) a header, then its GPU groups (bands, streams,
//! copy engines, annotations, memory water level), CPU process groups (threads, NVTX, async),
//! counters and derived series. Groups fold by a typed `GroupKey`.

use super::{BANDS_H, COUNTER_H, HEADER_H, LANE_PAD, MEMORY_H, ROW_H};
use crate::workspace::{TraceId, Workspace};
use std::collections::{BTreeMap, HashMap, HashSet};
use strobe_model::LaneKind;

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
    /// Series derived from the trace (queue length, memcpy bandwidth).
    Series(TraceId),
}

impl GroupKey {
    /// Derived series start folded, and CPU processes while `fold_cpu` (ranks side by side:
    /// their GPUs one above the other).
    pub fn starts_folded(self, fold_cpu: bool) -> bool {
        match self {
            GroupKey::Series(_) => true,
            GroupKey::Process(..) => fold_cpu,
            GroupKey::Trace(_) | GroupKey::Gpu(..) | GroupKey::Counters(_) => false,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum RowKind {
    Header {
        key: GroupKey,
        label: String,
        level: u8,
        collapsed: bool,
    },
    Lane {
        trace: usize,
        lane: u32,
    },
    Bands {
        trace: usize,
        device: i64,
    },
    Counter {
        trace: usize,
        series: usize,
    },
    /// A series derived from the trace (queue length, memcpy bandwidth), index into
    /// `Derived::series`.
    Series {
        trace: usize,
        series: usize,
    },
    /// A GPU's memory water level: allocated and reserved bytes on one scale from 0, the
    /// allocated peak marked.
    MemoryLevel {
        trace: usize,
        device: i64,
    },
    /// A collapsed trace (rank) as one lane: GPU compute / comm / memory busy and long idle gaps.
    RankSummary {
        trace: usize,
    },
}

#[derive(Clone, Debug)]
pub struct Row {
    pub kind: RowKind,
    /// Offset from the top of the lane area (before scrolling).
    pub y: f32,
    pub h: f32,
}

/// The laid-out rows, where each lane starts, and the height of them all.
#[derive(Clone, Debug, Default)]
pub struct Layout {
    pub rows: Vec<Row>,
    /// Where each (trace, lane) starts, by id: what a selection or a jump looks up.
    pub lane_y: HashMap<(TraceId, u32), f32>,
    pub content_h: f32,
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

    fn header(&mut self, folded: &impl Fn(GroupKey) -> bool, key: GroupKey, label: String, level: u8) -> bool {
        let collapsed = folded(key);
        self.push(RowKind::Header { key, label, level, collapsed }, HEADER_H);
        collapsed
    }

    /// A row per lane, as tall as its nesting.
    fn lanes(&mut self, s: &strobe_store::Store, (ti, id): (usize, TraceId), lanes: &[u32]) {
        for &l in lanes {
            let depths = s.lane_index()[l as usize].max_depth + 1;
            let y = self.push(RowKind::Lane { trace: ti, lane: l }, depths as f32 * ROW_H + LANE_PAD);
            self.lane_y.insert((id, l), y);
        }
    }

    /// Lays out the rows of every open trace (cheap: lanes are few); `folded` says which
    /// groups are folded.
    pub fn new(ws: &Workspace, folded: impl Fn(GroupKey) -> bool, show_bands: bool) -> Layout {
        let mut out = Layout::default();
        for (ti, t) in ws.traces.iter().enumerate() {
            let s = &*t.store;
            let label = if t.offset_ns != 0 {
                format!("{}  (aligned {:+.3} ms)", t.label, t.offset_ns as f64 / 1e6)
            } else {
                t.label.clone()
            };
            if out.header(&folded, GroupKey::Trace(t.id), label, 0) {
                if !t.derived.unions.is_empty() {
                    out.push(RowKind::RankSummary { trace: ti }, BANDS_H);
                }
                continue;
            }
            let mut devices: BTreeMap<i64, Vec<u32>> = BTreeMap::new();
            let mut procs: Vec<(String, Vec<u32>)> = Vec::new();
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
                let pname = s.names.processes.iter().rev().find(|(p, _)| p == pid).map(|(_, n)| n.clone());
                let label = match pname {
                    Some(n) => format!("CPU · {n} (pid {pid})"),
                    None => format!("CPU · pid {pid}"),
                };
                match procs.iter_mut().find(|(l, _)| *l == label) {
                    Some((_, v)) => v.push(lane),
                    None => procs.push((label, vec![lane])),
                }
            }
            let has_device_rows: HashSet<i64> = t.derived.unions.iter().map(|u| u.device).collect();
            for (d, mut lanes) in devices {
                lanes.sort_by_key(|&l| (lane_group_order(&s.lanes[l as usize].kind), s.lanes[l as usize].kind.clone()));
                let dev_name =
                    s.meta.devices.iter().find(|x| x.id == d).map(|x| format!(" · {}", x.name)).unwrap_or_default();
                if out.header(&folded, GroupKey::Gpu(t.id, d), format!("GPU {d}{dev_name}"), 1) {
                    continue;
                }
                if show_bands && has_device_rows.contains(&d) {
                    out.push(RowKind::Bands { trace: ti, device: d }, BANDS_H);
                }
                out.lanes(s, (ti, t.id), &lanes);
                if t.derived.memory.iter().any(|m| m.device == d) {
                    out.push(RowKind::MemoryLevel { trace: ti, device: d }, MEMORY_H);
                }
            }
            for (pi, (label, lanes)) in procs.into_iter().enumerate() {
                if !out.header(&folded, GroupKey::Process(t.id, pi), label, 1) {
                    out.lanes(s, (ti, t.id), &lanes);
                }
            }
            // a GPU's own series are drawn in its group (MemoryLevel), not here
            if s.counters.iter().any(|c| c.device.is_none())
                && !out.header(&folded, GroupKey::Counters(t.id), "Counters".into(), 1)
            {
                for (i, _) in s.counters.iter().enumerate().filter(|(_, c)| c.device.is_none()) {
                    out.push(RowKind::Counter { trace: ti, series: i }, COUNTER_H);
                }
            }
            if !t.derived.series.is_empty() {
                let label = "Queue length per stream · memcpy bandwidth (HTA)".to_string();
                if !out.header(&folded, GroupKey::Series(t.id), label, 1) {
                    for i in 0..t.derived.series.len() {
                        out.push(RowKind::Series { trace: ti, series: i }, COUNTER_H);
                    }
                }
            }
        }
        out
    }

    /// The row at `y` from the top of the lane area.
    pub fn row_at(&self, y: f32) -> Option<&Row> {
        self.rows.iter().find(|r| y >= r.y && y < r.y + r.h)
    }
}
