//! NVTX (and `record_function`) ranges projected onto the GPU, as Nsight Systems' "NVTX GPU
//! projection" does: a CPU range covers, on each device, the GPU work launched while it was
//! open — by correlation of the launches inside it. Launches from any thread of the range's
//! process count (autograd runs the backward on its own thread, inside ranges opened on the
//! main one), by time on that process. Per device, the projected range spans its first
//! kernel's start to its last one's end; its GPU time is the union of that work.

use crate::intervals::{total, union};
use serde::Serialize;
use std::collections::HashMap;
use strobe_model::{IdKey, LaneKind, SpanKind};
use strobe_store::Store;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ProjectedRange {
    /// The CPU range's span and name.
    pub span: u32,
    pub name: String,
    pub device: i64,
    /// First start and last end of the GPU work it launched (trace clock).
    pub start_ns: i64,
    pub end_ns: i64,
    /// The union of that work.
    pub gpu_ns: i64,
    /// GPU spans (kernels, copies, memsets) it launched.
    pub gpu_spans: u32,
    /// Row within the device's projection: nested ranges below their parents, overlapping
    /// ones side by side.
    pub depth: u32,
}

/// Per range name: how many ranges and the GPU time they account for (summed per range).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RangeGpuTime {
    pub name: String,
    pub count: u64,
    pub gpu_ns: i64,
    pub gpu_spans: u64,
}

fn process_of(kind: &LaneKind) -> Option<&IdKey> {
    match kind {
        LaneKind::CpuThread { pid, .. } | LaneKind::Nvtx { pid, .. } => Some(pid),
        _ => None,
    }
}

/// Every CPU range with GPU work under it, projected per device, sorted by (device, start).
pub fn project(store: &Store) -> Vec<ProjectedRange> {
    // per process: its launches by start, each with the GPU spans it made
    let mut launches: HashMap<&IdKey, Vec<(i64, u32)>> = HashMap::new();
    let mut ranges: Vec<(&IdKey, u32)> = Vec::new();
    for (lane, d) in store.lanes.iter().enumerate() {
        let Some(pid) = process_of(&d.kind) else { continue };
        if strobe_model::profiler_pseudo_process(pid).is_some() {
            continue;
        }
        let v = store.lane_spans(lane as u32);
        for &sid in v.span {
            match SpanKind::from_u8(store.span_meta(sid).kind) {
                SpanKind::CudaRuntime | SpanKind::CudaDriver if store.launched_by(sid).next().is_some() => {
                    launches.entry(pid).or_default().push((store.span_start(sid), sid))
                }
                SpanKind::Nvtx | SpanKind::UserAnnotation => ranges.push((pid, sid)),
                _ => {}
            }
        }
    }
    for l in launches.values_mut() {
        l.sort_unstable();
    }
    let mut out = Vec::new();
    for (pid, r) in ranges {
        let Some(ls) = launches.get(pid) else { continue };
        let (s, e) = (store.span_start(r), store.span_end(r));
        let from = ls.partition_point(|l| l.0 < s);
        let mut per_dev: HashMap<i64, Vec<(i64, i64)>> = HashMap::new();
        for &(_, launch) in ls[from..].iter().take_while(|l| l.0 <= e) {
            for g in store.launched_by(launch) {
                let lane = store.span_meta(g).lane;
                if let Some(dev) = store.lanes.get(lane as usize).and_then(|d| d.kind.device()) {
                    per_dev.entry(dev).or_default().push((store.span_start(g), store.span_end(g)));
                }
            }
        }
        let name = store.span_name(r).to_string();
        for (device, ivs) in per_dev {
            let u = union(ivs.clone());
            out.push(ProjectedRange {
                span: r,
                name: name.clone(),
                device,
                start_ns: ivs.iter().map(|i| i.0).min().unwrap_or(0),
                end_ns: ivs.iter().map(|i| i.1).max().unwrap_or(0),
                gpu_ns: total(&u),
                gpu_spans: ivs.len() as u32,
                depth: 0,
            });
        }
    }
    // rows: the longest first, each on the first row where it overlaps nothing already
    // there, so a parent sits above what nests in it
    out.sort_by(|a, b| {
        (a.device, a.start_ns, std::cmp::Reverse(a.end_ns), a.span).cmp(&(
            b.device,
            b.start_ns,
            std::cmp::Reverse(b.end_ns),
            b.span,
        ))
    });
    let mut rows: HashMap<i64, Vec<i64>> = HashMap::new(); // per device: each row's last end
    for p in &mut out {
        let ends = rows.entry(p.device).or_default();
        let row = ends.iter().position(|&end| end <= p.start_ns).unwrap_or(ends.len());
        if row == ends.len() {
            ends.push(p.end_ns);
        } else {
            ends[row] = p.end_ns;
        }
        p.depth = row as u32;
    }
    out
}

/// GPU time per range name, most first (the ranges' own figures summed: a nested name's
/// time is also inside its parent's).
pub fn by_name(projected: &[ProjectedRange]) -> Vec<RangeGpuTime> {
    let mut m: HashMap<&str, RangeGpuTime> = HashMap::new();
    for p in projected {
        let e = m.entry(p.name.as_str()).or_insert_with(|| RangeGpuTime {
            name: p.name.clone(),
            count: 0,
            gpu_ns: 0,
            gpu_spans: 0,
        });
        e.count += 1;
        e.gpu_ns += p.gpu_ns;
        e.gpu_spans += p.gpu_spans as u64;
    }
    let mut v: Vec<RangeGpuTime> = m.into_values().collect();
    v.sort_by(|a, b| b.gpu_ns.cmp(&a.gpu_ns).then_with(|| a.name.cmp(&b.name)));
    v
}
