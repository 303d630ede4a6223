//! Each CPU op's work and the GPU work it launched.
//!
//! A kernel (or memcpy/memset) belongs to one op: its launch call (the correlation flow) sits
//! inside a stack of CPU ops on its thread, and the owner is the innermost op of that stack
//! that has a formula and no op with a formula inside it (`aten::linear` → `aten::addmm`:
//! `addmm`), else the innermost op. So every GPU span is counted once and no op's FLOPs are
//! counted again by its parent. An op's GPU time is the union of its spans' intervals.
//! Host↔device and peer copies are not counted (`on_device`).

use super::dtype_guess;
use super::formulas::{apply, formula, matrix_unit, Formula, Unit, Work};
use super::shapes::{OpArgs, KINETO_FLOPS_KEY};
use crate::intervals;
use rustc_hash::{FxHashMap, FxHashSet};
use serde::Serialize;
use strobe_model::{LaneKind, SpanKind};
use strobe_store::Store;

/// Where an op's FLOPs come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// Kineto's own `flops` arg (`with_flops=True`); bytes from the shapes when there is a formula.
    Kineto,
    /// The formulas of docs/efficiency.md on the recorded shapes.
    Shapes,
    /// XLA's cost analysis, carried by the HLO op's GPU work in an XSpace (`xla_ops`).
    Xla,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Kineto => "kineto",
            Source::Shapes => "shapes",
            Source::Xla => "xla",
        }
    }
}

/// One CPU op that launched GPU work.
#[derive(Clone, Debug, PartialEq)]
pub struct OpRun {
    pub span: u32,
    pub name: String,
    /// None: no formula fits (or no shapes recorded).
    pub work: Option<Work>,
    pub source: Option<Source>,
    /// The GPU spans it launched, by start.
    pub gpu_spans: Vec<u32>,
    /// Length of the union of their intervals.
    pub gpu_ns: i64,
    /// A forward op run again during the backward pass (activation checkpointing).
    pub recompute: bool,
}

/// The work of one op span from its args: `f`, its name's formula (`formulas::formula`), on
/// the shapes, with Kineto's `flops` in place of the formula's FLOPs where the trace has them.
pub fn op_work(f: Option<Formula>, name: &str, args: &str) -> Option<(Work, Source)> {
    op_work_of(f, name, &OpArgs::parse(args)?)
}

/// `op_work` on args already parsed.
pub fn op_work_of(f: Option<Formula>, name: &str, a: &OpArgs) -> Option<(Work, Source)> {
    let w = f.and_then(|f| apply(f, name, a));
    match (w, a.kineto_flops) {
        (Some(w), Some(f)) => Some((Work { flops: f, ..w }, Source::Kineto)),
        (Some(w), None) => Some((w, Source::Shapes)),
        (None, Some(f)) => {
            let unit = matrix_unit(a.dtype(0));
            let class = super::formulas::OpClass::Gemm;
            Some((Work { flops: f, bytes: 0.0, unit: if f > 0.0 { unit } else { Unit::Fp32 }, class }, Source::Kineto))
        }
        (None, None) => None,
    }
}

/// GPU work bounded by the device's own ceilings: kernels, memsets and device-to-device
/// copies. Copies to or from the host or a peer run at the link's speed, not HBM's, and are
/// left out (the timeline and `strobe report`'s memcpy figures show them).
pub fn on_device(store: &Store, span: u32) -> bool {
    match store.span_kind(span) {
        SpanKind::Kernel | SpanKind::Memset => true,
        SpanKind::Memcpy => {
            strobe_model::CopyDir::from_memcpy_name(store.span_name(span)) == strobe_model::CopyDir::DtoD
        }
        _ => false,
    }
}

/// The work of op `op` whose shapes carry no dtypes, in the dtype its GPU spans' names tell
/// (`default()` where they tell none); None when its shapes carry dtypes.
fn retyped(store: &Store, op: u32, spans: &[u32], default: impl FnOnce() -> &'static str) -> Option<(Work, Source)> {
    // a Kineto op's shapes carry their dtypes: not parsed a second time
    if memchr::memmem::find(store.span_args_raw(op), b"\"Input type\"").is_some() {
        return None;
    }
    let a = OpArgs::parse(&store.span_args(op))?;
    if !dtype_guess::untyped(&a) {
        return None;
    }
    let (dtype, _) = dtype_guess::op_dtype(spans.iter().map(|&s| store.span_name(s)), default);
    let name = store.span_name(op);
    op_work_of(formula(name), name, &dtype_guess::typed(&a, dtype))
}

const BACKWARD_ENGINE: &str = "autograd::engine::evaluate_function:";

fn is_recomputed_forward(store: &Store, span: u32) -> bool {
    // A forward aten op records an autograd sequence number only when grad mode is on; the
    // backward engine runs its nodes with it off, except where checkpointing replays the
    // forward. Autograd nodes themselves (`MmBackward0`) also carry one: they are not aten ops.
    store.span_name(span).starts_with("aten::") && store.span_args(span).contains("\"Sequence number\"")
}

/// Every op that launched GPU work, and every HLO op whose GPU work carries XLA's costs
/// (`xla_ops`), in start order.
pub fn op_runs(store: &Store) -> Vec<OpRun> {
    let xla = super::xla_ops::xla_op_runs(store);
    let costed: FxHashSet<u32> = xla.iter().map(|r| r.span).collect();
    let mut out = cpu_op_runs(store, &costed);
    if !xla.is_empty() {
        out.extend(xla);
        out.sort_by_key(|r| (store.span_start(r.span), r.span));
    }
    out
}

/// Every CPU op that launched GPU work (other than `costed`, whose runs are their own), in
/// CPU start order.
fn cpu_op_runs(store: &Store, costed: &FxHashSet<u32>) -> Vec<OpRun> {
    use rayon::prelude::*;
    let lanes_of = |want: fn(&LaneKind) -> bool| {
        let lanes = store.lanes.iter().enumerate().filter(move |(_, d)| want(&d.kind));
        lanes.flat_map(|(lane, _)| store.lane_spans(lane as u32).span.iter().copied())
    };
    let cpu: fn(&LaneKind) -> bool = |k| matches!(k, LaneKind::CpuThread { .. });
    let gpu: fn(&LaneKind) -> bool = |k| matches!(k, LaneKind::GpuStream { .. });
    // 1. The work of every CPU op with shapes (parsing the args is most of the cost: in parallel).
    let cpu_ops: Vec<u32> = lanes_of(cpu).filter(|&s| store.span_kind(s) == SpanKind::CpuOp).collect();
    if cpu_ops.is_empty() {
        // no op can own GPU work (an nsys report: runtime calls and NVTX, no ops), and finding
        // each kernel's launch stack only to learn that was most of its efficiency figures
        return Vec::new();
    }
    // each name's formula decided once; an op without one and without Kineto's FLOPs (most
    // ops: views, allocations) is not read at all
    let t = strobe_store::timing::Phase::start("efficiency: ops' work");
    let mut formulas: FxHashMap<u32, Option<Formula>> = FxHashMap::default();
    for &sid in &cpu_ops {
        formulas.entry(store.span_meta(sid).name).or_insert_with(|| formula(store.span_name(sid)));
    }
    let kineto_flops = memchr::memmem::Finder::new(KINETO_FLOPS_KEY);
    // Shapes without dtypes (an nsys capture's emit_nvtx ranges): worked out as FP32 here,
    // to know whether a formula fits, and again below in the dtype their kernels tell.
    let works: FxHashMap<u32, (Work, Source)> = cpu_ops
        .par_iter()
        .filter_map(|&sid| {
            let f = formulas[&store.span_meta(sid).name];
            if f.is_none() && kineto_flops.find(store.span_args_raw(sid)).is_none() {
                return None;
            }
            let a = OpArgs::parse(&store.span_args(sid))?;
            let a = if dtype_guess::untyped(&a) { dtype_guess::typed(&a, "float") } else { a };
            op_work_of(f, store.span_name(sid), &a).map(|w| (sid, w))
        })
        .collect();
    drop(t);
    let t = strobe_store::timing::Phase::start("efficiency: ops holding ops");
    // 2. Ops with a formula that hold another: not owners (their child is).
    let modeled: Vec<u32> = works.keys().copied().collect();
    let holding: Vec<(u32, Vec<u32>)> = modeled.iter().copied().zip(store.enclosing_stacks(&modeled)).collect();
    let holds_modeled: FxHashSet<u32> = holding
        .par_iter()
        .flat_map_iter(|(_, stack)| stack.iter().copied().filter(|a| works.contains_key(a)))
        .collect();
    // Of those, the ones holding an op with FLOPs: their FLOPs are that child's, so what they
    // launched beside it (a memset beside its GEMM) is not model work. One holding only
    // FLOP-less ops (an embedding backward around its `zeros`) keeps its own FLOPs.
    let holds_flops: FxHashSet<u32> = holding
        .par_iter()
        .filter(|(op, _)| works.get(op).is_some_and(|(w, _)| w.flops > 0.0))
        .flat_map_iter(|(_, stack)| stack.iter().copied().filter(|a| works.contains_key(a)))
        .collect();
    drop(t);
    let t = strobe_store::timing::Phase::start("efficiency: GPU spans' owners");
    // 3. Each GPU span to its owner: the stacks found in parallel, then gathered in lane order.
    let launches = store.launch_table();
    let gpu_spans: Vec<(u32, u32)> = lanes_of(gpu)
        .filter(|&s| on_device(store, s) && !costed.contains(&s))
        .filter_map(|s| Some((s, launches.get(s)?)))
        .collect();
    let stacks_of_launches = store.enclosing_stacks(&gpu_spans.iter().map(|x| x.1).collect::<Vec<u32>>());
    let found: Vec<Option<(u32, u32, Vec<u32>)>> = gpu_spans
        .into_par_iter()
        .zip(stacks_of_launches)
        .map(|((sid, launch), mut stack)| {
            stack.retain(|&s| store.span_kind(s) == SpanKind::CpuOp);
            if store.span_kind(launch) == SpanKind::CpuOp {
                stack.push(launch);
            }
            let owner = stack
                .iter()
                .rev()
                .find(|s| works.contains_key(s) && !holds_modeled.contains(s))
                .or(stack.last())
                .copied()?;
            Some((owner, sid, stack))
        })
        .collect();
    let mut owned: FxHashMap<u32, Vec<u32>> = FxHashMap::default();
    let mut stacks: FxHashMap<u32, Vec<u32>> = FxHashMap::default();
    for (o, sid, stack) in found.into_iter().flatten() {
        owned.entry(o).or_default().push(sid);
        stacks.entry(o).or_insert(stack);
    }
    drop(t);
    let t = strobe_store::timing::Phase::start("efficiency: a run per owner");
    // 4. One run per owner.
    let (starts, ends) = store.span_times();
    let default_dtype = std::sync::OnceLock::new();
    // the names of the GPU work the ops launched, for ops whose shapes carry no dtype
    let mut name_ids: Vec<u32> = owned.values().flatten().map(|&s| store.span_meta(s).name).collect();
    name_ids.sort_unstable();
    name_ids.dedup();
    let kernel_names = || dtype_guess::trace_default(name_ids.iter().map(|&n| store.string(n)));
    let mut out: Vec<OpRun> = owned
        .into_par_iter()
        .map(|(op, mut spans)| {
            spans.sort_by_key(|&s| (starts[s as usize], s));
            let u = intervals::union(spans.iter().map(|&s| (starts[s as usize], ends[s as usize])).collect());
            let stack = &stacks[&op];
            let engine = stack.iter().position(|&s| store.span_name(s).starts_with(BACKWARD_ENGINE));
            let recompute = engine.is_some_and(|e| stack[e + 1..].iter().any(|&s| is_recomputed_forward(store, s)));
            // an op that holds a modeled op owns GPU work only when no op inside it with a
            // formula holds the launch (a memset beside its GEMM): its FLOPs are its child's
            let (work, source) = match works.get(&op).filter(|_| !holds_flops.contains(&op)) {
                Some((w, s)) => match retyped(store, op, &spans, || *default_dtype.get_or_init(kernel_names)) {
                    Some(x) => (Some(x.0), Some(x.1)),
                    None => (Some(w.clone()), Some(*s)),
                },
                None => (None, None),
            };
            OpRun {
                span: op,
                name: store.span_name(op).to_string(),
                work,
                source,
                gpu_spans: spans,
                gpu_ns: intervals::total(&u),
                recompute,
            }
        })
        .collect();
    out.sort_by_key(|r| (starts[r.span as usize], r.span));
    drop(t);
    out
}
