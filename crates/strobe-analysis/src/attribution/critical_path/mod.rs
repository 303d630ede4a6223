//! The critical path of each step: the longest dependency path through the step's CPU ops,
//! CUDA runtime calls, GPU ops on each stream, synchronisations and collectives, as HTA's
//! lightweight critical path analysis defines it (docs/critical_path.md has the edge rules,
//! how each edge's time is classed, and where Strobe infers what HTA reads off `cuda_sync`
//! events).

mod cpu_edges;
pub mod data_loading;
mod events;
mod gpu_edges;
mod graph;
pub mod text;

use super::{Bounds, CriticalPath, Evidence};
use crate::figures::TraceFigures;
use crate::steps::Step;
use events::{name, Event, Names};
use graph::{EdgeKind, Graph, NO_EVENT};
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use serde::Serialize;
use strobe_model::LaneKind;
use strobe_store::Store;

/// How many ops `top_ops` lists.
pub const TOP_OPS: usize = 5;

/// One entry per step of `figs.steps(store)`, in order.
pub fn of_trace(store: &Store, figs: &TraceFigures) -> Vec<Option<CriticalPath>> {
    let steps = figs.steps(store);
    let _t = strobe_store::timing::Phase::start("figures: critical paths");
    of_steps(store, steps).into_iter().map(Result::ok).collect()
}

/// Each step's critical path, or why it has none.
pub fn of_steps(store: &Store, steps: &[Step]) -> Vec<Result<CriticalPath, String>> {
    if let Some(why) = unavailable(store) {
        return vec![Err(why); steps.len()];
    }
    let names = Names::new(store);
    steps.par_iter().map(|s| of_window_with(store, &names, s.start_ns, s.end_ns())).collect()
}

/// Why no step of the trace can have a critical path, where that is so: the path crosses from
/// the CPU to the GPU only along the launch links.
pub fn unavailable(store: &Store) -> Option<String> {
    let launches = store.launch_table();
    let mut gpu_ops = false;
    for (lane, desc) in store.lanes.iter().enumerate() {
        if !matches!(desc.kind, LaneKind::GpuStream { .. }) {
            continue;
        }
        let v = store.lane_spans(lane as u32);
        gpu_ops |= !v.span.is_empty();
        if v.span.iter().any(|&s| launches.get(s).is_some()) {
            return None;
        }
    }
    Some(if gpu_ops {
        "no critical path: the trace links no GPU op to the CPU call that launched it (no correlation flows)".into()
    } else {
        "no critical path: the trace has no GPU ops".into()
    })
}

/// The critical path of the window [t0, t1] (one step).
pub fn of_window(store: &Store, t0: i64, t1: i64) -> Result<CriticalPath, String> {
    of_window_with(store, &Names::new(store), t0, t1)
}

/// `of_window` with the trace's name flags decided so far.
fn of_window_with(store: &Store, names: &Names, t0: i64, t1: i64) -> Result<CriticalPath, String> {
    let events::StepEvents { mut events, first_gpu, merged } = events::collect(store, t0, t1, names);
    if first_gpu == events.len() {
        return Err("no critical path: no GPU work was launched in the step".into());
    }
    let mut g = Graph::new(2 * events.len());
    cpu_edges::call_stack_edges(&mut events, first_gpu, merged, &mut g);
    cpu_edges::runtime_lock_edges(&events, first_gpu, &mut g);
    gpu_edges::gpu_edges(&mut events, first_gpu, &mut g);
    let Some(path) = g.longest_path() else {
        return Err(
            "no critical path: the step's dependency graph has a cycle (nesting or clocks that disagree)".into()
        );
    };
    let cp = summarise(store, &events, &path);
    if cp.length_ns <= 0 {
        return Err("no critical path: the step's dependency graph has no timed edge".into());
    }
    Ok(cp)
}

/// What bounds the time of one path edge: HTA's `bound_by`, with data loading found by
/// nesting (`data_loading`).
fn add_to_bounds(b: &mut Bounds, e: &graph::Edge, ev: &[Event]) {
    let w = e.weight;
    match e.kind {
        EdgeKind::LaunchDelay => b.launch_overhead_ns += w,
        EdgeKind::KernelGap => b.kernel_gap_ns += w,
        // weightless by construction
        EdgeKind::Dependency | EdgeKind::Sync => {}
        EdgeKind::Operator => match ev.get(e.event as usize) {
            Some(x) if x.gpu && x.names & name::COMM != 0 => b.gpu_comm_ns += w,
            Some(x) if x.gpu => b.gpu_compute_ns += w,
            Some(x) if x.in_data => b.data_loading_ns += w,
            _ => b.cpu_ns += w,
        },
    }
}

fn summarise(store: &Store, ev: &[Event], path: &[graph::Edge]) -> CriticalPath {
    let mut bounds = Bounds::default();
    // op name → (ns, (the op's span with most ns, its ns))
    let mut by_op: FxHashMap<u32, (i64, FxHashMap<u32, i64>)> = FxHashMap::default();
    for e in path {
        add_to_bounds(&mut bounds, e, ev);
        if e.weight > 0 && e.event != NO_EVENT {
            let op = ev[e.event as usize].op;
            let entry = by_op.entry(store.span_meta(op).name).or_default();
            entry.0 += e.weight;
            *entry.1.entry(op).or_default() += e.weight;
        }
    }
    let mut top: Vec<Evidence> = by_op
        .into_iter()
        .map(|(name, (ns, spans))| {
            let span = spans.into_iter().max_by_key(|&(s, w)| (w, std::cmp::Reverse(s))).map(|(s, _)| s);
            Evidence { name: store.string(name).to_string(), ns, span, rank: None }
        })
        .collect();
    top.sort_by(|a, b| b.ns.cmp(&a.ns).then_with(|| a.name.cmp(&b.name)));
    top.truncate(TOP_OPS);
    let mut spans: Vec<u32> = path.iter().flat_map(|e| [e.from / 2, e.to / 2]).map(|i| ev[i as usize].span).collect();
    spans.sort_unstable();
    spans.dedup();
    spans.sort_by_key(|&s| (store.span_start(s), s));
    let length_ns = path.iter().map(|e| e.weight).sum();
    CriticalPath { length_ns, bounds, top_ops: top, spans }
}

/// One step's critical path as `strobe report --json` lists it: the path's fields, or a note
/// saying why there is none.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CriticalPathEntry {
    pub step: String,
    #[serde(flatten)]
    pub path: Option<CriticalPath>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The report's entries: the figures' paths, and for a step with none the reason (found again
/// for that step alone).
pub fn report_entries(store: &Store, figs: &TraceFigures) -> Vec<CriticalPathEntry> {
    let steps = figs.steps(store);
    let paths = figs.critical_paths(store);
    // a scan of the GPU lanes, and the name flags: once, not once per step without a path
    let whole_trace = std::sync::OnceLock::new();
    let names = std::sync::OnceLock::new();
    steps
        .iter()
        .zip(paths)
        .map(|(s, p)| CriticalPathEntry {
            step: s.name.clone(),
            path: p.clone(),
            note: p.is_none().then(|| {
                whole_trace.get_or_init(|| unavailable(store)).clone().unwrap_or_else(|| {
                    let names = names.get_or_init(|| Names::new(store));
                    of_window_with(store, names, s.start_ns, s.end_ns()).err().unwrap_or_default()
                })
            }),
        })
        .collect()
}

#[cfg(test)]
mod tests;
