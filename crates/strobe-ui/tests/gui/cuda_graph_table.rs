//! The kernel table's CUDA-graph rows on a real torch.compile "reduce-overhead" trace: one
//! row per graph with its replays as the count (figures from tests/expected/cuda_graphs_expected.py),
//! a click selects the graph's longest replay's launch, and Details lists its work by node.

use crate::common::*;
use egui_kittest::kittest::Queryable;
use strobe_analysis::report::fmt_ns;

#[test]
fn graph_rows_count_replays_and_a_click_selects_the_longest_launch() {
    let exp = expected("cuda_graphs.expected.json");
    let graphs = exp["kineto_reduce_overhead.json.gz"]["graphs"].as_array().unwrap().clone();
    let mut h = harness(app_with(&["kineto_reduce_overhead.json.gz"]));
    step_until(&mut h, |app| app.ws.traces[0].cuda_graphs().is_some());
    h.get_by_label("by CUDA graph").click();
    h.run_steps(3);
    let first = &graphs[0];
    let n = first["kernels_per_replay"].as_u64().unwrap();
    let label = format!("CUDA graph of {n} kernels");
    // the row: its replays, its GPU time per replay and in all
    h.get_by_label(&label);
    h.get_by_label(&fmt_ns(first["total_ns"].as_i64().unwrap()));
    h.get_by_label(&fmt_ns(first["max_ns"].as_i64().unwrap()));
    h.get_by_label_contains(&format!("from {}", first["launched_from"].as_str().unwrap()));
    // the other graph has its own row
    let second = format!("CUDA graph of {} kernels", graphs[1]["kernels_per_replay"].as_u64().unwrap());
    h.get_by_label(&second);

    h.get_by_label(&label).click();
    h.run_steps(3);
    let app = h.state();
    let sel = app.sel.span.expect("the click selects a launch");
    let st = &app.ws.traces[0].store;
    assert_eq!(st.span_name(sel.span), "cudaGraphLaunch");
    let g = app.ws.traces[0].cuda_graphs().unwrap();
    let p = g.place(sel.span).unwrap();
    let replay = &g.graphs[p.graph as usize].replays[p.replay as usize];
    assert_eq!(replay.gpu_ns, first["max_ns"].as_i64().unwrap(), "the longest replay");
    // its launch's work is all linked to it
    assert_eq!(st.launched_by(sel.span).count() as u64, n);
    // Details: which replay, and its work by node
    h.get_by_label(&format!("{} of {}", p.replay + 1, first["replays"].as_u64().unwrap()));
    h.get_by_label(&format!("Its work, by node ({n})"));
}
