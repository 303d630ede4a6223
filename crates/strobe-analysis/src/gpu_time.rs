//! Where each GPU's time goes: busy, idle, compute, comm, memory and how much comm runs
//! under compute. The definitions are `strobe report`'s, and the GUI draws the same numbers.

use crate::intervals::{intersect, total};
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
    /// What the spans of the device were, counted as the unions were made.
    pub counts: ActivityCounts,
}

/// A device's GPU spans counted by kind, and the window from the first start to the last end
/// (0, 0 where it has none).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ActivityCounts {
    pub start_ns: i64,
    pub end_ns: i64,
    pub kernels: u64,
    pub memcpy: u64,
    pub memset: u64,
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
    /// The device's sampled metrics (Nsight Systems GPU metrics) over its window and per
    /// step, usual ones first (filled by `TraceFigures::gpus`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub metrics: Vec<crate::gpu_metrics::GpuMetric>,
    /// Kernel-busy time with few SMs active, from those metrics.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub busy_not_working: Option<crate::gpu_metrics::not_working::BusyNotWorking>,
    /// The metrics during the longest-running kernel names (filled by `report`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kernel_metrics: Vec<crate::gpu_metrics::kernels::KernelMetrics>,
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

/// Every span of GPU activity, per device (every device with a GPU stream, sorted), gathered;
/// what counts is `Classifier`'s. Busy/idle/overlap and the idle breakdown read the lanes
/// merged instead (`device_unions`), without gathering: this is for a caller that wants the
/// spans themselves (and `device_unions_of` them, which the merge is tested against).
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

/// Device unions for every GPU of `activity` (spans in any order), sorted by device.
pub fn device_unions_of(activity: Vec<DeviceActivity>) -> Vec<DeviceUnions> {
    activity
        .into_iter()
        .map(|mut a| {
            a.spans.sort_unstable_by_key(|x| (x.start, x.end, x.span));
            let mut u = UnionsBuilder::new(a.device, a.spans.len());
            a.spans.iter().for_each(|x| u.push(x));
            u.finish()
        })
        .collect()
}

/// Device unions for every GPU in the store, sorted by device: each device's lanes merged in
/// (start, end, id) order (`merge_lanes`), no span gathered.
pub fn device_unions(store: &Store) -> Vec<DeviceUnions> {
    let mut lanes: std::collections::BTreeMap<i64, Vec<u32>> = Default::default();
    for (lane, desc) in store.lanes.iter().enumerate() {
        if let LaneKind::GpuStream { device, .. } = desc.kind {
            lanes.entry(device).or_default().push(lane as u32);
        }
    }
    let mut classes = Classifier::new(store);
    lanes
        .into_iter()
        .map(|(device, lanes)| {
            let most = lanes.iter().map(|&l| store.lane_spans(l).span.len()).sum();
            let mut u = UnionsBuilder::new(device, most);
            merge_lanes(store, &lanes, &mut classes, |x| u.push(&x));
            u.finish()
        })
        .collect()
}

/// Calls `f` with the GPU activity spans of `lanes` in (start, end, id) order. Each lane's
/// members come by start, so merging the lanes gives that order without gathering a device's
/// spans to sort them (24 bytes each, a million on a rank: the largest thing a report held).
/// Members of one lane that start together are put in (end, id) order among themselves.
fn merge_lanes(store: &Store, lanes: &[u32], classes: &mut Classifier, mut f: impl FnMut(ActivitySpan)) {
    use std::cmp::Reverse;
    struct Cursor<'a> {
        v: strobe_store::LaneSpans<'a>,
        next: usize,
        /// The next members to hand out, last first.
        ready: Vec<ActivitySpan>,
    }
    impl Cursor<'_> {
        /// Member `i` as GPU activity, or None for what is not.
        fn activity(&self, i: usize, store: &Store, classes: &mut Classifier) -> Option<ActivitySpan> {
            let (sid, start, end) = (self.v.span[i], self.v.starts[i], self.v.ends[i]);
            let m = store.span_meta(sid);
            let kind = SpanKind::from_u8(m.kind);
            classes.class(kind, m.name).map(|class| ActivitySpan { start, end, span: sid, kind, class })
        }

        fn pop(&mut self, store: &Store, classes: &mut Classifier) -> Option<ActivitySpan> {
            let n = self.v.span.len();
            loop {
                if let Some(x) = self.ready.pop() {
                    return Some(x);
                }
                let i = self.next;
                if i >= n {
                    return None;
                }
                let start = self.v.starts[i];
                if i + 1 == n || self.v.starts[i + 1] != start {
                    // alone at its start (nearly every member of a stream): nothing to order
                    self.next += 1;
                    match self.activity(i, store, classes) {
                        Some(x) => return Some(x),
                        None => continue,
                    }
                }
                while self.next < n && self.v.starts[self.next] == start {
                    if let Some(x) = self.activity(self.next, store, classes) {
                        self.ready.push(x);
                    }
                    self.next += 1;
                }
                self.ready.sort_unstable_by_key(|x| Reverse((x.end, x.span)));
            }
        }
    }
    let mut cursors: Vec<Cursor> = Vec::with_capacity(lanes.len());
    for &lane in lanes {
        let v = store.lane_spans(lane);
        let mut c = Cursor { v, next: 0, ready: Vec::new() };
        if !v.starts.is_sorted() {
            // not a store's order (its members are by start; a damaged store's need not be):
            // the lane's spans gathered and sorted here, then handed out from `ready`
            let mut all = Vec::new();
            while let Some(x) = c.pop(store, classes) {
                all.push(x);
            }
            all.sort_unstable_by_key(|x| Reverse((x.start, x.end, x.span)));
            c.ready = all;
        }
        cursors.push(c);
    }
    // each lane's next span, the first of them on top
    let mut heads = std::collections::BinaryHeap::with_capacity(cursors.len());
    let key = |x: &ActivitySpan, i: usize| Reverse((x.start, x.end, x.span, i));
    let mut next: Vec<Option<ActivitySpan>> = Vec::with_capacity(cursors.len());
    for (i, c) in cursors.iter_mut().enumerate() {
        let x = c.pop(store, classes);
        if let Some(x) = &x {
            heads.push(key(x, i));
        }
        next.push(x);
    }
    while let Some(mut top) = heads.peek_mut() {
        let Reverse((.., i)) = *top;
        f(next[i].expect("a head has its span"));
        next[i] = cursors[i].pop(store, classes);
        // the lane's next span takes its place at the top and sinks once (not a pop and a push)
        match &next[i] {
            Some(y) => *top = key(y, i),
            None => drop(std::collections::binary_heap::PeekMut::pop(top)),
        }
    }
}

/// One device's unions from its spans, handed in (start, end, id) order: each union grows
/// from its last interval as the spans come by start, so no class's spans are copied out to
/// be sorted again. Touching intervals merge and empty ones vanish, as in `intervals::union`.
struct UnionsBuilder {
    u: DeviceUnions,
}

impl UnionsBuilder {
    /// For at most `most` spans: each union is sized for them up front (one interval a span
    /// at most). Pages past what is written are never touched; doubling would copy each
    /// union into fresh pages and hold both while it did.
    fn new(device: i64, most: usize) -> UnionsBuilder {
        let counts = ActivityCounts { start_ns: i64::MAX, end_ns: i64::MIN, ..Default::default() };
        let room = || Vec::with_capacity(most);
        let u = DeviceUnions {
            device,
            busy: room(),
            busy_edges: Vec::with_capacity(most),
            compute: room(),
            comm: room(),
            memory: room(),
            overlapped: Vec::new(),
            counts,
        };
        UnionsBuilder { u }
    }

    fn push(&mut self, x: &ActivitySpan) {
        let u = &mut self.u;
        match x.kind {
            SpanKind::Memcpy => u.counts.memcpy += 1,
            SpanKind::Memset => u.counts.memset += 1,
            _ => u.counts.kernels += 1,
        }
        u.counts.start_ns = u.counts.start_ns.min(x.start);
        u.counts.end_ns = u.counts.end_ns.max(x.end);
        if x.end <= x.start {
            return;
        }
        // the busy interval's edges: the first span (by start, end, id) that opens it and
        // the first that reaches its end
        match u.busy.last_mut() {
            Some(last) if x.start <= last.1 => {
                if x.end > last.1 {
                    last.1 = x.end;
                    u.busy_edges.last_mut().expect("one edge pair per interval").1 = x.span;
                }
            }
            _ => {
                u.busy.push((x.start, x.end));
                u.busy_edges.push((x.span, x.span));
            }
        }
        let class = match x.class {
            GpuClass::Compute => &mut u.compute,
            GpuClass::Comm => &mut u.comm,
            GpuClass::Memory => &mut u.memory,
        };
        match class.last_mut() {
            Some(last) if x.start <= last.1 => last.1 = last.1.max(x.end),
            _ => class.push((x.start, x.end)),
        }
    }

    fn finish(mut self) -> DeviceUnions {
        let u = &mut self.u;
        if u.counts.start_ns == i64::MAX {
            (u.counts.start_ns, u.counts.end_ns) = (0, 0);
        }
        u.overlapped = intersect(&u.comm, &u.compute);
        self.u
    }
}

/// Per-device figures as `strobe report` defines them.
pub fn gpu_time(store: &Store) -> Vec<GpuTime> {
    gpu_time_of(&device_unions(store))
}

/// `gpu_time` from the device unions already computed (`device_unions_of`).
pub fn gpu_time_of(unions: &[DeviceUnions]) -> Vec<GpuTime> {
    unions
        .iter()
        .map(|u| {
            let ActivityCounts { start_ns: s, end_ns: e, kernels, memcpy, memset } = u.counts;
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
                kernels,
                memcpy,
                memset,
                memory: None,
                metrics: Vec::new(),
                busy_not_working: None,
                kernel_metrics: Vec::new(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::intervals::union;

    fn span(start: i64, end: i64, span: u32) -> ActivitySpan {
        ActivitySpan { start, end, span, kind: SpanKind::Kernel, class: GpuClass::Compute }
    }

    #[test]
    fn busy_union_keeps_the_spans_at_each_edge() {
        // touching intervals merge, the empty one vanishes; the second run opens with the
        // span first by (start, end) and closes with the one reaching its end
        let spans =
            [span(0, 10, 1), span(5, 20, 2), span(20, 25, 3), span(30, 30, 4), span(40, 50, 5), span(40, 45, 6)];
        let act = vec![DeviceActivity { device: 0, spans: spans.to_vec() }];
        let u = device_unions_of(act);
        assert_eq!(u[0].busy, vec![(0, 25), (40, 50)]);
        assert_eq!(u[0].busy_edges, vec![(1, 3), (6, 5)]);
        assert_eq!(u[0].busy, union(spans.iter().map(|x| (x.start, x.end)).collect()));
        // counts and window come from the same activity
        let g = &gpu_time_of(&u)[0];
        assert_eq!((g.kernels, g.start_ns, g.end_ns, g.busy_ns, g.idle_ns), (6, 0, 50, 35, 15));
    }

    #[test]
    fn the_class_unions_are_the_unions_of_each_class() {
        // spans of three classes on several streams, overlapping, touching and empty ones,
        // in lane order (each stream by start): every union is `intervals::union` of its
        // class's spans, and overlapped is comm ∩ compute
        let mut seed = 0x9e37_79b9_u64;
        let mut next = |m: u64| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) % m
        };
        let classes = [GpuClass::Compute, GpuClass::Comm, GpuClass::Memory];
        let mut spans = Vec::new();
        let mut id = 0;
        for _stream in 0..5 {
            let mut t = 0i64;
            for _ in 0..400 {
                t += next(30) as i64;
                let class = classes[next(3) as usize];
                let kind = if class == GpuClass::Memory { SpanKind::Memcpy } else { SpanKind::Kernel };
                spans.push(ActivitySpan { start: t, end: t + next(50) as i64, span: id, kind, class });
                id += 1;
            }
        }
        let of = |c: GpuClass| union(spans.iter().filter(|x| x.class == c).map(|x| (x.start, x.end)).collect());
        let u = &device_unions_of(vec![DeviceActivity { device: 3, spans: spans.clone() }])[0];
        assert_eq!(u.compute, of(GpuClass::Compute));
        assert_eq!(u.comm, of(GpuClass::Comm));
        assert_eq!(u.memory, of(GpuClass::Memory));
        assert_eq!(u.busy, union(spans.iter().map(|x| (x.start, x.end)).collect()));
        assert_eq!(u.overlapped, intersect(&of(GpuClass::Comm), &of(GpuClass::Compute)));
        assert_eq!(u.busy.len(), u.busy_edges.len());
        let memcpy = spans.iter().filter(|x| x.kind == SpanKind::Memcpy).count() as u64;
        assert_eq!((u.counts.memcpy, u.counts.kernels), (memcpy, spans.len() as u64 - memcpy));
    }

    #[test]
    fn the_lanes_merged_give_the_unions_of_all_spans_sorted() {
        use crate::test_util::{finished, span, Seeded};
        use strobe_model::IdKey;
        let mut rng = Seeded(0x2545_f491_4f6c_dd1d);
        for round in 0..20 {
            let mut b = strobe_store::StoreBuilder::in_memory();
            let names = [b.intern("gemm"), b.intern("ncclKernel_AllReduce"), b.intern("copy")];
            let cat = b.intern("kernel");
            let cpu = b.lane(LaneKind::CpuThread { pid: IdKey::Num(1), tid: IdKey::Num(1) });
            // (device, start, end, class) of every GPU span, for the unions by definition
            let mut pushed: Vec<(i64, i64, i64, GpuClass)> = Vec::new();
            for device in 0..2 {
                for stream in 0..(round % 4 + 1) {
                    let lane = b.lane(LaneKind::GpuStream { device, stream });
                    let mut t = 0i64;
                    for _ in 0..(50 + round * 10) {
                        // starts repeat, spans nest and touch, some are empty
                        t += rng.below(4) as i64 * 5;
                        let end = t + rng.below(6) as i64 * 5;
                        let pick = rng.below(3) as usize;
                        let (kind, class) = match pick {
                            0 => (SpanKind::Kernel, GpuClass::Compute),
                            1 => (SpanKind::Kernel, GpuClass::Comm),
                            _ => (SpanKind::Memcpy, GpuClass::Memory),
                        };
                        b.push_span(span(lane, t, end, names[pick], cat, kind)).unwrap();
                        pushed.push((device, t, end, class));
                    }
                }
            }
            // a CPU span is no GPU activity
            b.push_span(span(cpu, 0, 10_000, names[0], cat, SpanKind::CpuOp)).unwrap();
            let store = finished(b);
            let merged = device_unions(&store);
            let sorted = device_unions_of(gpu_activity(&store));
            assert_eq!(merged.len(), 2);
            for (m, s) in merged.iter().zip(&sorted) {
                let of = |c: Option<GpuClass>| {
                    union(
                        pushed
                            .iter()
                            .filter(|p| p.0 == m.device && c.is_none_or(|c| p.3 == c))
                            .map(|p| (p.1, p.2))
                            .collect(),
                    )
                };
                assert_eq!(m.busy, of(None), "round {round}");
                assert_eq!(m.compute, of(Some(GpuClass::Compute)));
                assert_eq!(m.comm, of(Some(GpuClass::Comm)));
                assert_eq!(m.memory, of(Some(GpuClass::Memory)));
                assert_eq!(m.overlapped, intersect(&m.comm, &m.compute));
                // the same edges and counts as every span gathered and sorted
                assert_eq!((&m.busy_edges, m.counts), (&s.busy_edges, s.counts), "round {round}");
                let n = pushed.iter().filter(|p| p.0 == m.device).count() as u64;
                assert_eq!(m.counts.kernels + m.counts.memcpy, n);
            }
        }
    }
}
