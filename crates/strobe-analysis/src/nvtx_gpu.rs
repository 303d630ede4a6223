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
    // each CPU lane's process, by its order of first appearance
    let mut pids: HashMap<&IdKey, usize> = HashMap::new();
    let lane_proc: Vec<Option<usize>> = store
        .lanes
        .iter()
        .map(|d| {
            let pid = process_of(&d.kind).filter(|p| strobe_model::profiler_pseudo_process(p).is_none())?;
            let n = pids.len();
            Some(*pids.entry(pid).or_insert(n))
        })
        .collect();
    let device_of: Vec<Option<i64>> = store.lanes.iter().map(|d| d.kind.device()).collect();
    // per process: the GPU work its launch calls made, by launch start. One pass over the
    // flows: looking each call's flows up by span is a binary search through the by-origin
    // order per call, a cache miss a step (it was most of this function's time)
    let mut work: Vec<Vec<Launched>> = vec![Vec::new(); pids.len()];
    for f in store.flows() {
        let (from, to) = (store.span_meta(f.from), store.span_meta(f.to));
        let Some(p) = lane_proc.get(from.lane as usize).copied().flatten() else { continue };
        if !matches!(SpanKind::from_u8(from.kind), SpanKind::CudaRuntime | SpanKind::CudaDriver) {
            continue;
        }
        let Some(device) = device_of.get(to.lane as usize).copied().flatten() else { continue };
        work[p].push(Launched {
            launch_ns: store.span_start(f.from),
            device,
            start_ns: store.span_start(f.to),
            end_ns: store.span_end(f.to),
        });
    }
    for w in &mut work {
        w.sort_unstable_by_key(|l| l.launch_ns);
    }
    let mut out = Vec::new();
    let mut under: Vec<(i64, i64, i64)> = Vec::new(); // (device, start, end), reused
    for (lane, p) in lane_proc.iter().enumerate() {
        let Some(ls) = p.map(|p| &work[p]).filter(|ls| !ls.is_empty()) else { continue };
        let v = store.lane_spans(lane as u32);
        for ((&r, &s), &e) in v.span.iter().zip(v.starts).zip(v.ends) {
            if !matches!(SpanKind::from_u8(store.span_meta(r).kind), SpanKind::Nvtx | SpanKind::UserAnnotation) {
                continue;
            }
            let from = ls.partition_point(|l| l.launch_ns < s);
            under.clear();
            under.extend(ls[from..].iter().take_while(|l| l.launch_ns <= e).map(|l| (l.device, l.start_ns, l.end_ns)));
            if under.is_empty() {
                continue;
            }
            under.sort_unstable();
            let name = store.span_name(r);
            for one in under.chunk_by(|a, b| a.0 == b.0) {
                out.push(project_one(r, name, one));
            }
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

/// A GPU span and the start of the call that launched it.
#[derive(Clone, Copy)]
struct Launched {
    launch_ns: i64,
    device: i64,
    start_ns: i64,
    end_ns: i64,
}

/// Range `span`'s projection on one device from the work it launched there, `(device, start,
/// end)` sorted by start.
fn project_one(span: u32, name: &str, work: &[(i64, i64, i64)]) -> ProjectedRange {
    let gpu_ns = total(&union(work.iter().map(|w| (w.1, w.2)).collect()));
    ProjectedRange {
        span,
        name: name.to_string(),
        device: work[0].0,
        start_ns: work.iter().map(|w| w.1).min().unwrap_or(0),
        end_ns: work.iter().map(|w| w.2).max().unwrap_or(0),
        gpu_ns,
        gpu_spans: work.len() as u32,
        depth: 0,
    }
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
