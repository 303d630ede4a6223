//! CUDA graphs: each graph launch (`cudaGraphLaunch`, `cuGraphLaunch`, `hipGraphLaunch`) with
//! the GPU work it ran, replays of one graph gathered into one row, their kernels grouped by
//! graph node, and each node's kernel attributed to the op that captured it where the trace
//! records the capture.
//!
//! A launch reaches its kernels through the store's correlation links (CUPTI gives every
//! kernel of a graph launch the launch's correlation id). Which graph it ran comes from the
//! kernels' args, as each producer writes them: Kineto's `graph id` / `graph node id`, XLA's
//! `cuda_graph_id` / `cuda_graph_node_id`, and the same names from an Nsight Systems export's
//! `graphId` / `graphNodeId` columns. Where the kernels carry only node ids (nsys exports
//! without a graph id column), the replays of one graph share their node ids, so the graph is
//! named by its lowest node id; where they carry neither, replays that ran the same kernels in
//! the same order are taken as one graph.
//!
//! The capture: a graph node records which call made it where the trace says so. An Nsight
//! Systems export with node tracing lists each node's creation (`CUDA_GRAPH_NODE_EVENTS`, read
//! as `graph node created` spans on the thread that made it, with the node id it was cloned
//! from), so an executed node leads back to the captured node and the CPU op around the
//! launch that created it.

use rustc_hash::FxHashMap;
use serde::Serialize;
use strobe_model::{LaneKind, SpanKind};
use strobe_store::Store;

/// The name of the span an importer makes of a graph node's creation (its args carry
/// `graph node id` and, for a node cloned into an executable graph, `original graph node id`).
pub const NODE_CREATED: &str = "graph node created";

/// How one graph is told apart from the others.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(tag = "by", content = "value", rename_all = "snake_case")]
pub enum GraphKey {
    /// The graph id its kernels carry.
    Id(u64),
    /// No graph id: the lowest node id among its kernels.
    LowestNode(u64),
    /// Neither: a hash of its kernels' names in order.
    Kernels(u64),
}

/// One graph's replays, kernels and time.
#[derive(Clone, Debug, Serialize)]
pub struct CudaGraph {
    pub key: GraphKey,
    /// "CUDA graph 7", "CUDA graph (node 1234)", "CUDA graph of 42 kernels".
    pub label: String,
    /// Its launches, by launch time (their count in JSON).
    #[serde(serialize_with = "count")]
    pub replays: Vec<Replay>,
    /// Its nodes (one per node id, else per position in the replay), in node order.
    pub nodes: Vec<GraphNode>,
    /// GPU activities a replay ran (the most any replay ran).
    pub kernels_per_replay: usize,
    /// Σ of its GPU activities' durations over all replays.
    pub total_ns: i64,
    /// Per replay, Σ of its GPU activities' durations.
    pub mean_ns: i64,
    pub min_ns: i64,
    pub max_ns: i64,
    /// Of all GPU activity time (kernels, copies, sets) in the trace.
    pub pct_gpu_time: f64,
    /// Mean time from a replay's first GPU activity's start to its last one's end.
    pub mean_extent_ns: i64,
    /// Σ of its launch calls' CPU durations.
    pub launch_cpu_ns: i64,
    /// The innermost op around its launches (the most common), e.g. the compiled region that
    /// replays it.
    pub launched_from: Option<String>,
    /// The ops that captured its nodes, with the GPU time of the nodes each captured (largest
    /// first); empty where the trace does not record the capture.
    pub captured_by: Vec<CapturedBy>,
}

fn count<S: serde::Serializer>(v: &[Replay], s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(v.len() as u64)
}

/// The report's section: the `top` graphs by GPU time, one line each.
pub fn write_text(o: &mut String, graphs: &[CudaGraph], top: usize) {
    use std::fmt::Write as _;
    if graphs.is_empty() {
        return;
    }
    let _ = writeln!(o, "\nCUDA graphs by total GPU time (replays of one graph together):");
    let _ = writeln!(
        o,
        "  {:>7} {:>7} {:>12} {:>12} {:>12} {:>12} {:>6}  graph",
        "replays", "kernels", "total", "mean", "min", "max", "%"
    );
    for g in graphs.iter().take(top) {
        let from = g.launched_from.as_deref().map(|f| format!(" · from {}", clip(f, 70))).unwrap_or_default();
        let caps: Vec<String> = g.captured_by.iter().take(3).map(|c| format!("{} ({})", c.op, c.nodes)).collect();
        let caps = if caps.is_empty() { String::new() } else { format!(" · captured by {}", caps.join(", ")) };
        let _ = writeln!(
            o,
            "  {:>7} {:>7} {:>12} {:>12} {:>12} {:>12} {:>5.1}%  {}{from}{caps}",
            g.replays.len(),
            g.kernels_per_replay,
            crate::report::fmt_ns(g.total_ns),
            crate::report::fmt_ns(g.mean_ns),
            crate::report::fmt_ns(g.min_ns),
            crate::report::fmt_ns(g.max_ns),
            g.pct_gpu_time,
            g.label
        );
    }
}

/// `s` cut to `n` characters, an ellipsis marking the cut.
fn clip(s: &str, n: usize) -> String {
    if s.chars().count() > n {
        s.chars().take(n - 1).chain(['…']).collect()
    } else {
        s.to_string()
    }
}

/// One launch of a graph.
#[derive(Clone, Debug, Serialize)]
pub struct Replay {
    /// The launch call (CPU span id).
    pub launch: u32,
    /// Its GPU activities (span ids), by start.
    pub spans: Vec<u32>,
    pub gpu_start: i64,
    pub gpu_end: i64,
    /// Σ of its GPU activities' durations.
    pub gpu_ns: i64,
}

/// One node of a graph: the kernel (or copy) it ran in each replay.
#[derive(Clone, Debug, Serialize)]
pub struct GraphNode {
    /// The node id its kernels carry (None: told apart by position in the replay).
    pub node_id: Option<u64>,
    pub name: String,
    pub count: u64,
    pub total_ns: i64,
    /// The op that captured it, where the trace records the capture.
    pub captured_by: Option<String>,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct CapturedBy {
    pub op: String,
    /// Nodes it captured.
    pub nodes: usize,
    /// Their GPU time over all replays.
    pub gpu_ns: i64,
}

/// Every CUDA graph of the trace, by total GPU time (largest first).
#[derive(Clone, Debug, Default, Serialize)]
pub struct CudaGraphs {
    pub graphs: Vec<CudaGraph>,
    /// Graph launches whose GPU work is not in the trace (cut off by the capture window, or a
    /// trace without GPU activity).
    pub launches_without_gpu_work: usize,
    /// Which graph, replay and node each launch and GPU activity belongs to.
    #[serde(skip)]
    pub by_span: FxHashMap<u32, Place>,
}

/// Where a span sits among the graphs: the graph (index into `graphs`), the replay (index
/// into its `replays`) and, for a GPU activity, the node (index into its `nodes`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Place {
    pub graph: u32,
    pub replay: u32,
    pub node: Option<u32>,
}

impl CudaGraphs {
    pub fn place(&self, span: u32) -> Option<Place> {
        self.by_span.get(&span).copied()
    }

    pub fn is_empty(&self) -> bool {
        self.graphs.is_empty()
    }
}

/// A graph launch call: CUDA runtime / driver or HIP (`cudaGraphLaunch`, `cudaGraphLaunch_v10000`,
/// `cuGraphLaunch_ptsz`, XLA's `cuGraphLaunch (CudaGraph: 3)`, `hipGraphLaunch`).
pub fn is_graph_launch(name: &str) -> bool {
    ["cudaGraphLaunch", "cuGraphLaunch", "hipGraphLaunch"].iter().any(|p| name.starts_with(p))
}

/// The graph and node ids a GPU activity's args carry (numbers, or numbers as text).
pub fn graph_ids(args: &str) -> (Option<u64>, Option<u64>) {
    if !args.contains("graph") {
        return (None, None);
    }
    let Ok(serde_json::Value::Object(m)) = serde_json::from_str::<serde_json::Value>(args) else {
        return (None, None);
    };
    let num = |keys: &[&str]| {
        keys.iter().find_map(|k| match m.get(*k)? {
            serde_json::Value::Number(n) => n.as_u64(),
            serde_json::Value::String(s) => s.trim().parse().ok(),
            _ => None,
        })
    };
    // CUPTI writes 0 where a kernel was not launched by a graph
    let graph = num(&["graph id", "cuda_graph_id"]).filter(|&g| g != 0);
    let node = num(&["graph node id", "cuda_graph_node_id"]).filter(|&n| n != 0);
    (graph, node)
}

/// Every graph launch of `store` with its GPU work, grouped into graphs.
pub fn cuda_graphs(store: &Store) -> CudaGraphs {
    let launch_names: Vec<u32> =
        (0..store.string_count() as u32).filter(|&i| is_graph_launch(store.string(i))).collect();
    if launch_names.is_empty() {
        return CudaGraphs::default();
    }
    let mut launches: Vec<u32> = store
        .span_metas()
        .iter()
        .enumerate()
        .filter(|(_, m)| {
            matches!(SpanKind::from_u8(m.kind), SpanKind::CudaRuntime | SpanKind::CudaDriver)
                && launch_names.contains(&m.name)
        })
        .map(|(i, _)| i as u32)
        .collect();
    launches.sort_by_key(|&s| (store.span_start(s), s));
    let mut out = CudaGraphs::default();
    // each replay's key, its spans with their node ids
    let mut found: Vec<(GraphKey, Replay, Vec<Option<u64>>)> = Vec::new();
    for &l in &launches {
        let mut spans: Vec<u32> = store.launched_by(l).filter(|&s| store.span_kind(s).is_gpu_activity()).collect();
        if spans.is_empty() {
            out.launches_without_gpu_work += 1;
            continue;
        }
        spans.sort_by_key(|&s| (store.span_start(s), s));
        spans.dedup();
        let ids: Vec<(Option<u64>, Option<u64>)> = spans.iter().map(|&s| graph_ids(&store.span_args(s))).collect();
        let key = if let Some(g) = ids.iter().find_map(|i| i.0) {
            GraphKey::Id(g)
        } else if let Some(n) = ids.iter().filter_map(|i| i.1).min() {
            GraphKey::LowestNode(n)
        } else {
            GraphKey::Kernels(names_hash(store, &spans))
        };
        let gpu_ns = spans.iter().map(|&s| store.span_end(s) - store.span_start(s)).sum();
        let gpu_start = spans.iter().map(|&s| store.span_start(s)).min().unwrap_or(0);
        let gpu_end = spans.iter().map(|&s| store.span_end(s)).max().unwrap_or(0);
        let nodes = ids.iter().map(|i| i.1).collect();
        found.push((key, Replay { launch: l, spans, gpu_start, gpu_end, gpu_ns }, nodes));
    }
    let mut by_key: FxHashMap<GraphKey, Vec<NodedReplay>> = FxHashMap::default();
    let mut order: Vec<GraphKey> = Vec::new();
    for (k, r, n) in found {
        let e = by_key.entry(k).or_default();
        if e.is_empty() {
            order.push(k);
        }
        e.push((r, n));
    }
    let all_kernel_ns = kernel_time(store);
    let creators = NodeCreators::of(store);
    for key in order {
        let replays = by_key.remove(&key).unwrap_or_default();
        out.graphs.push(graph_of(store, key, replays, all_kernel_ns, &creators));
    }
    out.graphs.sort_by(|a, b| b.total_ns.cmp(&a.total_ns).then(a.key.cmp(&b.key)));
    for (gi, g) in out.graphs.iter().enumerate() {
        let node_index: FxHashMap<Option<u64>, u32> = g
            .nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| n.node_id.is_some())
            .map(|(i, n)| (n.node_id, i as u32))
            .collect();
        for (ri, r) in g.replays.iter().enumerate() {
            let place = |node| Place { graph: gi as u32, replay: ri as u32, node };
            out.by_span.insert(r.launch, place(None));
            for (pos, &s) in r.spans.iter().enumerate() {
                let node = match graph_ids(&store.span_args(s)).1 {
                    Some(n) => node_index.get(&Some(n)).copied(),
                    None => (pos < g.nodes.len()).then_some(pos as u32),
                };
                out.by_span.insert(s, place(node));
            }
        }
    }
    out
}

/// A replay with the node id of each of its spans.
type NodedReplay = (Replay, Vec<Option<u64>>);

/// One graph from its replays: nodes, statistics, the ops around its launches and captures.
fn graph_of(
    store: &Store,
    key: GraphKey,
    replays: Vec<NodedReplay>,
    all_kernel_ns: i64,
    creators: &NodeCreators,
) -> CudaGraph {
    // nodes by id, else by position in the replay
    let mut nodes: Vec<GraphNode> = Vec::new();
    let mut index: FxHashMap<(Option<u64>, usize), usize> = FxHashMap::default();
    for (r, ids) in &replays {
        for (pos, (&s, &node)) in r.spans.iter().zip(ids).enumerate() {
            let k = (node, if node.is_some() { 0 } else { pos });
            let i = *index.entry(k).or_insert_with(|| {
                nodes.push(GraphNode {
                    node_id: node,
                    name: store.span_name(s).to_string(),
                    count: 0,
                    total_ns: 0,
                    captured_by: node.and_then(|n| creators.op_of(store, n)),
                });
                nodes.len() - 1
            });
            nodes[i].count += 1;
            nodes[i].total_ns += store.span_end(s) - store.span_start(s);
        }
    }
    if nodes.iter().all(|n| n.node_id.is_some()) {
        nodes.sort_by_key(|n| n.node_id);
    }
    let replays: Vec<Replay> = replays.into_iter().map(|(r, _)| r).collect();
    let n = replays.len().max(1) as i64;
    let total_ns: i64 = replays.iter().map(|r| r.gpu_ns).sum();
    let label = match key {
        GraphKey::Id(g) => format!("CUDA graph {g}"),
        GraphKey::LowestNode(nd) => format!("CUDA graph (node {nd})"),
        GraphKey::Kernels(_) => {
            format!("CUDA graph of {} kernels", replays.iter().map(|r| r.spans.len()).max().unwrap_or(0))
        }
    };
    let mut captured: FxHashMap<&str, (usize, i64)> = FxHashMap::default();
    for nd in &nodes {
        if let Some(op) = &nd.captured_by {
            let e = captured.entry(op.as_str()).or_default();
            e.0 += 1;
            e.1 += nd.total_ns;
        }
    }
    let mut captured_by: Vec<CapturedBy> =
        captured.into_iter().map(|(op, (nodes, gpu_ns))| CapturedBy { op: op.to_string(), nodes, gpu_ns }).collect();
    captured_by.sort_by(|a, b| b.gpu_ns.cmp(&a.gpu_ns).then_with(|| a.op.cmp(&b.op)));
    CudaGraph {
        key,
        label,
        kernels_per_replay: replays.iter().map(|r| r.spans.len()).max().unwrap_or(0),
        total_ns,
        mean_ns: total_ns / n,
        min_ns: replays.iter().map(|r| r.gpu_ns).min().unwrap_or(0),
        max_ns: replays.iter().map(|r| r.gpu_ns).max().unwrap_or(0),
        pct_gpu_time: if all_kernel_ns > 0 { total_ns as f64 * 100.0 / all_kernel_ns as f64 } else { 0.0 },
        mean_extent_ns: replays.iter().map(|r| r.gpu_end - r.gpu_start).sum::<i64>() / n,
        launch_cpu_ns: replays.iter().map(|r| store.span_end(r.launch) - store.span_start(r.launch)).sum(),
        launched_from: most_common(replays.iter().filter_map(|r| innermost_op(store, r.launch))),
        captured_by,
        nodes,
        replays,
    }
}

/// Σ of every GPU activity's duration on the GPU stream lanes: kernels, copies and sets, as a
/// graph runs them all (the share's denominator).
fn kernel_time(store: &Store) -> i64 {
    let mut all = 0i64;
    for (lane, desc) in store.lanes.iter().enumerate() {
        if !matches!(desc.kind, LaneKind::GpuStream { .. }) {
            continue;
        }
        let v = store.lane_spans(lane as u32);
        for ((&sid, &s), &e) in v.span.iter().zip(v.starts).zip(v.ends) {
            if SpanKind::from_u8(store.span_meta(sid).kind).is_gpu_activity() {
                all += e - s;
            }
        }
    }
    all
}

/// FNV-1a over the activities' name ids in order (the same string table: ids compare names).
fn names_hash(store: &Store, spans: &[u32]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &s in spans {
        for b in store.span_meta(s).name.to_le_bytes() {
            h ^= b as u64;
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

/// The innermost op, annotation or NVTX range around `span` on its thread (not a runtime
/// call), by name.
fn innermost_op(store: &Store, span: u32) -> Option<String> {
    op_around(store, span, store.span_start(span), store.span_end(span))
}

fn is_op(k: SpanKind) -> bool {
    matches!(k, SpanKind::CpuOp | SpanKind::UserAnnotation | SpanKind::Nvtx | SpanKind::PythonFunction)
}

fn most_common(names: impl Iterator<Item = String>) -> Option<String> {
    let mut c: FxHashMap<String, usize> = FxHashMap::default();
    for n in names {
        *c.entry(n).or_default() += 1;
    }
    c.into_iter().max_by(|a, b| a.1.cmp(&b.1).then_with(|| b.0.cmp(&a.0))).map(|(n, _)| n)
}

/// The `graph node created` spans by node id: where each node was made, and the node it was
/// cloned from.
struct NodeCreators {
    /// node id → (creation span, original node id)
    by_node: FxHashMap<u64, (u32, Option<u64>)>,
}

impl NodeCreators {
    fn of(store: &Store) -> NodeCreators {
        let mut by_node = FxHashMap::default();
        let Some(name) = (0..store.string_count() as u32).find(|&i| store.string(i) == NODE_CREATED) else {
            return NodeCreators { by_node };
        };
        for (i, m) in store.span_metas().iter().enumerate() {
            if m.name != name {
                continue;
            }
            let args = store.span_args(i as u32);
            let Ok(serde_json::Value::Object(a)) = serde_json::from_str::<serde_json::Value>(&args) else { continue };
            let Some(node) = a.get("graph node id").and_then(|v| v.as_u64()) else { continue };
            let original = a.get("original graph node id").and_then(|v| v.as_u64()).filter(|&o| o != node);
            // nsys lists a cloned node twice, once without its original: the original wins
            let e = by_node.entry(node).or_insert((i as u32, original));
            if e.1.is_none() {
                *e = (i as u32, original);
            }
        }
        NodeCreators { by_node }
    }

    /// The op around the creation of `node`, following clones back to the captured node (the
    /// op that launched the kernel while the stream was captured).
    fn op_of(&self, store: &Store, node: u64) -> Option<String> {
        let mut n = node;
        // a chain of clones is short; the bound guards a cycle in a damaged export
        for _ in 0..16 {
            let &(span, original) = self.by_node.get(&n)?;
            match original {
                Some(o) if self.by_node.contains_key(&o) => n = o,
                _ => return creating_op(store, span),
            }
        }
        None
    }
}

/// The op around a node's creation: the innermost one holding its time on its thread.
fn creating_op(store: &Store, created: u32) -> Option<String> {
    let ts = store.span_start(created);
    op_around(store, created, ts, ts)
}

/// The latest-starting op-like span holding [t0, t1] on `span`'s thread, other than `span`:
/// on the thread's lane (ops, annotations, Python) and on its NVTX lane, where an nsys
/// export's ranges are.
fn op_around(store: &Store, span: u32, t0: i64, t1: i64) -> Option<String> {
    let m = store.span_meta(span);
    let (pid, tid) = match &store.lanes.get(m.lane as usize)?.kind {
        LaneKind::CpuThread { pid, tid } | LaneKind::Nvtx { pid, tid } => (pid.clone(), tid.clone()),
        _ => return None,
    };
    let mut best: Option<(i64, u32)> = None;
    for (lane, d) in store.lanes.iter().enumerate() {
        let same = match &d.kind {
            LaneKind::CpuThread { pid: p, tid: t } | LaneKind::Nvtx { pid: p, tid: t } => *p == pid && *t == tid,
            _ => false,
        };
        if !same {
            continue;
        }
        let v = store.lane_view(lane as u32);
        store.query_window(lane as u32, t0, t1.saturating_add(1), |i| {
            let s = v.span[i];
            if s == span || !is_op(store.span_kind(s)) {
                return;
            }
            let (a, b) = (v.starts[i], v.ends[i]);
            if a <= t0 && t1 <= b && best.is_none_or(|x| (a, s) > x) {
                best = Some((a, s));
            }
        });
    }
    best.map(|(_, s)| store.span_name(s).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use strobe_model::{IdKey, LaneKind, SourceFormat, SpanKind, TraceMeta};
    use strobe_store::{SpanInput, StoreBuilder};

    struct B {
        b: StoreBuilder,
        cpu: u32,
        gpu: u32,
        cat: u32,
    }

    impl B {
        fn new() -> B {
            let mut b = StoreBuilder::in_memory();
            let gpu = b.lane(LaneKind::GpuStream { device: 0, stream: 7 });
            let cpu = b.lane(LaneKind::CpuThread { pid: IdKey::Num(1), tid: IdKey::Num(1) });
            let cat = b.intern("c");
            B { b, cpu, gpu, cat }
        }

        fn span(&mut self, lane: u32, (start, end): (i64, i64), name: &str, kind: SpanKind, corr: i64, args: &str) {
            let name = self.b.intern(name);
            let s = SpanInput {
                lane,
                start,
                end,
                name,
                cat: self.cat,
                kind,
                flags: 0,
                args: args.as_bytes(),
                correlation: corr,
                copy_dir: None,
            };
            self.b.push_span(s).unwrap();
        }

        fn store(self) -> Store {
            self.b.finish(&TraceMeta::new(SourceFormat::Kineto, "t")).unwrap().into_store().unwrap()
        }
    }

    /// Kernels as Kineto writes them: each with its graph and node id.
    fn kineto_args(graph: u64, node: u64) -> String {
        format!(r#"{{"graph id": {graph}, "graph node id": {node}}}"#)
    }

    #[test]
    fn replays_of_one_graph_are_one_graph_with_its_nodes() {
        let mut b = B::new();
        let cpu = b.cpu;
        let gpu = b.gpu;
        // graph 5 launched three times, two kernels each; graph 9 once, one kernel
        for (i, t) in [0i64, 1000, 2000].into_iter().enumerate() {
            let c = 10 + i as i64;
            b.span(cpu, (t - 100, t + 100), "replay", SpanKind::CpuOp, 0, "");
            b.span(cpu, (t - 50, t - 40), "cudaGraphLaunch", SpanKind::CudaRuntime, c, "");
            b.span(gpu, (t, t + 10 + i as i64), "gemm", SpanKind::Kernel, c, &kineto_args(5, 100));
            b.span(gpu, (t + 20, t + 50), "relu", SpanKind::Kernel, c, &kineto_args(5, 101));
        }
        b.span(cpu, (2950, 2960), "cudaGraphLaunch", SpanKind::CudaRuntime, 20, "");
        b.span(gpu, (3000, 3007), "softmax", SpanKind::Kernel, 20, &kineto_args(9, 300));
        // an ordinary launch and a graph launch whose work is outside the trace
        b.span(cpu, (3950, 3960), "cudaLaunchKernel", SpanKind::CudaRuntime, 30, "");
        b.span(gpu, (4000, 4100), "other", SpanKind::Kernel, 30, "");
        b.span(cpu, (5000, 5010), "cudaGraphLaunch", SpanKind::CudaRuntime, 40, "");
        let st = b.store();
        let g = cuda_graphs(&st);
        assert_eq!(g.launches_without_gpu_work, 1);
        assert_eq!(g.graphs.len(), 2);
        let a = &g.graphs[0];
        assert_eq!((a.key, a.label.as_str()), (GraphKey::Id(5), "CUDA graph 5"));
        assert_eq!(a.replays.len(), 3);
        assert_eq!(a.kernels_per_replay, 2);
        // per replay 10+30, 11+30, 12+30
        assert_eq!((a.total_ns, a.mean_ns, a.min_ns, a.max_ns), (123, 41, 40, 42));
        assert_eq!(a.mean_extent_ns, 50);
        assert_eq!(a.launch_cpu_ns, 30);
        assert_eq!(a.launched_from.as_deref(), Some("replay"));
        let nodes: Vec<(Option<u64>, &str, u64, i64)> =
            a.nodes.iter().map(|n| (n.node_id, n.name.as_str(), n.count, n.total_ns)).collect();
        assert_eq!(nodes, vec![(Some(100), "gemm", 3, 33), (Some(101), "relu", 3, 90)]);
        // all kernel time: 123 + 7 + 100
        assert!((a.pct_gpu_time - 123.0 * 100.0 / 230.0).abs() < 1e-9);
        let b9 = &g.graphs[1];
        assert_eq!((b9.key, b9.replays.len(), b9.total_ns), (GraphKey::Id(9), 1, 7));
        assert!(b9.launched_from.is_none());
        // places: the launch and each kernel
        let launch = a.replays[1].launch;
        assert_eq!(g.place(launch), Some(Place { graph: 0, replay: 1, node: None }));
        let relu = a.replays[1].spans[1];
        assert_eq!(st.span_name(relu), "relu");
        assert_eq!(g.place(relu), Some(Place { graph: 0, replay: 1, node: Some(1) }));
    }

    #[test]
    fn without_graph_ids_replays_are_told_apart_by_nodes_or_kernels() {
        let mut b = B::new();
        let (cpu, gpu) = (b.cpu, b.gpu);
        // node ids only (an nsys export): two graphs
        for (i, (t, first)) in [(0i64, 7u64), (1000, 7), (2000, 20)].into_iter().enumerate() {
            let c = 1 + i as i64;
            b.span(cpu, (t - 20, t - 10), "cuGraphLaunch_ptsz", SpanKind::CudaDriver, c, "");
            for k in 0..2u64 {
                let args = format!(r#"{{"graph node id": {}}}"#, first + k);
                b.span(gpu, (t + 10 * k as i64, t + 10 * k as i64 + 5), "k", SpanKind::Kernel, c, &args);
            }
        }
        // no ids at all: same kernels in the same order are one graph
        for (i, t) in [3000i64, 4000].into_iter().enumerate() {
            let c = 10 + i as i64;
            b.span(cpu, (t - 20, t - 10), "hipGraphLaunch", SpanKind::CudaRuntime, c, "");
            b.span(gpu, (t, t + 3), "a", SpanKind::Kernel, c, "{}");
            b.span(gpu, (t + 5, t + 9), "b", SpanKind::Kernel, c, "");
        }
        let st = b.store();
        let g = cuda_graphs(&st);
        let mut got: Vec<(String, usize, usize)> =
            g.graphs.iter().map(|x| (x.label.clone(), x.replays.len(), x.nodes.len())).collect();
        got.sort();
        assert_eq!(
            got,
            vec![
                ("CUDA graph (node 20)".to_string(), 1, 2),
                ("CUDA graph (node 7)".to_string(), 2, 2),
                ("CUDA graph of 2 kernels".to_string(), 2, 2),
            ]
        );
        let by_kernels = g.graphs.iter().find(|x| matches!(x.key, GraphKey::Kernels(_))).unwrap();
        assert_eq!(
            by_kernels.nodes.iter().map(|n| (n.name.as_str(), n.count)).collect::<Vec<_>>(),
            [("a", 2), ("b", 2)]
        );
    }

    #[test]
    fn a_node_is_attributed_to_the_op_around_its_capture() {
        let mut b = B::new();
        let (cpu, gpu) = (b.cpu, b.gpu);
        // capture: node 1 made inside "linear", node 2 inside "relu"; the executable graph's
        // nodes 11 and 12 are their clones
        b.span(cpu, (0, 100), "linear", SpanKind::CpuOp, 0, "");
        b.span(cpu, (10, 20), NODE_CREATED, SpanKind::Other, 0, r#"{"graph node id": 1}"#);
        b.span(cpu, (200, 300), "relu", SpanKind::CpuOp, 0, "");
        b.span(cpu, (210, 220), NODE_CREATED, SpanKind::Other, 0, r#"{"graph node id": 2}"#);
        b.span(
            cpu,
            (400, 410),
            NODE_CREATED,
            SpanKind::Other,
            0,
            r#"{"graph node id": 11, "original graph node id": 1}"#,
        );
        b.span(
            cpu,
            (411, 420),
            NODE_CREATED,
            SpanKind::Other,
            0,
            r#"{"graph node id": 12, "original graph node id": 2}"#,
        );
        for (i, t) in [1000i64, 2000].into_iter().enumerate() {
            let c = 1 + i as i64;
            b.span(cpu, (t - 20, t - 10), "cudaGraphLaunch", SpanKind::CudaRuntime, c, "");
            b.span(gpu, (t, t + 30), "gemm", SpanKind::Kernel, c, r#"{"graph node id": 11}"#);
            b.span(gpu, (t + 40, t + 50), "relu_kernel", SpanKind::Kernel, c, r#"{"graph node id": 12}"#);
        }
        let st = b.store();
        let g = cuda_graphs(&st);
        let x = &g.graphs[0];
        let caps: Vec<(Option<u64>, Option<&str>)> =
            x.nodes.iter().map(|n| (n.node_id, n.captured_by.as_deref())).collect();
        assert_eq!(caps, vec![(Some(11), Some("linear")), (Some(12), Some("relu"))]);
        assert_eq!(
            x.captured_by,
            vec![
                CapturedBy { op: "linear".into(), nodes: 1, gpu_ns: 60 },
                CapturedBy { op: "relu".into(), nodes: 1, gpu_ns: 20 }
            ]
        );
    }

    #[test]
    fn ids_are_read_as_numbers_or_text_and_zero_is_none() {
        assert_eq!(graph_ids(r#"{"graph id": 3, "graph node id": 0}"#), (Some(3), None));
        assert_eq!(graph_ids(r#"{"cuda_graph_id": "12", "cuda_graph_node_id": "4"}"#), (Some(12), Some(4)));
        assert_eq!(graph_ids(r#"{"grid": [1,1,1]}"#), (None, None));
        assert_eq!(graph_ids("{graph"), (None, None));
        assert!(is_graph_launch("cuGraphLaunch (CudaGraph: 3)"));
        assert!(!is_graph_launch("cudaGraphInstantiate"));
    }
}
