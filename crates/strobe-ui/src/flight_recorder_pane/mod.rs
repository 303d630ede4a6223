//! The flight-recorder pane: the open dumps matched across ranks. The verdicts first (each
//! mismatch and where each group stopped, click one to select its cell), then per process
//! group a ranks × sequence-number grid with the odd cells marked, and the selected cell's
//! entry: its op, sizes, dtypes, times and Python frames.

mod details;
mod grid;

use crate::view_ctx::ViewCtx;
use strobe_analysis::flight_recorder::{analyse, mismatch_sentence, FrReport};

#[derive(Default)]
pub struct FlightRecorderPane {
    /// The report and the workspace generation it was made for.
    report: Option<(u64, FrReport)>,
    /// Index into the report's groups.
    pub group: usize,
    /// The selected cell: (rank, seq) on `group`.
    pub selected: Option<(u32, i64)>,
    /// Where the grid's first cell was drawn last frame, and the cell's size (tests click by it).
    pub grid_origin: Option<(egui::Pos2, f32)>,
}

impl FlightRecorderPane {
    /// The report over the open dumps (made again when a dump opens or closes).
    pub fn report(&mut self, ws: &crate::workspace::Workspace) -> &FrReport {
        if self.report.as_ref().is_none_or(|(g, _)| *g != ws.generation) {
            self.report = Some((ws.generation, analyse(&ws.flight_recorder)));
            self.group = self.group.min(self.report.as_ref().map_or(0, |(_, r)| r.groups.len().saturating_sub(1)));
        }
        &self.report.as_ref().expect("made above").1
    }

    pub fn ui(&mut self, ui: &mut egui::Ui, cx: &mut ViewCtx) {
        if cx.ws.flight_recorder.is_empty() {
            ui.weak("Open PyTorch flight-recorder dumps (one file per rank) to match them here.");
            return;
        }
        let report = self.report(cx.ws).clone();
        egui::ScrollArea::vertical().id_salt("fr_pane").auto_shrink([false, false]).show(ui, |ui| {
            self.verdicts(ui, &report);
            ui.separator();
            ui.horizontal_wrapped(|ui| {
                ui.label("Process group:");
                for (i, g) in report.groups.iter().enumerate() {
                    let label = if g.desc.is_empty() { g.name.clone() } else { format!("{} ({})", g.name, g.desc) };
                    if ui.selectable_label(self.group == i, label).clicked() {
                        self.group = i;
                        self.selected = None;
                    }
                }
            });
            if let Some(g) = report.groups.get(self.group) {
                ui.weak(format!(
                    "members {:?} (from {}); {} collective sequence numbers",
                    g.members,
                    g.members_from,
                    g.seqs.len()
                ));
                grid::legend(ui);
                let (clicked, origin) = grid::show(ui, &report, g, &cx.ws.flight_recorder, self.selected);
                self.grid_origin = Some(origin);
                if let Some(clicked) = clicked {
                    self.selected = Some(clicked);
                }
                ui.separator();
                match self.selected {
                    Some((rank, seq)) => details::show(ui, &report, g, &cx.ws.flight_recorder, rank, seq),
                    None => {
                        ui.weak("Click a cell for its entry: op, sizes, dtypes, times and Python frames.");
                    }
                }
            }
        });
    }

    fn verdicts(&mut self, ui: &mut egui::Ui, report: &FrReport) {
        ui.label(
            egui::RichText::new(format!(
                "{} rank dump(s), {} group(s), {} mismatch(es)",
                report.ranks.len(),
                report.groups.len(),
                report.mismatches.len()
            ))
            .strong(),
        );
        if !report.missing_dumps.is_empty() {
            ui.colored_label(grid::MISSING, format!("no dump from ranks {:?}", report.missing_dumps));
        }
        for m in &report.mismatches {
            let text = egui::RichText::new(mismatch_sentence(m)).color(grid::kind_colour(&m.kind));
            // a transfer has no cell: the grid is the groups' collectives
            if m.p2p {
                ui.label(text);
                continue;
            }
            if ui.link(text).on_hover_text("select this cell in the grid").clicked() {
                self.group = report.groups.iter().position(|g| g.name == m.group).unwrap_or(0);
                self.selected = m.ranks.first().map(|&r| (r, m.seq));
            }
        }
        for s in &report.stuck {
            let behind: Vec<String> = s.not_arrived.iter().map(|b| b.rank.to_string()).collect();
            let mut line = format!("group {}: stopped at seq {} ({})", s.group, s.seq, s.op);
            if !behind.is_empty() {
                line += &format!("; never arrived: {}", behind.join(", "));
            }
            if !s.not_completed.is_empty() {
                line += &format!("; waiting inside it: {:?}", s.not_completed);
            }
            ui.label(line);
        }
        for p in &report.pending_p2p {
            ui.colored_label(
                grid::PENDING,
                format!(
                    "rank {}: {} (p2p seq {}) on group {} not completed ({})",
                    p.rank, p.entry.op, p.entry.seq, p.entry.group, p.entry.state
                ),
            );
        }
        for l in &report.last_completed_everywhere {
            ui.weak(format!("group {}: last completed by every member: seq {} ({})", l.group, l.seq, l.op));
        }
    }
}
