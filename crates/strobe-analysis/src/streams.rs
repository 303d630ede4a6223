//! Per GPU stream: how many kernels and how long the stream was busy.

use serde::Serialize;
use strobe_model::{LaneKind, SpanKind};
use strobe_store::Store;

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct StreamStat {
    pub device: i64,
    pub stream: i64,
    pub kernels: u64,
    pub busy_ns: i64,
}

pub fn stream_stats(store: &Store) -> Vec<StreamStat> {
    let mut out = Vec::new();
    for (lane, desc) in store.lanes.iter().enumerate() {
        let LaneKind::GpuStream { device, stream } = desc.kind else { continue };
        // the lane's members come by start, with their spans' times: the busy union grows
        // from its last interval as they come (no interval gathered and sorted again)
        let v = store.lane_spans(lane as u32);
        let mut kernels = 0;
        let (mut busy, mut open) = (0i64, None::<(i64, i64)>);
        for ((&sid, &start), &end) in v.span.iter().zip(v.starts).zip(v.ends) {
            let k = store.span_kind(sid);
            if k == SpanKind::Kernel {
                kernels += 1;
            }
            // touching intervals merge, empty ones vanish (as `intervals::union`)
            if !k.is_gpu_activity() || end <= start {
                continue;
            }
            open = match open {
                Some((s, e)) if start <= e => Some((s, e.max(end))),
                Some((s, e)) => {
                    busy += e - s;
                    Some((start, end))
                }
                None => Some((start, end)),
            };
        }
        busy += open.map_or(0, |(s, e)| e - s);
        out.push(StreamStat { device, stream, kernels, busy_ns: busy });
    }
    out.sort_by_key(|s| (s.device, s.stream));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::intervals::{total, union};
    use crate::test_util::{finished, span, Seeded};
    use strobe_store::StoreBuilder;

    #[test]
    fn a_streams_busy_time_is_the_union_of_its_gpu_spans() {
        let mut rng = Seeded(0x2545_f491_4f6c_dd1d);
        let mut b = StoreBuilder::in_memory();
        let (k, a, cat) = (b.intern("gemm"), b.intern("annotation"), b.intern("kernel"));
        let mut want = Vec::new();
        for stream in 0..3 {
            let lane = b.lane(LaneKind::GpuStream { device: 0, stream });
            let (mut iv, mut kernels, mut t) = (Vec::new(), 0u64, 0i64);
            for _ in 0..300 {
                // nested, touching and empty spans; annotations do not count as busy
                t += rng.below(4) as i64 * 10;
                let end = t + rng.below(5) as i64 * 10;
                let kind = if rng.below(5) == 0 { SpanKind::GpuAnnotation } else { SpanKind::Kernel };
                if kind == SpanKind::Kernel {
                    kernels += 1;
                    iv.push((t, end));
                }
                let name = if kind == SpanKind::Kernel { k } else { a };
                b.push_span(span(lane, t, end, name, cat, kind)).unwrap();
            }
            want.push(StreamStat { device: 0, stream, kernels, busy_ns: total(&union(iv)) });
        }
        assert_eq!(stream_stats(&finished(b)), want);
    }
}
