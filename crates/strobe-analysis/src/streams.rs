//! Per GPU stream: how many kernels and how long the stream was busy.

use crate::intervals::{total, union};
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
    let (starts, ends) = store.span_times();
    let mut out = Vec::new();
    for (lane, desc) in store.lanes.iter().enumerate() {
        let LaneKind::GpuStream { device, stream } = desc.kind else { continue };
        let v = store.lane_spans(lane as u32);
        let mut kernels = 0;
        let mut iv = Vec::with_capacity(v.span.len());
        for &sid in v.span {
            let k = store.span_kind(sid);
            if k == SpanKind::Kernel {
                kernels += 1;
            }
            if k.is_gpu_activity() {
                iv.push((starts[sid as usize], ends[sid as usize]));
            }
        }
        out.push(StreamStat { device, stream, kernels, busy_ns: total(&union(iv)) });
    }
    out.sort_by_key(|s| (s.device, s.stream));
    out
}
