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

/// A row being summed: (name key, shape id or NO_SHAPE, on device) → row.
type Rows = FxHashMap<(u32, u32, bool), OpRow>;

const NO_SHAPE: u32 = u32::MAX;

/// The op table of `store`; empty when it has no CPU op (an Nsight Systems export: runtime
/// calls and NVTX, which `key_averages` never sees). Memory: a parent per span and a few words
/// per host event of the longest thread, besides the rows (no per-event figures are kept).
pub fn op_table(store: &Store) -> OpTable {
    let n = store.span_count();
    let kind = |s: u32| SpanKind::from_u8(store.span_meta(s).kind);
    if !(0..n as u32).any(|s| kind(s) == SpanKind::CpuOp) {
        return OpTable::default();
    }
    // each name id's row key: itself, or the first id of the same key (`ProfilerStep*`);
    // NO_SPAN for the names PyTorch drops
    let mut first_of: FxHashMap<&str, u32> = FxHashMap::default();
    let key_of: Vec<u32> = (0..store.string_count() as u32)
        .map(|id| {
            let name = store.string(id);
            if FILTERED.contains(&name) {
                NO_SPAN
            } else {
                *first_of.entry(row_name(name)).or_insert(id)
            }
        })
        .collect();
    // a name id past the string table (a damaged store) is not a row
    let counted = |sid: u32| key_of.get(store.span_meta(sid).name as usize).is_some_and(|&k| k != NO_SPAN);
    let (starts, ends) = store.span_times();
    let dur = |s: u32| ends[s as usize] - starts[s as usize];

    let t = strobe_store::timing::Phase::start("op table: parents");
    // 1. Each host event's parent by PyTorch's rule, per CPU thread: (span, parent's position
    //    in the lane's list), host events in order.
    let cpu_lanes: Vec<u32> = (0..store.lanes.len() as u32)
        .filter(|&l| matches!(store.lanes[l as usize].kind, LaneKind::CpuThread { .. }))
        .collect();
    let per_lane: Vec<Vec<(u32, u32)>> = cpu_lanes
        .par_iter()
        .map(|&lane| {
            let v = store.lane_spans(lane);
            let mut evs: Vec<u32> = v.span.iter().copied().filter(|&s| is_host(kind(s)) && counted(s)).collect();
            evs.sort_by_key(|&s| (starts[s as usize], std::cmp::Reverse(ends[s as usize])));
            let mut stack: Vec<u32> = Vec::new();
            let mut out = Vec::with_capacity(evs.len());
            for (pos, &s) in evs.iter().enumerate() {
                let (b, e) = (starts[s as usize], ends[s as usize]);
                let mut parent = NO_SPAN;
                while let Some(&top) = stack.last() {
                    let top_end = ends[evs[top as usize] as usize];
                    if b >= top_end || e > top_end {
                        stack.pop();
                    } else {
                        parent = top;
                        break;
                    }
                }
                stack.push(pos as u32);
                out.push((s, parent));
            }
            out
        })
        .collect();
    let mut parent = vec![NO_SPAN; n];
    for lane in &per_lane {
        for &(s, p) in lane {
            if p != NO_SPAN {
                parent[s as usize] = lane[p as usize].0;
            }
        }
    }

    drop(t);
    let t = strobe_store::timing::Phase::start("op table: device work's owners");
    // 2. Device events to their owner: the innermost op around their launch.
    let launches = store.launch_table();
    let mut own_device: FxHashMap<u32, i64> = FxHashMap::default();
    let mut device_events: Vec<u32> = Vec::new();
    for (lane, d) in store.lanes.iter().enumerate() {
        if !matches!(d.kind, LaneKind::GpuStream { .. }) {
            continue;
        }
        for &s in store.lane_spans(lane as u32).span {
            if !matches!(kind(s), SpanKind::Kernel | SpanKind::Memcpy | SpanKind::Memset) || !counted(s) {
                continue;
            }
            device_events.push(s);
            // a launch past the spans (a damaged store) has no owner
            let mut o = launches.get(s).filter(|&l| (l as usize) < n).unwrap_or(NO_SPAN);
            while o != NO_SPAN && !owns_device_work(kind(o)) {
                o = parent[o as usize];
            }
            if o != NO_SPAN {
                *own_device.entry(o).or_default() += dur(s);
            }
        }
    }
    drop(parent);

    drop(t);
    let t = strobe_store::timing::Phase::start("op table: shapes");
    // 3. The input shapes of the CPU ops that record them, each text once.
    // Only the "Input Dims" value is read, straight from the args' bytes, and each distinct text
    // is parsed once: an op's args are mostly other fields, and a training step repeats a few
    // hundred shapes over and over.
    let dims_key = memchr::memmem::Finder::new("\"Input Dims\"");
    let shaped: Vec<(u32, &[u8])> = per_lane
        .par_iter()
        .flat_map_iter(|lane| lane.iter().map(|x| x.0))
        .filter(|&s| kind(s) == SpanKind::CpuOp)
        .filter_map(|s| {
            let raw = store.span_args_raw(s);
            let at = dims_key.find(raw)? + b"\"Input Dims\"".len();
            Some((s, dims_value(&raw[at..])?))
        })
        .collect();
    let mut shape_ids: FxHashMap<String, u32> = FxHashMap::default();
    let mut by_text: FxHashMap<&[u8], Option<u32>> = FxHashMap::default();
    let mut shape_of: FxHashMap<u32, u32> = FxHashMap::default();
    for (s, raw) in shaped {
        let id = *by_text.entry(raw).or_insert_with(|| {
            let text = input_dims_value(raw)?;
            let next = shape_ids.len() as u32;
            Some(*shape_ids.entry(text).or_insert(next))
        });
        if let Some(id) = id {
            shape_of.insert(s, id);
        }
    }
    let empty = {
        let next = shape_ids.len() as u32;
        *shape_ids.entry("[]".to_string()).or_insert(next)
    };

    drop(t);
    let t = strobe_store::timing::Phase::start("op table: rows");
    // 4. Figures bottom-up (children come after their parent in each lane's order), each
    //    event added to its rows as it is found.
    let (mut by_name, mut by_shape) = (Rows::default(), Rows::default());
    let mut add = |s: u32, f: Figures| {
        let name = store.span_meta(s).name;
        let on_device = !is_host(kind(s));
        let key = key_of[name as usize];
        let shape = shape_of.get(&s).copied().unwrap_or(empty);
        for (rows, shape) in [(&mut by_name, NO_SHAPE), (&mut by_shape, shape)] {
            let r = rows.entry((key, shape, on_device)).or_insert_with(|| OpRow {
                name: row_name(store.string(name)).to_string(),
                shapes: None,
                kind: kind_text(kind(s)).unwrap_or("other"),
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
            if !r.name_ids.contains(&name) {
                r.name_ids.push(name);
            }
            // the first longest in span order
            if dur(s) > r.longest_ns || (dur(s) == r.longest_ns && s < r.longest_span) {
                r.longest_ns = dur(s);
                r.longest_span = s;
            }
        }
    };
    for lane in &per_lane {
        // (children's CPU, children's device) per position
        let mut children = vec![(0i64, 0i64); lane.len()];
        for (pos, &(s, p)) in lane.iter().enumerate().rev() {
            let d = dur(s);
            let own = own_device.get(&s).copied().unwrap_or(0);
            let (child_cpu, child_device) = children[pos];
            let device = own + child_device;
            add(s, Figures { cpu: d, self_cpu: d - child_cpu, device, self_device: own });
            if p != NO_SPAN {
                children[p as usize].0 += d;
                children[p as usize].1 += device;
            }
        }
    }
    for &s in &device_events {
        let d = dur(s);
        add(s, Figures { cpu: 0, self_cpu: 0, device: d, self_device: d });
    }

    drop(t);
    // 5. Rows in order.
    let mut texts = vec![String::new(); shape_ids.len()];
    for (t, id) in shape_ids {
        texts[id as usize] = t;
    }
    let finish = |rows: Rows| {
        let mut out: Vec<OpRow> = rows
            .into_iter()
            .map(|((_, shape, _), mut r)| {
                r.shapes = (shape != NO_SHAPE).then(|| texts[shape as usize].clone());
                r
            })
            .collect();
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
    OpTable { by_name: finish(by_name), by_shape: finish(by_shape) }
}

/// The row name of an event name: `ProfilerStep#N` is `ProfilerStep*`, as PyTorch keys it.
fn row_name(name: &str) -> &str {
    if name.starts_with("ProfilerStep#") {
        "ProfilerStep*"
    } else {
        name
    }
}

/// The `"Input Dims"` arg written as Python's `str()` of the list PyTorch keys shapes by
/// (`[[16, 128, 512], [], []]`); None when the args hold none or are not JSON.
/// The bytes of the JSON value after a key: skips the `:` and spaces, then one value's extent.
fn dims_value(after_key: &[u8]) -> Option<&[u8]> {
    let start = after_key.iter().position(|&b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b':'))?;
    let rest = &after_key[start..];
    let mut values = serde_json::Deserializer::from_slice(rest).into_iter::<serde::de::IgnoredAny>();
    values.next()?.ok()?;
    Some(&rest[..values.byte_offset()])
}

/// One `Input Dims` value written as Python prints the list.
fn input_dims_value(value: &[u8]) -> Option<String> {
    let v: serde_json::Value = serde_json::from_slice(value).ok()?;
    let mut out = String::new();
    python_repr(&v, &mut out);
    Some(out)
}

#[cfg(test)]
fn input_dims(args: &str) -> Option<String> {
    let raw = args.as_bytes();
    let at = memchr::memmem::find(raw, b"\"Input Dims\"")? + b"\"Input Dims\"".len();
    input_dims_value(dims_value(&raw[at..])?)
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
