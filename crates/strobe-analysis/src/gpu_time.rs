//! Where each GPU's time goes: busy, idle, compute, comm, memory and how much comm runs
//! under compute. The definitions are `strobe report`'s, and the GUI draws the same numbers.

use crate::intervals::{intersect, total, union};
use serde::Serialize;
use strobe_model::{is_comm_kernel, LaneKind, SpanKind};
use strobe_store::Store;

/// What a span of GPU activity counts as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GpuClass {
    Compute,
    Comm,
    Memory,
}

pub fn classify(kind: SpanKind, name: &str) -> Option<GpuClass> {
    match kind {
        SpanKind::Kernel if is_comm_kernel(name) => Some(GpuClass::Comm),
        SpanKind::Kernel => Some(GpuClass::Compute),
        SpanKind::Memcpy | SpanKind::Memset => Some(GpuClass::Memory),
        _ => None,
    }
}

/// The interval unions of one device, kept for the timeline's overlap and idle bands.
#[derive(Clone, Debug, Default)]
pub struct DeviceUnions {
    pub device: i64,
    pub busy: Vec<(i64, i64)>,
    pub compute: Vec<(i64, i64)>,
    pub comm: Vec<(i64, i64)>,
    pub memory: Vec<(i64, i64)>,
    /// comm ∩ compute.
    pub overlapped: Vec<(i64, i64)>,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct GpuTime {
    pub device: i64,
    pub start_ns: i64,
    pub end_ns: i64,
    pub window_ns: i64,
    pub busy_ns: i64,
    pub idle_ns: i64,
    pub idle_pct: f64,
    pub compute_ns: i64,
    pub comm_ns: i64,
    pub memory_ns: i64,
    pub comm_overlapped_ns: i64,
    pub overlap_pct: f64,
    pub kernels: u64,
    pub memcpy: u64,
    pub memset: u64,
    /// The device's memory water level peaks, when the trace records one (filled by
    /// `report` from `memory_level`; the busy/idle figures above do not need it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory: Option<crate::memory_level::MemoryPeak>,
}

/// Every span of GPU activity, per device: (start, end, span id, class). The one place that
/// decides what counts as GPU activity; busy/idle/overlap and the idle breakdown all start here.
pub fn gpu_activity(store: &Store) -> std::collections::BTreeMap<i64, Vec<(i64, i64, u32, GpuClass)>> {
    let mut per: std::collections::BTreeMap<i64, Vec<(i64, i64, u32, GpuClass)>> = Default::default();
    let (starts, ends) = store.span_times();
    for (lane, desc) in store.lanes.iter().enumerate() {
        let LaneKind::GpuStream { device, .. } = desc.kind else { continue };
        let v = store.lane_view(lane as u32);
        let e = per.entry(device).or_default();
        for &sid in v.span {
            let m = store.span_meta(sid);
            if let Some(c) = classify(SpanKind::from_u8(m.kind), store.string(m.name)) {
                let i = sid as usize;
                if let (Some(&s), Some(&en)) = (starts.get(i), ends.get(i)) {
                    e.push((s, en, sid, c));
                }
            }
        }
    }
    per
}

/// Device unions for every GPU in the store, sorted by device.
pub fn device_unions(store: &Store) -> Vec<DeviceUnions> {
    let per: std::collections::BTreeMap<i64, [Vec<(i64, i64)>; 3]> = gpu_activity(store)
        .into_iter()
        .map(|(d, v)| {
            let mut by: [Vec<(i64, i64)>; 3] = Default::default();
            for (s, e, _, c) in v {
                by[c as usize].push((s, e));
            }
            (d, by)
        })
        .collect();
    per.into_iter()
        .map(|(device, [compute, comm, memory])| {
            let mut all = compute.clone();
            all.extend_from_slice(&comm);
            all.extend_from_slice(&memory);
            let busy = union(all);
            let compute = union(compute);
            let comm = union(comm);
            let memory = union(memory);
            let overlapped = intersect(&comm, &compute);
            DeviceUnions { device, busy, compute, comm, memory, overlapped }
        })
        .collect()
}

/// Per-device figures as `strobe report` defines them.
pub fn gpu_time(store: &Store) -> Vec<GpuTime> {
    let unions = device_unions(store);
    let mut counts: std::collections::BTreeMap<i64, (u64, u64, u64, i64, i64)> = Default::default();
    let (starts, ends) = store.span_times();
    for (lane, desc) in store.lanes.iter().enumerate() {
        let LaneKind::GpuStream { device, .. } = desc.kind else { continue };
        let v = store.lane_view(lane as u32);
        let c = counts.entry(device).or_insert((0, 0, 0, i64::MAX, i64::MIN));
        for &sid in v.span {
            let k = store.span_kind(sid);
            match k {
                SpanKind::Kernel => c.0 += 1,
                SpanKind::Memcpy => c.1 += 1,
                SpanKind::Memset => c.2 += 1,
                _ => continue,
            }
            c.3 = c.3.min(starts[sid as usize]);
            c.4 = c.4.max(ends[sid as usize]);
        }
    }
    unions
        .into_iter()
        .map(|u| {
            let (k, mc, ms, s, e) = counts.get(&u.device).copied().unwrap_or((0, 0, 0, 0, 0));
            let (s, e) = if s == i64::MAX { (0, 0) } else { (s, e) };
            let window = e - s;
            let busy = total(&u.busy);
            let comm = total(&u.comm);
            let ov = total(&u.overlapped);
            GpuTime {
                device: u.device,
                start_ns: s,
                end_ns: e,
                window_ns: window,
                busy_ns: busy,
                idle_ns: window - busy,
                idle_pct: if window > 0 { (window - busy) as f64 * 100.0 / window as f64 } else { 0.0 },
                compute_ns: total(&u.compute),
                comm_ns: comm,
                memory_ns: total(&u.memory),
                comm_overlapped_ns: ov,
                overlap_pct: if comm > 0 { ov as f64 * 100.0 / comm as f64 } else { 0.0 },
                kernels: k,
                memcpy: mc,
                memset: ms,
                memory: None,
            }
        })
        .collect()
}
