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

/// `classify` for the spans of one store, each kernel name's class decided once: a kernel's
/// class depends on its name only, and scanning a (templated, often 200-character) name for
/// "nccl" at each of a million launches was most of a whole-trace scan's time.
pub struct Classifier<'s> {
    store: &'s Store,
    kernel_class: Vec<Option<GpuClass>>,
    known: Vec<bool>,
}

impl<'s> Classifier<'s> {
    pub fn new(store: &'s Store) -> Classifier<'s> {
        let n = store.string_count();
        Classifier { store, kernel_class: vec![None; n], known: vec![false; n] }
    }

    /// The class of a span of `kind` named by string id `name`.
    pub fn class(&mut self, kind: SpanKind, name: u32) -> Option<GpuClass> {
        if kind != SpanKind::Kernel {
            return classify(kind, "");
        }
        let i = name as usize;
        match self.known.get(i) {
            Some(true) => self.kernel_class[i],
            Some(false) => {
                let c = classify(kind, self.store.string(name));
                (self.known[i], self.kernel_class[i]) = (true, c);
                c
            }
            None => classify(kind, self.store.string(name)),
        }
    }
}

/// The interval unions of one device, kept for the timeline's overlap and idle bands.
#[derive(Clone, Debug, Default)]
pub struct DeviceUnions {
    pub device: i64,
    pub busy: Vec<(i64, i64)>,
    /// Per busy interval: the GPU span that opens it and the one that reaches its end (the
    /// idle breakdown's neighbours of each gap).
    pub busy_edges: Vec<(u32, u32)>,
    pub compute: Vec<(i64, i64)>,
    pub comm: Vec<(i64, i64)>,
    pub memory: Vec<(i64, i64)>,
    /// comm ∩ compute.
    pub overlapped: Vec<(i64, i64)>,
}

#[derive(Clone, Debug, Serialize, serde::Deserialize, PartialEq)]
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

/// One span of GPU activity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ActivitySpan {
    pub start: i64,
    pub end: i64,
    pub span: u32,
    pub kind: SpanKind,
    pub class: GpuClass,
}

/// Every span of GPU activity of one device, in lane order.
#[derive(Clone, Debug, Default)]
pub struct DeviceActivity {
    pub device: i64,
    pub spans: Vec<ActivitySpan>,
}

/// Every span of GPU activity, per device (every device with a GPU stream, sorted). The one
/// place that decides what counts as GPU activity; busy/idle/overlap and the idle breakdown
/// all start here. One scan of the GPU lanes: callers that need several figures compute it
/// once and hand it on (`device_unions_of`, `gpu_time_of`).
pub fn gpu_activity(store: &Store) -> Vec<DeviceActivity> {
    let mut per: std::collections::BTreeMap<i64, Vec<ActivitySpan>> = Default::default();
    let mut classes = Classifier::new(store);
    for (lane, desc) in store.lanes.iter().enumerate() {
        let LaneKind::GpuStream { device, .. } = desc.kind else { continue };
        // a member's times are its span's: the lane's own columns, not the whole trace's
        // (a compressed store then decodes the GPU lanes' chunks only)
        let v = store.lane_spans(lane as u32);
        let e = per.entry(device).or_default();
        // sized up front: doubling copies a million spans into fresh pages again and again
        e.reserve(v.span.len());
        for ((&sid, &start), &end) in v.span.iter().zip(v.starts).zip(v.ends) {
            let m = store.span_meta(sid);
            let kind = SpanKind::from_u8(m.kind);
            if let Some(class) = classes.class(kind, m.name) {
                e.push(ActivitySpan { start, end, span: sid, kind, class });
            }
        }
    }
    per.into_iter().map(|(device, spans)| DeviceActivity { device, spans }).collect()
}

/// Busy intervals, and per interval the span ids at its (start, end) edges.
type UnionWithEdges = (Vec<(i64, i64)>, Vec<(u32, u32)>);

/// The busy union of spans with the span ids at each interval's edges: per interval, the
/// first span (by start, end, id) that opens it and the first that reaches its end. The
/// same merge as `intervals::union` (touching intervals merge, empty ones vanish).
fn busy_union(spans: &[ActivitySpan]) -> UnionWithEdges {
    let mut v: Vec<(i64, i64, u32)> = Vec::with_capacity(spans.len());
    v.extend(spans.iter().filter(|x| x.end > x.start).map(|x| (x.start, x.end, x.span)));
    // the stable sort finds the runs each stream's lane left sorted and merges them (the
    // unstable one re-sorted a million spans from scratch: most of the union's time); the
    // elements are distinct (span ids), so the order is the same
    v.sort();
    let (mut busy, mut edges): UnionWithEdges = (Vec::new(), Vec::new());
    for (s, e, sid) in v {
        match busy.last_mut() {
            Some(last) if s <= last.1 => {
                if e > last.1 {
                    last.1 = e;
                    edges.last_mut().expect("one edge pair per interval").1 = sid;
                }
            }
            _ => {
                busy.push((s, e));
                edges.push((sid, sid));
            }
        }
    }
    (busy, edges)
}

/// Device unions for every GPU of `activity`, sorted by device.
pub fn device_unions_of(activity: &[DeviceActivity]) -> Vec<DeviceUnions> {
    activity
        .iter()
        .map(|a| {
            let mut sizes = [0usize; 3];
            for x in &a.spans {
                sizes[x.class as usize] += 1;
            }
            let mut by: [Vec<(i64, i64)>; 3] = sizes.map(Vec::with_capacity);
            for x in &a.spans {
                by[x.class as usize].push((x.start, x.end));
            }
            let [compute, comm, memory] = by;
            let (busy, busy_edges) = busy_union(&a.spans);
            let compute = union(compute);
            let comm = union(comm);
            let memory = union(memory);
            let overlapped = intersect(&comm, &compute);
            DeviceUnions { device: a.device, busy, busy_edges, compute, comm, memory, overlapped }
        })
        .collect()
}

/// Device unions for every GPU in the store, sorted by device.
pub fn device_unions(store: &Store) -> Vec<DeviceUnions> {
    device_unions_of(&gpu_activity(store))
}

/// Per-device figures as `strobe report` defines them.
pub fn gpu_time(store: &Store) -> Vec<GpuTime> {
    let activity = gpu_activity(store);
    gpu_time_of(&activity, &device_unions_of(&activity))
}

/// `gpu_time` from activity and unions already computed (`unions` from `device_unions_of`
/// over the same `activity`).
pub fn gpu_time_of(activity: &[DeviceActivity], unions: &[DeviceUnions]) -> Vec<GpuTime> {
    unions
        .iter()
        .map(|u| {
            let (mut k, mut mc, mut ms, mut s, mut e) = (0u64, 0u64, 0u64, i64::MAX, i64::MIN);
            for x in activity.iter().filter(|a| a.device == u.device).flat_map(|a| &a.spans) {
                match x.kind {
                    SpanKind::Memcpy => mc += 1,
                    SpanKind::Memset => ms += 1,
                    _ => k += 1,
                }
                s = s.min(x.start);
                e = e.max(x.end);
            }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn span(start: i64, end: i64, span: u32) -> ActivitySpan {
        ActivitySpan { start, end, span, kind: SpanKind::Kernel, class: GpuClass::Compute }
    }

    #[test]
    fn busy_union_keeps_the_spans_at_each_edge() {
        // touching intervals merge, the empty one vanishes; the second run opens with the
        // span first by (start, end) and closes with the one reaching its end
        let spans =
            [span(0, 10, 1), span(5, 20, 2), span(20, 25, 3), span(30, 30, 4), span(40, 50, 5), span(40, 45, 6)];
        let (busy, edges) = busy_union(&spans);
        assert_eq!(busy, vec![(0, 25), (40, 50)]);
        assert_eq!(edges, vec![(1, 3), (6, 5)]);
        assert_eq!(busy, union(spans.iter().map(|x| (x.start, x.end)).collect()));
        // counts and window come from the same activity
        let act = [DeviceActivity { device: 0, spans: spans.to_vec() }];
        let g = &gpu_time_of(&act, &device_unions_of(&act))[0];
        assert_eq!((g.kernels, g.start_ns, g.end_ns, g.busy_ns, g.idle_ns), (6, 0, 50, 35, 15));
    }
}
