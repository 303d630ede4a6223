//! Queue length per stream over time (HTA `get_queue_length_time_series`): the GPU ops
//! launched on a stream and not yet started. +1 at the launch call's start, −1 at the op's
//! start, as HTA counts; only ops whose launch the trace links take part. A stream stuck near
//! 1024 blocks the CPU in its next launch.

use crate::gpu_time::Classifier;
use serde::Serialize;
use strobe_model::{LaneKind, SpanKind};
use strobe_store::Store;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct QueueSeries {
    pub device: i64,
    pub stream: i64,
    /// (ts, queue length from ts on): a step function, one point per change. Left out of
    /// the JSON report (one point per launch and per start); the GUI draws it as a counter.
    #[serde(skip)]
    pub points: Vec<(i64, i64)>,
    pub max_len: i64,
    /// Time-weighted mean between the first and the last point.
    pub mean_len: f64,
}

pub fn queue_length(store: &Store) -> Vec<QueueSeries> {
    let mut out = Vec::new();
    let launches = store.launch_table();
    let mut classes = Classifier::new(store);
    for (lane, desc) in store.lanes.iter().enumerate() {
        let LaneKind::GpuStream { device, stream } = desc.kind else { continue };
        let v = store.lane_view(lane as u32);
        let mut ev: Vec<(i64, i64)> = Vec::with_capacity(2 * v.span.len());
        for (k, &sid) in v.span.iter().enumerate() {
            let m = store.span_meta(sid);
            if classes.class(SpanKind::from_u8(m.kind), m.name).is_none() {
                continue;
            }
            let l = launches.get(sid as usize).copied().unwrap_or(strobe_store::NO_LAUNCH);
            if l != strobe_store::NO_LAUNCH {
                ev.push((store.span_start(l), 1));
                ev.push((v.starts[k], -1));
            }
        }
        if ev.is_empty() {
            continue;
        }
        // at one instant, count the launch before the start it may be paired with
        ev.sort_by_key(|&(t, d)| (t, -d));
        let mut points: Vec<(i64, i64)> = Vec::with_capacity(ev.len());
        let mut len = 0;
        for (t, d) in ev {
            len += d;
            match points.last_mut() {
                Some(p) if p.0 == t => p.1 = len,
                _ => points.push((t, len)),
            }
        }
        let max_len = points.iter().map(|p| p.1).max().unwrap_or(0);
        let span = points.last().map(|p| p.0).unwrap_or(0) - points[0].0;
        let area: i128 = points.windows(2).map(|w| (w[1].0 - w[0].0) as i128 * w[0].1 as i128).sum();
        let mean_len = if span > 0 { area as f64 / span as f64 } else { 0.0 };
        out.push(QueueSeries { device, stream, points, max_len, mean_len });
    }
    out.sort_by_key(|q| (q.device, q.stream));
    out
}
