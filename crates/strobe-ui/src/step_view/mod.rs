//! The Steps tab: where each step's time went, per trace. One horizontal bar per step, its
//! parts (`strobe_analysis::attribution`: model at peak, model-op inefficiency, other GPU
//! work, comm wait and transfer, pipeline bubble, idle by cause) in fixed colours, the bars
//! scaled to the longest step so they compare; beside them a legend with each part's ms and
//! share in the step in focus and in the median step. Every part links to its evidence
//! (`links`), a step's name shows the step on the timeline. The figures are the trace's
//! `StepFigures`, computed on the analyses thread.

pub mod bars;
pub mod colors;
pub mod data;
pub mod legend;
pub mod links;
pub mod words;

use crate::commands::Command;
use crate::view_ctx::ViewCtx;
use crate::workspace::{Trace, TraceId};
pub use data::StepFigures;

/// Width of the legend beside the bars.
const LEGEND_W: f32 = 640.0;

#[derive(Default)]
pub struct StepsPane {
    /// The trace picked (none, or closed: the selected span's, else the first).
    pub trace: Option<TraceId>,
    /// The step under the pointer in the last frame (the legend follows it).
    hovered: Option<(TraceId, usize)>,
}

impl StepsPane {
    fn shown<'w>(&self, cx: &ViewCtx<'w>) -> Option<&'w Trace> {
        let ws = cx.ws;
        self.trace
            .and_then(|id| ws.trace(id))
            .or_else(|| cx.sel.step.and_then(|(id, _)| ws.trace(id)))
            .or_else(|| cx.sel.span.and_then(|r| ws.trace(r.trace)))
            .or_else(|| ws.traces.first())
    }

    pub fn ui(&mut self, ui: &mut egui::Ui, cx: &mut ViewCtx) {
        let Some(t) = self.shown(cx) else {
            ui.weak("Open a trace to see where each step's time went.");
            return;
        };
        let mut pick = None;
        ui.horizontal(|ui| {
            crate::trace_picker::trace_picker(ui, cx.ws, Some(t.id), &mut pick, "steps_trace");
            ui.weak(
                "Each step's time on its GPU split into parts that add up to the step (docs/attribution.md). \
                 Click a part for its evidence, a step's name to show it on the timeline.",
            );
        });
        // With an Nsight Compute report beside the trace: which kernel would pay most to make
        // faster, weighed against these steps (the kernel pane's list).
        if cx.ws.ncu.is_some() {
            let link = ui.link("Where a faster kernel pays most (Nsight Compute)").on_hover_text(
                "each profiled kernel's estimated speedup (ncu's rules, its roofline distance) as time per step",
            );
            if link.clicked() {
                cx.emit(Command::ShowKernelGains);
            }
        }
        if let Some(id) = pick {
            self.trace = Some(id);
        }
        let Some(figs) = t.step_figures() else {
            // the app repaints while figures are due (`poll_loads`)
            crate::jobs::busy_indicator(ui, "computing the step attribution…");
            return;
        };
        if figs.steps.is_empty() {
            let n = t.steps().len();
            let why = if n == 0 {
                "No steps: this trace has no ProfilerStep, NVTX step or repeating pattern (View > Steps sets a pattern).".to_string()
            } else {
                format!("No step attribution for this trace's {n} steps.")
            };
            ui.label(why);
            return;
        }
        let mut cmds = Vec::new();
        let selected = cx.sel.step.filter(|(id, _)| *id == t.id).map(|(_, i)| i);
        let hovered = self.hovered.filter(|(id, _)| *id == t.id).map(|(_, i)| i);
        let focus = hovered.or(selected).or(figs.median).unwrap_or(0);
        let median = figs.median.and_then(|i| figs.steps.get(i));
        let before = self.hovered.take();
        ui.horizontal_top(|ui| {
            let bars_w = (ui.available_width() - LEGEND_W - 12.0).max(240.0);
            ui.allocate_ui_with_layout(
                egui::vec2(bars_w, ui.available_height()),
                egui::Layout::top_down(egui::Align::Min),
                |ui| {
                    let scale = figs.steps.iter().map(|s| s.dur_ns).max().unwrap_or(1);
                    let bar_w = (bars_w - bars::NAME_W - 16.0).max(60.0);
                    egui::ScrollArea::vertical().id_salt("step_bars").auto_shrink([false, false]).show_rows(
                        ui,
                        bars::BAR_H + ui.spacing().item_spacing.y,
                        figs.steps.len(),
                        |ui, range| {
                            for i in range {
                                let s = &figs.steps[i];
                                let ev = bars::bar_row(ui, s, scale, bar_w, selected == Some(i));
                                if ev.hovered {
                                    self.hovered = Some((t.id, i));
                                }
                                if ev.name_clicked {
                                    cmds.push(Command::SelectStep { trace: t.id, index: i });
                                    cmds.push(links::show_step(t.id, s));
                                }
                                if let Some(p) = ev.part_clicked {
                                    cmds.push(Command::SelectStep { trace: t.id, index: i });
                                    cmds.extend(links::part_commands(
                                        t.id,
                                        s,
                                        strobe_analysis::attribution::PART_NAMES[p].0,
                                    ));
                                }
                            }
                        },
                    );
                },
            );
            ui.separator();
            egui::ScrollArea::vertical().id_salt("step_legend_scroll").show(ui, |ui| {
                ui.set_min_width(LEGEND_W - 20.0);
                if let Some(s) = figs.steps.get(focus) {
                    cmds.extend(legend::ui(ui, t.id, s, median));
                }
            });
        });
        if self.hovered != before {
            // the legend follows the pointer: drawn again with the step now under it
            ui.ctx().request_repaint();
        }
        for c in cmds {
            cx.emit(c);
        }
    }
}
