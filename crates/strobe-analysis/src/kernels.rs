//! Which kernels cost most: per kernel name, count and time, over the whole trace.

use serde::Serialize;
use strobe_model::{LaneKind, SpanKind};
use strobe_store::Store;

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct KernelStat {
    pub name: String,
    pub count: u64,
    pub total_ns: i64,
    pub mean_ns: i64,
    pub min_ns: i64,
    pub max_ns: i64,
    pub pct_kernel_time: f64,
    /// The name's string id in the store.
    #[serde(skip)]
    pub name_id: u32,
    /// The longest of its kernels (the first of them in lane order, where several are).
    #[serde(skip)]
    pub longest_span: u32,
}

/// Every kernel name with its statistics, by total time (descending), then name.
pub fn kernel_stats(store: &Store) -> Vec<KernelStat> {
    // name → (count, total, min, (max, its first span))
    let mut by_name: rustc_hash::FxHashMap<u32, (u64, i64, i64, (i64, u32))> = Default::default();
    let mut all = 0i64;
    for (lane, desc) in store.lanes.iter().enumerate() {
        if !matches!(desc.kind, LaneKind::GpuStream { .. }) {
            continue;
        }
        // a member's times are its span's: the lane's columns, not the whole trace's
        let v = store.lane_spans(lane as u32);
        for ((&sid, &start), &end) in v.span.iter().zip(v.starts).zip(v.ends) {
            let m = store.span_meta(sid);
            if SpanKind::from_u8(m.kind) != SpanKind::Kernel {
                continue;
            }
            let d = end - start;
            all += d;
            let e = by_name.entry(m.name).or_insert((0u64, 0i64, i64::MAX, (i64::MIN, sid)));
            e.0 += 1;
            e.1 += d;
            e.2 = e.2.min(d);
            if d > e.3 .0 {
                e.3 = (d, sid);
            }
        }
    }
    let mut out: Vec<KernelStat> = by_name
        .into_iter()
        .map(|(name, (count, total, min, (max, longest_span)))| KernelStat {
            name: store.string(name).to_string(),
            name_id: name,
            longest_span,
            count,
            total_ns: total,
            mean_ns: total / count as i64,
            min_ns: min,
            max_ns: max,
            pct_kernel_time: if all > 0 { total as f64 * 100.0 / all as f64 } else { 0.0 },
        })
        .collect();
    out.sort_by(|a, b| b.total_ns.cmp(&a.total_ns).then_with(|| a.name.cmp(&b.name)));
    out
}
