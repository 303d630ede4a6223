//! Questions asked of one span through the store's flows and nesting, answered here once so
//! that the details pane, the idle breakdown, the multi-rank tables and the timeline agree:
//! which CPU call launched a GPU span, what a span launched, which spans enclose a time.

use crate::format::{LaneIndex, FLOW_CORRELATION};
use crate::reader::Store;

/// No launch call, in `LaunchTable`.
const NO_LAUNCH: u32 = u32::MAX;

/// Each span's launch call (`Store::launch_table`), over the span ids flows reach.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct LaunchTable {
    /// The first span id `launch` covers.
    first: u32,
    launch: Vec<u32>,
}

impl LaunchTable {
    /// `Store::launch_of(span)`.
    pub fn get(&self, span: u32) -> Option<u32> {
        let i = span.checked_sub(self.first)?;
        self.launch.get(i as usize).copied().filter(|&l| l != NO_LAUNCH)
    }
}

impl Store {
    /// The CPU call that launched GPU span `span`: the CPU span of its correlation link
    /// (CUDA/HIP runtime or driver call with the same correlation id), else the source of
    /// any flow arriving at it (a trace whose launches are only explicit `ac2g` flows).
    pub fn launch_of(&self, span: u32) -> Option<u32> {
        self.flows_to(span).find(|f| f.kind == FLOW_CORRELATION).or_else(|| self.flows_to(span).next()).map(|f| f.from)
    }

    /// `launch_of` for every span at once, in one pass over the flows (stored sorted by
    /// target): for analyses that ask it of every GPU span, where a binary search per span was
    /// most of their time. Made on first use and kept (4 bytes a span from the first span a
    /// flow reaches to the last: the GPU lanes' blocks, not the CPU's): a report's launch
    /// statistics, queue lengths and idle causes share it.
    pub fn launch_table(&self) -> &LaunchTable {
        self.launches.get_or_init(|| {
            let flows = self.flows();
            // the range of targets that are spans, found whatever the order (a damaged store's
            // flows need not be sorted, nor name spans it has): never more than a slot a span
            let n = self.span_count() as u64;
            let targets = flows.iter().map(|f| f.to).filter(|&t| (t as u64) < n);
            let (Some(first), Some(last)) = (targets.clone().min(), targets.max()) else {
                return LaunchTable::default();
            };
            let mut launch = vec![NO_LAUNCH; (last - first) as usize + 1];
            let mut i = 0;
            while i < flows.len() {
                let to = flows[i].to;
                let mut j = i;
                while j < flows.len() && flows[j].to == to {
                    j += 1;
                }
                let group = &flows[i..j];
                let pick = group.iter().find(|f| f.kind == FLOW_CORRELATION).unwrap_or(&group[0]);
                if let Some(slot) = to.checked_sub(first).and_then(|k| launch.get_mut(k as usize)) {
                    *slot = pick.from;
                }
                i = j;
            }
            LaunchTable { first, launch }
        })
    }

    /// The spans `span`'s flows lead to: for a launch call, the GPU work it started; for any
    /// other span, the targets of its outgoing flows. In the stored by-source order.
    pub fn launched_by(&self, span: u32) -> impl Iterator<Item = u32> + '_ {
        self.flows_from(span).map(|f| f.to)
    }

    /// The innermost span of `lane` with start ≤ ts ≤ end (the trace-event format's rule for
    /// the slice a flow step binds to, `bind::enclosing`; on equal depth the later start).
    pub fn enclosing(&self, lane: u32, ts: i64) -> Option<u32> {
        let v = self.lane_view(lane);
        // the lane view's columns start at the lane's first member: index them from 0
        let li = LaneIndex { member_begin: 0, member_end: v.starts.len() as u64, ..Default::default() };
        let m = crate::bind::enclosing(&li, v.starts, v.ends, v.max_end, v.depth, ts)?;
        v.span.get(m as usize).copied()
    }

    /// The spans of `span`'s lane that enclose it (start at or before its start, end at or
    /// after its end, shallower), outermost first: its CPU stack. One span per depth (the
    /// lowest id where a malformed trace has several).
    pub fn enclosing_stack(&self, span: u32) -> Vec<u32> {
        let m = self.span_meta(span);
        let (ts, te) = (self.span_start(span), self.span_end(span));
        let v = self.lane_view(m.lane);
        let mut out: Vec<(u32, u32)> = Vec::new();
        // (at the last representable time the window is empty, as it wrapped to before)
        self.query_window(m.lane, ts, ts.saturating_add(1), |i| out.extend(holding(&v, i, m.depth as u32, ts, te)));
        outermost_first(out)
    }

    /// `enclosing_stack` of each of `spans`, in their order, found on all cores by sweeps over
    /// each lane's members in start order (the spans that hold a time are few on a CPU
    /// thread), where an interval query per span was the efficiency figures' largest cost.
    pub fn enclosing_stacks(&self, spans: &[u32]) -> Vec<Vec<u32>> {
        use rayon::prelude::*;
        let mut order: Vec<(u32, i64, u32)> =
            spans.iter().enumerate().map(|(i, &s)| (self.span_meta(s).lane, self.span_start(s), i as u32)).collect();
        order.par_sort_unstable();
        // a sweep per chunk of one lane's queries, each begun by one interval query
        let chunks: Vec<&[(u32, i64, u32)]> =
            order.chunk_by(|a, b| a.0 == b.0).flat_map(|c| c.chunks(STACKS_PER_SWEEP)).collect();
        let found: Vec<Vec<(u32, Vec<u32>)>> = chunks.par_iter().map(|c| self.sweep_stacks(spans, c)).collect();
        let mut out = vec![Vec::new(); spans.len()];
        for (i, stack) in found.into_iter().flatten() {
            out[i as usize] = stack;
        }
        out
    }

    /// The stacks of the queries `(lane, start, index into spans)` of one lane, by start.
    fn sweep_stacks(&self, spans: &[u32], queries: &[(u32, i64, u32)]) -> Vec<(u32, Vec<u32>)> {
        let Some(&(lane, first, _)) = queries.first() else { return Vec::new() };
        let v = self.lane_view(lane);
        // the members holding the first start: what an interval query finds there
        let mut open: Vec<usize> = Vec::new();
        crate::interval::query(v.starts, v.ends, v.max_end, first, first.saturating_add(1), |i| open.push(i));
        let mut next = v.starts.partition_point(|&s| s < first.saturating_add(1));
        let mut swept = true;
        let mut out = Vec::with_capacity(queries.len());
        for &(_, ts, i) in queries {
            let span = spans[i as usize];
            // too many open at once (a lane whose spans overlap wholesale): a query each
            swept = swept && open.len() <= MAX_OPEN;
            if !swept || ts == i64::MAX {
                out.push((i, self.enclosing_stack(span)));
                continue;
            }
            // what `query_window(ts, ts + 1)` finds: every member starting before ts + 1 that
            // overlaps ts. One that overlaps no longer never does again (later times are later)
            while next < v.starts.len() && v.starts[next] <= ts {
                open.push(next);
                next += 1;
            }
            open.retain(|&m| crate::interval::overlaps(v.starts[m], v.ends[m], ts));
            let (depth, te) = (self.span_meta(span).depth as u32, self.span_end(span));
            out.push((i, outermost_first(open.iter().filter_map(|&m| holding(&v, m, depth, ts, te)).collect())));
        }
        out
    }
}

/// Member `m` of lane view `v` as (depth, span) if it encloses a span of `depth` from `ts`
/// to `te`: shallower, starting at or before it, ending at or after it.
fn holding(v: &crate::reader::LaneView<'_>, m: usize, depth: u32, ts: i64, te: i64) -> Option<(u32, u32)> {
    (v.depth[m] < depth && v.starts[m] <= ts && v.ends[m] >= te).then(|| (v.depth[m], v.span[m]))
}

/// The enclosing spans found as (depth, span), outermost first, one per depth (the lowest id).
fn outermost_first(mut found: Vec<(u32, u32)>) -> Vec<u32> {
    found.sort_unstable();
    found.dedup_by_key(|x| x.0);
    found.into_iter().map(|x| x.1).collect()
}

/// Queries a sweep of `enclosing_stacks` answers (chunks of a lane's run in parallel).
const STACKS_PER_SWEEP: usize = 4096;
/// Spans open at once past which a sweep answers by the interval index instead.
const MAX_OPEN: usize = 256;

#[cfg(test)]
mod tests {
    use crate::{Built, FlowEnd, FlowInput, SpanInput, Store, StoreBuilder};
    use strobe_model::{IdKey, LaneKind, SourceFormat, SpanKind, TraceMeta};

    /// A CPU thread `step ⊃ forward ⊃ aten::mm ⊃ cudaLaunchKernel` plus a second launch,
    /// and a GPU stream whose `gemm` and `relu` are linked to those launches by correlation
    /// id; `gemm` also has an explicit flow from `aten::mm`, and `orphan` only an explicit
    /// flow from `forward`.
    fn store() -> (Store, u32, u32) {
        let mut b = StoreBuilder::in_memory();
        let cpu = b.lane(LaneKind::CpuThread { pid: IdKey::Num(1), tid: IdKey::Num(1) });
        let gpu = b.lane(LaneKind::GpuStream { device: 0, stream: 7 });
        let cat = b.intern("c");
        let mut ids = std::collections::HashMap::new();
        for (lane, name, start, end, kind, correlation) in [
            (cpu, "step", 0, 100, SpanKind::CpuOp, 0),
            (cpu, "forward", 10, 50, SpanKind::CpuOp, 0),
            (cpu, "aten::mm", 20, 35, SpanKind::CpuOp, 0),
            (cpu, "launch1", 25, 28, SpanKind::CudaRuntime, 7),
            (cpu, "launch2", 60, 62, SpanKind::CudaRuntime, 8),
            (gpu, "gemm", 40, 60, SpanKind::Kernel, 7),
            (gpu, "relu", 70, 80, SpanKind::Kernel, 8),
            (gpu, "orphan", 90, 95, SpanKind::Kernel, 0),
        ] {
            let name_id = b.intern(name);
            let s = SpanInput {
                lane,
                start,
                end,
                name: name_id,
                cat,
                kind,
                flags: 0,
                args: b"",
                correlation,
                copy_dir: None,
            };
            ids.insert(name, b.push_span(s).unwrap());
        }
        let flow = b.intern("ac2g");
        for (from, to) in [("aten::mm", "gemm"), ("forward", "orphan")] {
            b.push_flow(FlowInput {
                from: FlowEnd::Span(ids[from]),
                to: FlowEnd::Span(ids[to]),
                id: 1,
                cat: flow,
                name: flow,
                from_ts: 0,
                to_ts: 0,
            });
        }
        let st = b.finish(&TraceMeta::new(SourceFormat::Kineto, "t")).unwrap().into_store().unwrap();
        (st, cpu, gpu)
    }

    fn id(st: &Store, name: &str) -> u32 {
        (0..st.span_count() as u32).find(|&s| st.span_name(s) == name).unwrap()
    }

    #[test]
    fn launch_of_prefers_the_correlation_link_then_any_flow() {
        let (st, _, _) = store();
        let n = |s: &str| id(&st, s);
        // gemm has both an explicit flow (from aten::mm) and its correlation link
        assert_eq!(st.launch_of(n("gemm")), Some(n("launch1")));
        assert_eq!(st.launch_of(n("relu")), Some(n("launch2")));
        assert_eq!(st.launch_of(n("orphan")), Some(n("forward")));
        assert_eq!(st.launch_of(n("step")), None);
    }

    #[test]
    fn launched_by_follows_outgoing_flows() {
        let (st, _, _) = store();
        let n = |s: &str| id(&st, s);
        let by = |s: &str| st.launched_by(n(s)).collect::<Vec<_>>();
        assert_eq!(by("launch1"), vec![n("gemm")]);
        assert_eq!(by("launch2"), vec![n("relu")]);
        assert_eq!(by("forward"), vec![n("orphan")]);
        assert_eq!(by("aten::mm"), vec![n("gemm")]);
        assert!(by("gemm").is_empty());
    }

    #[test]
    fn enclosing_finds_the_innermost_span_at_a_time() {
        let (st, cpu, gpu) = store();
        let n = |s: &str| id(&st, s);
        assert_eq!(st.enclosing(cpu, 26), Some(n("launch1")));
        assert_eq!(st.enclosing(cpu, 20), Some(n("aten::mm")));
        assert_eq!(st.enclosing(cpu, 15), Some(n("forward")));
        assert_eq!(st.enclosing(cpu, 55), Some(n("step")));
        // closed on the right, as the flow binding rule
        assert_eq!(st.enclosing(cpu, 100), Some(n("step")));
        assert_eq!(st.enclosing(cpu, 150), None);
        assert_eq!(st.enclosing(gpu, 45), Some(n("gemm")));
        assert_eq!(st.enclosing(gpu, 65), None);
        assert_eq!(st.enclosing(99, 45), None);
    }

    #[test]
    fn enclosing_stack_is_outermost_first() {
        let (st, _, _) = store();
        let n = |s: &str| id(&st, s);
        assert_eq!(st.enclosing_stack(n("launch1")), vec![n("step"), n("forward"), n("aten::mm")]);
        assert_eq!(st.enclosing_stack(n("launch2")), vec![n("step")]);
        assert!(st.enclosing_stack(n("step")).is_empty());
        assert!(st.enclosing_stack(n("gemm")).is_empty());
    }

    #[test]
    fn launch_table_is_launch_of_for_every_span() {
        let (st, _, _) = store();
        let t = st.launch_table();
        for s in 0..st.span_count() as u32 {
            assert_eq!(t.get(s), st.launch_of(s), "{}", st.span_name(s));
        }
    }

    /// Args with their correlation id kept apart read back with it as the first member, and
    /// a text that repeats is written once.
    #[test]
    fn args_correlation_is_spliced_in_and_repeated_texts_stored_once() {
        let mut b = StoreBuilder::in_memory();
        let gpu = b.lane(LaneKind::GpuStream { device: 0, stream: 7 });
        let cat = b.intern("kernel");
        let args: [(&[u8], u32); 5] = [
            (b"{\"grid\":[1,1,1]}", 41),
            (b"{\"grid\":[1,1,1]}", 42),
            (b"", 43),
            (b"{ }", 44),
            (b"{\"grid\":[1,1,1]}", 0),
        ];
        for (i, (a, corr)) in args.iter().enumerate() {
            let s = SpanInput {
                lane: gpu,
                start: i as i64 * 10,
                end: i as i64 * 10 + 5,
                name: cat,
                cat,
                kind: SpanKind::Kernel,
                flags: 0,
                args: a,
                correlation: 0,
                copy_dir: None,
            };
            b.push_span_correlated(s, *corr).unwrap();
        }
        let bytes = match b.finish(&TraceMeta::new(SourceFormat::Kineto, "t")).unwrap() {
            Built::Memory(m) => m,
            Built::File(_) => unreachable!("an in-memory builder"),
        };
        let once = bytes.windows(16).filter(|w| w == b"{\"grid\":[1,1,1]}").count();
        assert_eq!(once, 1, "the repeated text is written once");
        let st = Store::from_bytes(bytes).unwrap();
        let got: Vec<String> = (0..5).map(|i| st.span_args(i).into_owned()).collect();
        assert_eq!(
            got,
            [
                "{\"correlation\":41,\"grid\":[1,1,1]}",
                "{\"correlation\":42,\"grid\":[1,1,1]}",
                "{\"correlation\":43}",
                "{\"correlation\":44}",
                "{\"grid\":[1,1,1]}",
            ]
        );
        for a in &got {
            serde_json::from_str::<serde_json::Value>(a).unwrap();
        }
    }

    /// Spans of two CPU threads, nested, crossing, repeated and zero-length, ids in any order.
    fn thread_store(spans: &[(bool, i64, i64)]) -> Store {
        let mut b = StoreBuilder::in_memory();
        let lanes = [
            b.lane(LaneKind::CpuThread { pid: IdKey::Num(1), tid: IdKey::Num(1) }),
            b.lane(LaneKind::CpuThread { pid: IdKey::Num(1), tid: IdKey::Num(2) }),
        ];
        let name = b.intern("op");
        for &(second, start, len) in spans {
            let s = SpanInput {
                lane: lanes[second as usize],
                start,
                end: start + len,
                name,
                cat: name,
                kind: SpanKind::CpuOp,
                flags: 0,
                args: b"",
                correlation: 0,
                copy_dir: None,
            };
            b.push_span(s).unwrap();
        }
        b.finish(&TraceMeta::new(SourceFormat::Kineto, "t")).unwrap().into_store().unwrap()
    }

    proptest::proptest! {
        #[test]
        fn enclosing_stacks_are_each_spans_enclosing_stack(
            spans in proptest::collection::vec((proptest::bool::ANY, 0i64..400, 0i64..120), 1..300),
            picks in proptest::collection::vec(0usize..1000, 0..60),
        ) {
            let st = thread_store(&spans);
            let n = st.span_count();
            // every span, then some again, in an order of their own
            let asked: Vec<u32> = (0..n as u32).rev().chain(picks.iter().map(|&p| (p % n) as u32)).collect();
            let got = st.enclosing_stacks(&asked);
            for (&s, stack) in asked.iter().zip(&got) {
                proptest::prop_assert_eq!(stack, &st.enclosing_stack(s), "span {}", s);
            }
        }
    }

    #[test]
    fn enclosing_stacks_past_a_sweeps_queries_and_open_spans() {
        // a deep thread of 10 000 spans (several sweeps), then 300 spans open at once (past
        // what a sweep keeps open: answered one by one)
        let mut spans: Vec<(bool, i64, i64)> = Vec::new();
        for i in 0..10_000i64 {
            spans.push((false, i * 10, 10 + (i % 7) * 15));
        }
        for i in 0..300i64 {
            spans.push((true, i, 100_000 - i));
        }
        let st = thread_store(&spans);
        let asked: Vec<u32> = (0..st.span_count() as u32).collect();
        let got = st.enclosing_stacks(&asked);
        for (&s, stack) in asked.iter().zip(&got) {
            assert_eq!(stack, &st.enclosing_stack(s), "span {s}");
        }
        assert!(got.iter().any(|s| s.len() > 200), "the open spans enclose each other");
    }
}
