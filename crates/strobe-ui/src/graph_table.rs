//! The kernel table's CUDA-graph rows: one row per graph with its replays as the count
//! (`strobe_analysis::cuda_graphs`), its GPU time per replay, the op around its launches and
//! the ops that captured its nodes. A click selects the graph's longest replay's launch and
//! shows it with its work, the launch's arrows fanning out to all of its kernels.

use crate::commands::Command;
use crate::view_ctx::ViewCtx;
use crate::workspace::{SpanRef, Trace};
use egui_extras::{Column, TableBuilder};
use strobe_analysis::cuda_graphs::CudaGraph;
use strobe_analysis::report::fmt_ns;

/// The graphs of `t` whose label, launching op or capturing ops contain `filter`.
pub fn graph_table(ui: &mut egui::Ui, t: &Trace, filter: &str, cx: &mut ViewCtx) {
    let Some(graphs) = t.cuda_graphs() else {
        ui.horizontal(|ui| {
            ui.spinner();
            ui.weak("finding CUDA graphs…");
        });
        return;
    };
    if graphs.is_empty() {
        ui.weak("No CUDA graph launch (cudaGraphLaunch, cuGraphLaunch, hipGraphLaunch) with GPU work in this trace.");
        return;
    }
    let f = filter.to_lowercase();
    let rows: Vec<&CudaGraph> = graphs.graphs.iter().filter(|g| f.is_empty() || matches(g, &f)).collect();
    let selected = cx.sel.span.filter(|r| r.trace == t.id).and_then(|r| graphs.place(r.span)).map(|p| p.graph);
    let mut clicked: Option<u32> = None;
    TableBuilder::new(ui)
        .id_salt("graph_table")
        .striped(true)
        .sense(egui::Sense::click())
        .column(Column::initial(220.0).at_least(140.0).clip(true))
        .columns(Column::auto().at_least(64.0), 7)
        .column(Column::remainder().at_least(160.0).clip(true))
        .header(20.0, |mut h| {
            for (label, tip) in [
                ("CUDA graph", "told apart by its graph id, else its lowest node id, else its kernels in order"),
                ("Replays", "launches of this graph"),
                ("Kernels", "GPU activities (kernels, copies, sets) a replay runs"),
                ("Total", "GPU time of all its replays (sum of its activities' durations)"),
                ("Mean", "GPU time per replay"),
                ("Min", "GPU time of its shortest replay"),
                ("Max", "GPU time of its longest replay"),
                ("% GPU", "of all GPU activity time"),
                (
                    "Launched from / captured by",
                    "the op around its launches; the ops that captured its nodes, where the trace records the capture",
                ),
            ] {
                h.col(|ui| {
                    ui.strong(label).on_hover_text(tip);
                });
            }
        })
        .body(|body| {
            body.rows(18.0, rows.len(), |mut row| {
                let g = rows[row.index()];
                let gi = graphs.graphs.iter().position(|x| std::ptr::eq(x, g)).unwrap_or(0) as u32;
                row.set_selected(selected == Some(gi));
                row.col(|ui| {
                    ui.add(egui::Label::new(&g.label).truncate().selectable(false));
                });
                for text in [
                    g.replays.len().to_string(),
                    g.kernels_per_replay.to_string(),
                    fmt_ns(g.total_ns),
                    fmt_ns(g.mean_ns),
                    fmt_ns(g.min_ns),
                    fmt_ns(g.max_ns),
                    format!("{:.1}%", g.pct_gpu_time),
                ] {
                    row.col(|ui| {
                        ui.label(text);
                    });
                }
                row.col(|ui| {
                    ui.add(egui::Label::new(origin_text(g)).truncate().selectable(false));
                });
                if row.response().clicked() {
                    clicked = Some(gi);
                }
            });
        });
    if let Some(gi) = clicked {
        let g = &graphs.graphs[gi as usize];
        if let Some(r) = g.replays.iter().max_by_key(|r| r.gpu_ns) {
            cx.emit(Command::SelectSpan(SpanRef { trace: t.id, span: r.launch }));
            // the launch and all of its replay's work in view, with the arrows between them
            let a = t.store.span_start(r.launch).min(r.gpu_start);
            let pad = (r.gpu_end - a) / 20;
            let (t0, t1) = t.range_to_shared((a - pad, r.gpu_end + pad));
            cx.emit(Command::ZoomTo { t0, t1 });
        }
    }
}

fn matches(g: &CudaGraph, f: &str) -> bool {
    g.label.to_lowercase().contains(f)
        || g.launched_from.as_deref().is_some_and(|o| o.to_lowercase().contains(f))
        || g.captured_by.iter().any(|c| c.op.to_lowercase().contains(f))
        || g.nodes.iter().any(|n| n.name.to_lowercase().contains(f))
}

/// "from OP · captured by A (3), B (2)".
fn origin_text(g: &CudaGraph) -> String {
    let mut parts = Vec::new();
    if let Some(o) = &g.launched_from {
        parts.push(format!("from {o}"));
    }
    if !g.captured_by.is_empty() {
        let caps: Vec<String> = g.captured_by.iter().take(4).map(|c| format!("{} ({})", c.op, c.nodes)).collect();
        parts.push(format!("captured by {}", caps.join(", ")));
    }
    parts.join(" · ")
}
