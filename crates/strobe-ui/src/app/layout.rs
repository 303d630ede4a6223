//! Where the panes go: the summary strip, the bottom tabs, Details and the timeline (or, with
//! no timeline open, the memory or kernel pane in the main area).

use super::{BottomTab, StrobeApp};
use crate::commands::Command;
use crate::panes::Pane;

impl StrobeApp {
    pub(super) fn panes(&mut self, ui: &mut egui::Ui, cmds: &mut Vec<Command>) {
        let no_traces = self.ws.traces.is_empty();
        if !no_traces {
            egui::Panel::top("strobe_summary").show(ui, |ui| {
                // The panel takes the height its content had in the frame before, and a scroll
                // area no more than the panel has: a scroll area would keep the strip at the
                // height of its first frame (one "measuring…" line per rank), the other lines
                // hidden. So up to eight ranks are shown whole, wrapped lines and all; more
                // scroll in eight lines' height behind a scroll bar that is always drawn.
                const SHOWN_WHOLE: usize = 8;
                if self.ws.traces.len() <= SHOWN_WHOLE {
                    crate::summary::ui(ui, &mut view_ctx!(self, cmds));
                } else {
                    ui.spacing_mut().scroll = egui::style::ScrollStyle::solid();
                    let line = ui.spacing().interact_size.y + ui.spacing().item_spacing.y;
                    let h = line * SHOWN_WHOLE as f32;
                    egui::ScrollArea::vertical()
                        .id_salt("summary_scroll")
                        .max_height(h)
                        .min_scrolled_height(h)
                        .show(ui, |ui| crate::summary::ui(ui, &mut view_ctx!(self, cmds)));
                }
            });
            self.bottom_and_details(ui, cmds);
        }
        egui::CentralPanel::default().show(ui, |ui| {
            if no_traces && self.memory.is_some() && self.kernel_sol.is_some() {
                ui.horizontal(|ui| {
                    ui.selectable_value(&mut self.bottom_tab, BottomTab::Memory, "Memory");
                    ui.selectable_value(&mut self.bottom_tab, BottomTab::KernelSol, "Kernel SOL (ncu)");
                });
                ui.separator();
            }
            // the memory or kernel pane fills the main area while no timeline is open
            let main_memory = no_traces
                && self.memory.is_some()
                && (self.bottom_tab != BottomTab::KernelSol || self.kernel_sol.is_none());
            let main_kernels = no_traces && !main_memory && self.kernel_sol.is_some();
            let mut cx = view_ctx!(self, cmds);
            match (&mut self.memory, &mut self.kernel_sol) {
                // a folder of rank summaries alone: the ranks views fill the window
                _ if no_traces && self.ws.summaries.is_some() => self.ranks.ui(ui, &mut cx),
                // flight-recorder dumps alone: their grid fills the window
                (None, None) if no_traces && !self.ws.flight_recorder.is_empty() => {
                    self.flight_recorder.ui(ui, &mut cx)
                }
                (Some(p), _) if main_memory => p.ui(ui, &mut cx),
                (_, Some(p)) if main_kernels => p.ui(ui, &mut cx),
                _ => self.timeline.ui(ui, &mut cx),
            }
        });
    }

    /// The bottom tabs and Details, at the sizes an opened session gave them (for one frame).
    fn bottom_and_details(&mut self, ui: &mut egui::Ui, cmds: &mut Vec<Command>) {
        let restore = self.restore_panels.take();
        let mut bottom = egui::Panel::bottom("strobe_bottom").resizable(true).default_size(250.0);
        if let Some(p) = restore {
            bottom = bottom.exact_size(p.bottom);
        }
        let bottom_h = bottom.show(ui, |ui| {
            // every bottom tab, in the tab bar's order: adding one is a line here (and its id
            // in `BottomTab`)
            let mut tabs: [(BottomTab, &mut dyn Pane); 13] = [
                (BottomTab::Kernels, &mut self.kernels),
                (BottomTab::Ops, &mut self.ops),
                (BottomTab::Gaps, &mut self.gaps),
                (BottomTab::Steps, &mut self.steps),
                (BottomTab::Area, &mut self.area),
                (BottomTab::Load, &mut self.load_summary),
                (BottomTab::Efficiency, &mut self.efficiency),
                (BottomTab::KernelSol, &mut self.kernel_sol),
                (BottomTab::Memory, &mut self.memory),
                (BottomTab::Ranks, &mut self.ranks),
                (BottomTab::Pipeline, &mut self.pipeline),
                (BottomTab::FlightRecorder, &mut self.flight_recorder),
                (BottomTab::Notes, &mut self.notes),
            ];
            crate::panes::show(ui, &mut tabs, &mut self.bottom_tab, &mut view_ctx!(self, cmds));
        });
        // Details reads timeline spans: nothing to say beside a snapshot or an ncu report alone
        let mut details = egui::Panel::right("strobe_details").resizable(true).default_size(380.0);
        if let Some(p) = restore {
            details = details.exact_size(p.details);
        }
        let details_w = details.show(ui, |ui| {
            self.details.ui(ui, &mut view_ctx!(self, cmds));
        });
        self.panel_sizes = Some(crate::session::PanelSizes {
            bottom: bottom_h.response.rect.height(),
            details: details_w.response.rect.width(),
        });
    }
}
