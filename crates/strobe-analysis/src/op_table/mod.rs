//! The op table: torch.profiler's `key_averages()` from a trace. Per event name (optionally
//! per name and input shapes): calls, CPU total and self time, device total and self time.
//!
//! The figures follow PyTorch's own definitions (`torch/autograd/profiler.py`
//! `_parse_kineto_results`, `profiler_util.py` `FunctionEvent`, `EventList._build_tree`,
//! `key_averages`), so the numbers are the ones `key_averages().table()` prints:
//! - The profiler's events are the host ones (CPU ops, `record_function` ranges, CUDA runtime
//!   and driver calls) and the device ones (kernels, memcpys, memsets). Python function spans,
//!   GPU-side copies of `record_function` ranges and instants are not: PyTorch's table has no
//!   rows for them and they are nobody's children. The names PyTorch drops (`FILTERED`) are
//!   left out entirely; `ProfilerStep#N` is keyed `ProfilerStep*`.
//! - A host event's children are found on its thread by PyTorch's rule, not the timeline's
//!   nesting: events in start order (longer first), and an event that ends after the open one
//!   is not its child (the timeline keeps such near-misses inside their parent).
//! - CPU total = duration; self CPU = duration minus the direct children's durations (a
//!   `cudaLaunchKernel` is a child like any op).
//! - A device event belongs to the innermost CPU op or `record_function` range around the
//!   runtime call that launched it (the correlation flow): Kineto's "External id". Device total
//!   of a host event = its own device events plus its children's device totals; self device =
//!   its own. Device rows have device total = self device = their duration and no CPU time.
//! - Rows are keyed by name and side (host or device: PyTorch keys by device type too), and
//!   with shapes by the `"Input Dims"` arg written as Python writes the list.

pub mod text;

use rayon::prelude::*;
use rustc_hash::FxHashMap;
use serde::Serialize;
use strobe_model::{LaneKind, SpanKind};
use strobe_store::Store;

/// Event names PyTorch's `_filter_name` drops before building its events.
const FILTERED: &[&str] = &[
    "[memory]",
    "[OutOfMemory]",
    "profiler::_record_function_enter",
    "profiler::_record_function_enter_new",
    "profiler::_record_function_exit",
    "aten::is_leaf",
    "aten::output_nr",
    "aten::_version",
];

const NO_SPAN: u32 = u32::MAX;

/// One row of the table.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OpRow {
    /// The event name (`ProfilerStep*` for every `ProfilerStep#N`).
    pub name: String,
    /// The input shapes (`[[16, 128], []]`), in the by-shape grouping; `[]` for events that
    /// record none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shapes: Option<String>,
    /// "cpu_op", "user_annotation", "cuda_runtime", "cuda_driver", "kernel", "memcpy" or
    /// "memset": the kind of the row's first event.
    pub kind: &'static str,
    /// A device event (kernel, memcpy, memset): PyTorch's CUDA device type.
    pub on_device: bool,
    pub count: u64,
    pub cpu_total_ns: i64,
    pub self_cpu_ns: i64,
    pub device_total_ns: i64,
    pub self_device_ns: i64,
    /// The store's string ids of the row's names (several for `ProfilerStep*`).
    #[serde(skip)]
    pub name_ids: Vec<u32>,
    /// The longest occurrence (the first of them in span order).
    #[serde(skip)]
    pub longest_span: u32,
    #[serde(skip)]
    pub longest_ns: i64,
}

impl OpRow {
    pub fn cpu_mean_ns(&self) -> i64 {
        self.cpu_total_ns / self.count.max(1) as i64
    }
}

/// Both groupings, each by device total (descending), then CPU total, then name.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct OpTable {
    pub by_name: Vec<OpRow>,
    pub by_shape: Vec<OpRow>,
}

impl OpTable {
    pub fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }
}

fn kind_text(k: SpanKind) -> Option<&'static str> {
    Some(match k {
        SpanKind::CpuOp => "cpu_op",
        SpanKind::UserAnnotation => "user_annotation",
        SpanKind::CudaRuntime => "cuda_runtime",
        SpanKind::CudaDriver => "cuda_driver",
        SpanKind::Kernel => "kernel",
        SpanKind::Memcpy => "memcpy",
        SpanKind::Memset => "memset",
        _ => return None,
    })
}

fn is_host(k: SpanKind) -> bool {
    matches!(k, SpanKind::CpuOp | SpanKind::UserAnnotation | SpanKind::CudaRuntime | SpanKind::CudaDriver)
}

/// An op that owns the device work launched inside it (Kineto's External id holders).
fn owns_device_work(k: SpanKind) -> bool {
    matches!(k, SpanKind::CpuOp | SpanKind::UserAnnotation)
}

/// One event's figures.
#[derive(Clone, Copy, Default)]
struct Figures {
    cpu: i64,
    self_cpu: i64,
    device: i64,
    self_device: i64,
}

/// The op table of `store`; empty when it has no CPU op (an Nsight Systems export: runtime
/// calls and NVTX, which `key_averages` never sees).
pub fn op_table(store: &Store) -> OpTable {
    let n = store.span_count();
    let kinds: Vec<SpanKind> = store.span_metas().iter().map(|m| SpanKind::from_u8(m.kind)).collect();
    if !kinds.contains(&SpanKind::CpuOp) {
        return OpTable::default();
    }
    let filtered: Vec<bool> = {
        let mut f = vec![false; store.string_count()];
        for id in 0..store.string_count() as u32 {
            f[id as usize] = FILTERED.contains(&store.string(id));
        }
        f
    };
    let counted = |sid: u32| !filtered[store.span_meta(sid).name as usize];
    let (starts, ends) = store.span_times();
    let dur = |s: u32| ends[s as usize] - starts[s as usize];

    // 1. Each host event's parent by PyTorch's rule, per CPU thread; host events in order.
    let cpu_lanes: Vec<u32> = (0..store.lanes.len() as u32)
        .filter(|&l| matches!(store.lanes[l as usize].kind, LaneKind::CpuThread { .. }))
        .collect();
    let per_lane: Vec<Vec<(u32, u32)>> = cpu_lanes
        .par_iter()
        .map(|&lane| {
            let v = store.lane_spans(lane);
            let mut evs: Vec<u32> =
                v.span.iter().copied().filter(|&s| is_host(kinds[s as usize]) && counted(s)).collect();
            evs.sort_by_key(|&s| (starts[s as usize], std::cmp::Reverse(ends[s as usize])));
            let mut stack: Vec<u32> = Vec::new();
            let mut out = Vec::with_capacity(evs.len());
            for s in evs {
                let (b, e) = (starts[s as usize], ends[s as usize]);
                let mut parent = NO_SPAN;
                while let Some(&top) = stack.last() {
                    let top_end = ends[top as usize];
                    if b >= top_end || e > top_end {
                        stack.pop();
                    } else {
                        parent = top;
                        break;
                    }
                }
                stack.push(s);
                out.push((s, parent));
            }
            out
        })
        .collect();
    let mut parent = vec![NO_SPAN; n];
    for &(s, p) in per_lane.iter().flatten() {
        parent[s as usize] = p;
    }

    // 2. Device events to their owner: the innermost op around their launch.
    let launches = store.launch_table();
    let mut own_device = vec![0i64; n];
    let mut device_events: Vec<u32> = Vec::new();
    for (lane, d) in store.lanes.iter().enumerate() {
        if !matches!(d.kind, LaneKind::GpuStream { .. }) {
            continue;
        }
        for &s in store.lane_spans(lane as u32).span {
            if !matches!(kinds[s as usize], SpanKind::Kernel | SpanKind::Memcpy | SpanKind::Memset) || !counted(s) {
                continue;
            }
            device_events.push(s);
            let mut o = launches.get(s).unwrap_or(NO_SPAN);
            while o != NO_SPAN && !owns_device_work(kinds[o as usize]) {
                o = parent[o as usize];
            }
            if o != NO_SPAN {
                own_device[o as usize] += dur(s);
            }
        }
    }

    // 3. Figures bottom-up: children come after their parent in each lane's order.
    let mut figs: FxHashMap<u32, Figures> = FxHashMap::default();
    let mut child_cpu = vec![0i64; n];
    let mut child_device = vec![0i64; n];
    for lane in per_lane.iter() {
        for &(s, p) in lane.iter().rev() {
            let d = dur(s);
            let device = own_device[s as usize] + child_device[s as usize];
            figs.insert(
                s,
                Figures { cpu: d, self_cpu: d - child_cpu[s as usize], device, self_device: own_device[s as usize] },
            );
            if p != NO_SPAN {
                child_cpu[p as usize] += d;
                child_device[p as usize] += device;
            }
        }
    }
    for &s in &device_events {
        let d = dur(s);
        figs.insert(s, Figures { cpu: 0, self_cpu: 0, device: d, self_device: d });
    }

    // 4. The input shapes of the CPU ops that record them.
    let dims_key = memchr::memmem::Finder::new("\"Input Dims\"");
    let shaped: Vec<u32> = figs.keys().copied().filter(|&s| kinds[s as usize] == SpanKind::CpuOp).collect();
    let shapes: FxHashMap<u32, String> = shaped
        .par_iter()
        .filter(|&&s| dims_key.find(store.span_args_raw(s)).is_some())
        .filter_map(|&s| Some((s, input_dims(&store.span_args(s))?)))
        .collect();

    // 5. Rows.
    let mut events: Vec<(u32, Figures)> = figs.into_iter().collect();
    events.sort_unstable_by_key(|e| e.0);
    let group = |with_shapes: bool| {
        let mut rows: FxHashMap<(String, Option<String>, bool), OpRow> = FxHashMap::default();
        for &(s, f) in &events {
            let m = store.span_meta(s);
            let raw = store.string(m.name);
            let name = if raw.starts_with("ProfilerStep#") { "ProfilerStep*" } else { raw };
            let on_device = !is_host(kinds[s as usize]);
            let sh = with_shapes.then(|| shapes.get(&s).cloned().unwrap_or_else(|| "[]".to_string()));
            let r = rows.entry((name.to_string(), sh.clone(), on_device)).or_insert_with(|| OpRow {
                name: name.to_string(),
                shapes: sh,
                kind: kind_text(kinds[s as usize]).unwrap_or("other"),
                on_device,
                count: 0,
                cpu_total_ns: 0,
                self_cpu_ns: 0,
                device_total_ns: 0,
                self_device_ns: 0,
                name_ids: Vec::new(),
                longest_span: s,
                longest_ns: i64::MIN,
            });
            r.count += 1;
            r.cpu_total_ns += f.cpu;
            r.self_cpu_ns += f.self_cpu;
            r.device_total_ns += f.device;
            r.self_device_ns += f.self_device;
            if !r.name_ids.contains(&m.name) {
                r.name_ids.push(m.name);
            }
            if dur(s) > r.longest_ns {
                r.longest_ns = dur(s);
                r.longest_span = s;
            }
        }
        let mut out: Vec<OpRow> = rows.into_values().collect();
        out.sort_by(|a, b| {
            b.device_total_ns
                .cmp(&a.device_total_ns)
                .then(b.cpu_total_ns.cmp(&a.cpu_total_ns))
                .then_with(|| a.name.cmp(&b.name))
                .then_with(|| a.shapes.cmp(&b.shapes))
                .then(a.on_device.cmp(&b.on_device))
        });
        out
    };
    OpTable { by_name: group(false), by_shape: group(true) }
}

/// The `"Input Dims"` arg written as Python's `str()` of the list PyTorch keys shapes by
/// (`[[16, 128, 512], [], []]`); None when the args hold none or are not JSON.
fn input_dims(args: &str) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Args {
        #[serde(rename = "Input Dims")]
        dims: Option<serde_json::Value>,
    }
    let a: Args = serde_json::from_str(args).ok()?;
    let mut out = String::new();
    python_repr(&a.dims?, &mut out);
    Some(out)
}

fn python_repr(v: &serde_json::Value, out: &mut String) {
    use serde_json::Value;
    match v {
        Value::Array(items) => {
            out.push('[');
            for (i, x) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                python_repr(x, out);
            }
            out.push(']');
        }
        Value::String(s) => {
            out.push('\'');
            out.push_str(s);
            out.push('\'');
        }
        Value::Null => out.push_str("None"),
        Value::Bool(b) => out.push_str(if *b { "True" } else { "False" }),
        other => out.push_str(&other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::{finished, span};
    use strobe_model::IdKey;
    use strobe_store::StoreBuilder;

    #[test]
    fn shapes_are_written_as_python_writes_them() {
        assert_eq!(
            input_dims(r#"{"Input Dims": [[16, 128], [], [[2], [3, 4]]], "External id": 3}"#).as_deref(),
            Some("[[16, 128], [], [[2], [3, 4]]]")
        );
        assert_eq!(input_dims(r#"{"External id": 3}"#), None);
    }

    /// An op whose child ends after it is no child by PyTorch's rule: its time stays self time.
    #[test]
    fn a_child_that_outlives_its_parent_is_not_its_child() {
        let mut b = StoreBuilder::in_memory();
        let lane = b.lane(LaneKind::CpuThread { pid: IdKey::Num(1), tid: IdKey::Num(1) });
        let (op, inner, cat) = (b.intern("aten::op"), b.intern("aten::inner"), b.intern("cpu_op"));
        b.push_span(span(lane, 0, 100, op, cat, SpanKind::CpuOp)).unwrap();
        b.push_span(span(lane, 10, 40, inner, cat, SpanKind::CpuOp)).unwrap();
        b.push_span(span(lane, 60, 101, inner, cat, SpanKind::CpuOp)).unwrap();
        let t = op_table(&finished(b));
        let row = |name: &str| t.by_name.iter().find(|r| r.name == name).unwrap().clone();
        assert_eq!((row("aten::op").cpu_total_ns, row("aten::op").self_cpu_ns), (100, 70));
        assert_eq!((row("aten::inner").count, row("aten::inner").self_cpu_ns), (2, 71));
    }
}
