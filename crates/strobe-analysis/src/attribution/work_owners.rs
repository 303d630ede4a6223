//! Whose GPU work a span is: the op that launched it (`efficiency::ops`), and whether that op
//! is model work (FLOPs from a formula, not a replay of activation checkpointing).

use crate::efficiency::{OpClass, OpRun};
use rustc_hash::FxHashMap;
use strobe_store::Store;

/// The label of an op class in the parts' details and the text.
pub fn class_label(c: OpClass) -> &'static str {
    match c {
        OpClass::Gemm => "GEMM",
        OpClass::Conv => "conv",
        OpClass::Attention => "attention",
        OpClass::Norm => "norm",
        OpClass::Softmax => "softmax",
        OpClass::Elementwise => "elementwise",
        OpClass::Copy => "copy",
        OpClass::Reduction => "reduction",
        OpClass::Optimizer => "optimizer",
        OpClass::Gather => "gather",
    }
}

/// What a span of GPU work counts as.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Owner<'r> {
    /// An op with model FLOPs, of this class.
    Model(OpClass),
    /// An op with no model FLOPs (no formula, no shapes, none counted, or a checkpointing replay).
    Op(&'r OpRun),
    /// No op launched it (or the trace links none).
    None,
}

/// The op of each GPU span.
pub struct Owners<'r> {
    runs: &'r [OpRun],
    by_span: FxHashMap<u32, u32>,
}

impl<'r> Owners<'r> {
    pub fn new(runs: &'r [OpRun]) -> Owners<'r> {
        let mut by_span = FxHashMap::default();
        by_span.reserve(runs.iter().map(|r| r.gpu_spans.len()).sum());
        for (i, r) in runs.iter().enumerate() {
            for &s in &r.gpu_spans {
                by_span.insert(s, i as u32);
            }
        }
        Owners { runs, by_span }
    }

    pub fn of(&self, span: u32) -> Owner<'r> {
        let Some(&i) = self.by_span.get(&span) else { return Owner::None };
        let r = &self.runs[i as usize];
        match &r.work {
            Some(w) if w.flops > 0.0 && !r.recompute => Owner::Model(w.class),
            _ => Owner::Op(r),
        }
    }
}

/// The name other GPU work is listed under: its op, a replayed op marked so, else the span's
/// own name (a kernel or copy no op launched).
pub fn other_name(store: &Store, span: u32, owner: Owner) -> String {
    match owner {
        Owner::Op(r) if r.recompute => format!("{} (recomputed)", r.name),
        Owner::Op(r) => r.name.clone(),
        _ => store.span_name(span).to_string(),
    }
}

/// Whether `runs` are sorted by start, as `op_runs` gives them: then a step's runs are found by
/// binary search (`class_flops`). Asked once per trace, not once per step.
pub fn runs_sorted(store: &Store, runs: &[OpRun]) -> bool {
    runs.windows(2).all(|w| store.span_start(w[0].span) <= store.span_start(w[1].span))
}

/// Model FLOPs per class of the ops whose CPU call started in `[a, b)` (the MFU's own rule:
/// `efficiency::mfu`); `sorted`: the runs are sorted by start (`runs_sorted`).
pub fn class_flops(store: &Store, runs: &[OpRun], sorted: bool, (a, b): (i64, i64)) -> Vec<(OpClass, f64)> {
    let start = |r: &OpRun| store.span_start(r.span);
    let (i, j) = match sorted {
        true => (runs.partition_point(|r| start(r) < a), runs.partition_point(|r| start(r) < b)),
        false => (0, runs.len()),
    };
    let mut out: Vec<(OpClass, f64)> = Vec::new();
    for r in runs[i..j.max(i)].iter().filter(|r| !r.recompute && (a..b).contains(&start(r))) {
        let Some(w) = &r.work else { continue };
        if w.flops <= 0.0 {
            continue;
        }
        match out.iter_mut().find(|x| x.0 == w.class) {
            Some(x) => x.1 += w.flops,
            None => out.push((w.class, w.flops)),
        }
    }
    out
}
