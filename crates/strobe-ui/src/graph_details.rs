//! The Details pane's CUDA-graph section: for a graph launch, its graph, which replay it is
//! and the work it ran grouped by node; for a kernel a graph ran, its graph, node, replay and
//! the op that captured the node.

use crate::commands::Command;
use crate::view_ctx::ViewCtx;
use crate::workspace::{SpanRef, Trace};
use strobe_analysis::report::fmt_ns;

/// At most this many nodes are listed (a graph of thousands of kernels stays readable).
const NODES_LISTED: usize = 60;

pub fn ui(ui: &mut egui::Ui, t: &Trace, r: SpanRef, cx: &mut ViewCtx) {
    let Some(graphs) = t.cuda_graphs() else { return };
    let Some(p) = graphs.place(r.span) else { return };
    let Some(g) = graphs.graphs.get(p.graph as usize) else { return };
    let Some(replay) = g.replays.get(p.replay as usize) else { return };
    let st = &*t.store;
    ui.separator();
    ui.strong(&g.label).on_hover_text(
        "replays of one graph are told apart by its graph id, else its lowest node id, else its kernels in order",
    );
    egui::Grid::new("graph_grid").num_columns(2).striped(true).show(ui, |ui| {
        // values wrap: a long op name must not widen the side panel
        let mut kv = |a: &str, b: String| {
            ui.label(a);
            ui.add(egui::Label::new(b).wrap());
            ui.end_row();
        };
        kv("replay", format!("{} of {}", p.replay + 1, g.replays.len()));
        kv("work per replay", format!("{} (kernels, copies, sets)", g.kernels_per_replay));
        kv("this replay's GPU time", fmt_ns(replay.gpu_ns));
        kv("first start to last end", fmt_ns(replay.gpu_end - replay.gpu_start));
        kv(
            "GPU time per replay",
            format!("mean {} · min {} · max {}", fmt_ns(g.mean_ns), fmt_ns(g.min_ns), fmt_ns(g.max_ns)),
        );
        if let Some(o) = &g.launched_from {
            kv("launched from", o.clone());
        }
    });
    match p.node.and_then(|n| g.nodes.get(n as usize)) {
        Some(node) => {
            egui::Grid::new("graph_node_grid").num_columns(2).striped(true).show(ui, |ui| {
                if let Some(id) = node.node_id {
                    ui.label("graph node");
                    ui.label(id.to_string());
                    ui.end_row();
                }
                ui.label("this node over all replays");
                ui.label(format!("{} × · {}", node.count, fmt_ns(node.total_ns)));
                ui.end_row();
                ui.label("captured by");
                ui.add(
                    egui::Label::new(node.captured_by.clone().unwrap_or_else(|| "not recorded in this trace".into()))
                        .wrap(),
                );
                ui.end_row();
            });
            if r.span != replay.launch && ui.link("the replay's launch").clicked() {
                cx.emit(Command::RevealSpan(SpanRef { trace: r.trace, span: replay.launch }));
            }
        }
        None if r.span == replay.launch => {
            ui.strong(format!("Its work, by node ({})", replay.spans.len()));
            for &s in replay.spans.iter().take(NODES_LISTED) {
                let node = graphs.place(s).and_then(|q| q.node).and_then(|n| g.nodes.get(n as usize));
                let id = node.and_then(|n| n.node_id).map(|i| format!("node {i} · ")).unwrap_or_default();
                let cap = node
                    .and_then(|n| n.captured_by.as_deref())
                    .map(|c| format!(" · captured by {c}"))
                    .unwrap_or_default();
                let txt = format!(
                    "{id}{} · {}{cap}",
                    crate::timeline::truncate(st.span_name(s), 60),
                    fmt_ns(st.span_end(s) - st.span_start(s))
                );
                if ui.link(txt).on_hover_text(st.span_name(s)).clicked() {
                    cx.emit(Command::RevealSpan(SpanRef { trace: r.trace, span: s }));
                }
            }
            if replay.spans.len() > NODES_LISTED {
                ui.weak(format!("… and {} more", replay.spans.len() - NODES_LISTED));
            }
        }
        None => {}
    }
}
