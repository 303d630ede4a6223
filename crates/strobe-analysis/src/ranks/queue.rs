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
    /// (ts, queue length from ts on): a step function, one point per change. Empty in the
    /// several-rank report (`queue_summary`) and left out of JSON (one point per launch and
    /// per start); the GUI draws `queue_length`'s as a counter.
    #[serde(skip)]
    pub points: Vec<(i64, i64)>,
    pub max_len: i64,
    /// Time-weighted mean between the first and the last point.
    pub mean_len: f64,
}

/// Each stream's queue series, its points included (what the GUI draws).
pub fn queue_length(store: &Store) -> Vec<QueueSeries> {
    series(store, true)
}

/// Each stream's maximum and mean queue length, `points` left empty: what the several-rank
/// report keeps (two points per launch held for a whole report were tens of MB a rank).
pub fn queue_summary(store: &Store) -> Vec<QueueSeries> {
    series(store, false)
}

fn series(store: &Store, keep_points: bool) -> Vec<QueueSeries> {
    let mut out = Vec::new();
    let launches = store.launch_table();
    let mut classes = Classifier::new(store);
    for (lane, desc) in store.lanes.iter().enumerate() {
        let LaneKind::GpuStream { device, stream } = desc.kind else { continue };
        let v = store.lane_spans(lane as u32);
        // the ops' starts come in lane order (ascending); only the launches need sorting.
        // Then the two merge: no 16-byte event per launch and per start to sort
        let mut launched: Vec<i64> = Vec::with_capacity(v.span.len());
        let mut started: Vec<i64> = Vec::with_capacity(v.span.len());
        for (k, &sid) in v.span.iter().enumerate() {
            let m = store.span_meta(sid);
            if classes.class(SpanKind::from_u8(m.kind), m.name).is_none() {
                continue;
            }
            if let Some(l) = launches.get(sid) {
                launched.push(store.span_start(l));
                started.push(v.starts[k]);
            }
        }
        if launched.is_empty() {
            continue;
        }
        launched.sort_unstable();
        let mut points: Vec<(i64, i64)> =
            Vec::with_capacity(if keep_points { launched.len() + started.len() } else { 0 });
        // the point being made (one per instant: the length after every change at it), the
        // first instant, and the area under the points already closed
        let (mut cur, mut first, mut area, mut max_len) = (None::<(i64, i64)>, 0i64, 0i128, 0i64);
        let (mut i, mut j, mut len) = (0, 0, 0i64);
        while i < launched.len() || j < started.len() {
            // at one instant, count the launch before the start it may be paired with
            let t = if j == started.len() || (i < launched.len() && launched[i] <= started[j]) {
                len += 1;
                i += 1;
                launched[i - 1]
            } else {
                len -= 1;
                j += 1;
                started[j - 1]
            };
            match cur {
                Some((ct, _)) if ct == t => cur = Some((t, len)),
                Some((ct, cl)) => {
                    area += (t - ct) as i128 * cl as i128;
                    max_len = max_len.max(cl);
                    if keep_points {
                        points.push((ct, cl));
                    }
                    cur = Some((t, len));
                }
                None => (first, cur) = (t, Some((t, len))),
            }
        }
        let (last, last_len) = cur.expect("a launch makes a point");
        max_len = max_len.max(last_len);
        if keep_points {
            points.push((last, last_len));
        }
        let span = last - first;
        let mean_len = if span > 0 { area as f64 / span as f64 } else { 0.0 };
        out.push(QueueSeries { device, stream, points, max_len, mean_len });
    }
    out.sort_by_key(|q| (q.device, q.stream));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use strobe_model::{IdKey, SourceFormat, TraceMeta};
    use strobe_store::{SpanInput, StoreBuilder};

    /// The series by its definition: +1 at each launch, −1 at each start, sorted by time
    /// with a launch before a start at one instant; one point per instant.
    fn by_definition(ops: &[(i64, i64)]) -> Vec<(i64, i64)> {
        let mut ev: Vec<(i64, i64)> = ops.iter().flat_map(|&(start, launch)| [(launch, 1), (start, -1)]).collect();
        ev.sort_by_key(|&(t, d)| (t, -d));
        let mut points: Vec<(i64, i64)> = Vec::new();
        let mut len = 0;
        for (t, d) in ev {
            len += d;
            match points.last_mut() {
                Some(p) if p.0 == t => p.1 = len,
                _ => points.push((t, len)),
            }
        }
        points
    }

    #[test]
    fn merged_launches_and_starts_give_the_defined_series() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for round in 0..40 {
            let mut b = StoreBuilder::in_memory();
            let gpu = b.lane(LaneKind::GpuStream { device: 0, stream: 7 });
            let cpu = b.lane(LaneKind::CpuThread { pid: IdKey::Num(1), tid: IdKey::Num(1) });
            let (k, l) = (b.intern("gemm"), b.intern("cudaLaunchKernel"));
            let (ck, cr) = (b.intern("kernel"), b.intern("cuda_runtime"));
            // (op start, launch start): launches out of order and on the same instants as starts
            let mut ops = Vec::new();
            for i in 0..(round * 3 + 1) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let start = (x % 40) as i64 * 10;
                let launch = start - (x >> 20) as i64 % 60;
                ops.push((start, launch));
                let c = i as i64 + 1;
                let span = |lane, start, end, name, cat, kind| SpanInput {
                    lane,
                    start,
                    end,
                    name,
                    cat,
                    kind,
                    flags: 0,
                    args: b"",
                    correlation: c,
                    copy_dir: None,
                };
                b.push_span(span(cpu, launch, launch + 3, l, cr, SpanKind::CudaRuntime)).unwrap();
                b.push_span(span(gpu, start, start + 5, k, ck, SpanKind::Kernel)).unwrap();
            }
            let store = b.finish(&TraceMeta::new(SourceFormat::Kineto, "t")).unwrap().into_store().unwrap();
            let q = queue_length(&store);
            assert_eq!(q.len(), 1);
            let want = by_definition(&ops);
            assert_eq!(q[0].points, want, "round {round}");
            assert_eq!(q[0].max_len, want.iter().map(|p| p.1).max().unwrap());
            // the mean by its definition: time-weighted between the first and last point
            let span = want.last().unwrap().0 - want[0].0;
            let area: i64 = want.windows(2).map(|w| (w[1].0 - w[0].0) * w[0].1).sum();
            let mean = if span > 0 { area as f64 / span as f64 } else { 0.0 };
            assert_eq!(q[0].mean_len, mean, "round {round}");
            // the summary has the same figures without the points
            let s = &queue_summary(&store)[0];
            assert!(s.points.is_empty());
            assert_eq!((s.max_len, s.mean_len), (q[0].max_len, q[0].mean_len));
        }
    }
}
