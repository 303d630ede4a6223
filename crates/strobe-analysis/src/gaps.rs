//! The largest idle gaps of a trace, each with its cause (`idle`'s classification) and the
//! CPU op that held the host during it: the Gaps table of the viewer, `strobe report` and
//! `strobe export --what gaps`.
//!
//! **The op that held the host** during a gap [start, end) is read on the thread that issued
//! the launch call of the GPU operation closing the gap (the thread the GPU was waiting on),
//! its own spans and its NVTX ranges (Nsight Systems draws them as the thread's rows):
//! - the innermost span of that thread covering the whole gap (the shortest one: nested
//!   spans are shorter than what holds them) — what the thread was inside from the moment the
//!   GPU went idle until it had work again, as a Perfetto user reads it off the thread's slice
//!   stack under the gap (a `cudaStreamSynchronize`, an `optimizer.step` range…);
//! - where none covers it, the span that overlaps the gap the longest, provided it overlaps
//!   at least half of it (the thread spent most of the gap in it);
//! - otherwise none: what the thread did is not recorded (Python between ops, say), and
//!   naming a launch call a few µs long would mislead.
//!
//! A gap whose closing operation has no recorded launch (no correlation flow) has none.

use crate::gpu_time::DeviceUnions;
use crate::idle::{idle_breakdown_of, DeviceIdle, IdleCause, IdleGap};
use serde::Serialize;
use strobe_model::LaneKind;
use strobe_store::Store;

/// The report's and the export's default number of gaps.
pub const DEFAULT_TOP: usize = 20;

/// One of the largest gaps.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GapRow {
    pub device: i64,
    pub start_ns: i64,
    pub end_ns: i64,
    pub len_ns: i64,
    pub cause: IdleCause,
    /// The GPU span whose end opens the gap, and the one whose start closes it.
    pub prev_span: u32,
    pub next_span: u32,
    /// The launch call of `next_span`, where the trace links it.
    pub next_launch: Option<u32>,
    /// The span that held the launching thread during the gap (the module's rule).
    pub held_by: Option<u32>,
    pub held_by_name: Option<String>,
}

/// The `top` longest gaps at least `threshold_ns` long over every device, longest first
/// (earlier first on equal length).
pub fn largest_gaps(store: &Store, unions: &[DeviceUnions], threshold_ns: i64, top: usize) -> Vec<GapRow> {
    largest_of(store, &idle_breakdown_of(store, unions, threshold_ns), top)
}

/// `largest_gaps` from an idle breakdown with its gaps kept (`idle_breakdown_of`), at its
/// threshold: the viewer has one at the user's threshold.
pub fn largest_of(store: &Store, devices: &[DeviceIdle], top: usize) -> Vec<GapRow> {
    let mut all: Vec<(i64, &IdleGap)> = devices
        .iter()
        .flat_map(|d| d.gaps.iter().filter(|g| g.end - g.start >= d.threshold_ns).map(move |g| (d.device, g)))
        .collect();
    all.sort_by(|a, b| (b.1.end - b.1.start).cmp(&(a.1.end - a.1.start)).then(a.1.start.cmp(&b.1.start)));
    all.truncate(top);
    all.into_iter().map(|(device, g)| row(store, device, g)).collect()
}

/// `g` of `device` as a row, with the op that held the host.
pub fn row(store: &Store, device: i64, g: &IdleGap) -> GapRow {
    let held_by = g.next_launch.and_then(|l| holding_span(store, &thread_lanes(store, l), g.start, g.end));
    GapRow {
        device,
        start_ns: g.start,
        end_ns: g.end,
        len_ns: g.end - g.start,
        cause: g.cause,
        prev_span: g.prev_span,
        next_span: g.next_span,
        next_launch: g.next_launch,
        held_by,
        held_by_name: held_by.map(|s| store.span_name(s).to_string()),
    }
}

/// The lanes of the thread that issued `span`: its own and that thread's NVTX lane.
pub fn thread_lanes(store: &Store, span: u32) -> Vec<u32> {
    let lane = store.span_meta(span).lane;
    let mut out = vec![lane];
    if let Some(LaneKind::CpuThread { pid, tid }) = store.lanes.get(lane as usize).map(|d| &d.kind) {
        out.extend(store.lanes.iter().enumerate().filter_map(|(i, d)| match &d.kind {
            LaneKind::Nvtx { pid: p, tid: t } if p == pid && t == tid => Some(i as u32),
            _ => None,
        }));
    }
    out
}

/// The span of `lanes` (one thread's) that held the thread during [start, end) (the
/// module's rule).
pub fn holding_span(store: &Store, lanes: &[u32], start: i64, end: i64) -> Option<u32> {
    let len = end - start;
    // covering: the shortest (then the later start); else the longest overlap (then the
    // earlier start)
    let mut covering: Option<((i64, i64), u32)> = None;
    let mut most: Option<((i64, i64), u32)> = None;
    for &lane in lanes {
        let v = store.lane_view(lane);
        store.query_window(lane, start, end.max(start + 1), |i| {
            let (s, e) = (v.starts[i], v.ends[i]);
            if s <= start && e >= end {
                let key = (e - s, -s);
                if covering.is_none_or(|c| key < c.0) {
                    covering = Some((key, v.span[i]));
                }
            } else {
                let key = (e.min(end) - s.max(start), -s);
                if most.is_none_or(|m| key > m.0) {
                    most = Some((key, v.span[i]));
                }
            }
        });
    }
    covering.or(most.filter(|m| 2 * m.0 .0 >= len && len > 0)).map(|b| b.1)
}
