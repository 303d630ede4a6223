//! The Gaps tab: each open trace's longest GPU idle gaps (at least the idle threshold), longest
//! first — when each starts (the ruler's time), how long, why (host wait or other: the idle
//! breakdown's causes) and the op that held the launching thread (`strobe_analysis::gaps`).
//! A row shows its gap on the timeline and selects that op, so Details names it.

use crate::commands::Command;
use crate::view_ctx::ViewCtx;
use crate::workspace::SpanRef;
use egui_extras::{Column, TableBuilder};
use strobe_analysis::report::fmt_ns;

#[derive(Default)]
pub struct GapsPane {
    /// The row last clicked: (trace index, row).
    picked: Option<(usize, usize)>,
    /// Rows in time order (the Start header) instead of longest first (the Length header).
    by_start: bool,
}

impl GapsPane {
    pub fn ui(&mut self, ui: &mut egui::Ui, cx: &mut ViewCtx) {
        let ws = cx.ws;
        if ws.traces.iter().any(|t| !t.derived.overview_ready()) {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.weak("finding the idle gaps…");
            });
            return;
        }
        let several = ws.traces.len() > 1;
        let mut rows: Vec<(usize, usize)> = ws
            .traces
            .iter()
            .enumerate()
            .flat_map(|(ti, t)| (0..t.largest_gaps().len()).map(move |i| (ti, i)))
            .collect();
        let gap = |&(ti, i): &(usize, usize)| {
            let t = &ws.traces[ti];
            let g = &t.largest_gaps()[i];
            (t.to_shared(g.start_ns), g.len_ns)
        };
        if self.by_start {
            rows.sort_by_key(|r| gap(r).0);
        } else {
            rows.sort_by_key(|r| {
                let (start, len) = gap(r);
                (std::cmp::Reverse(len), start)
            });
        }
        let threshold = ws.traces.first().map_or(0, |t| t.derived.idle_threshold_ns);
        ui.weak(format!(
            "The longest GPU idle gaps of at least {} (the View menu's Idle threshold), longest first; \"held by\" is the op the launching thread was in during the gap. Click a row to show the gap.",
            fmt_ns(threshold)
        ));
        if rows.is_empty() {
            ui.label("No GPU idle gap reaches the threshold.");
            return;
        }
        let origin = ws.origin();
        let mut clicked = None;
        let mut order = None;
        TableBuilder::new(ui)
            .id_salt("gaps_table")
            .striped(true)
            .sense(egui::Sense::click())
            .columns(Column::auto().at_least(60.0), 4 + several as usize)
            .column(Column::remainder().at_least(200.0).clip(true))
            .header(20.0, |mut h| {
                let mut heads = vec![("GPU", ""), ("Start", "on the ruler's time"), ("Length", ""), ("Cause", "")];
                if several {
                    heads.insert(0, ("Trace", ""));
                }
                heads.push(("Held by", "the innermost span of the launching thread (its NVTX ranges included) covering the whole gap, else the one overlapping at least half of it; – when nothing recorded did"));
                for (label, tip) in heads {
                    h.col(|ui| {
                        // Start and Length order the rows (time order / longest first)
                        let r = match label {
                            "Start" | "Length" => {
                                let on = self.by_start == (label == "Start");
                                let text = if on { format!("{label} v") } else { label.to_string() };
                                let r = ui.selectable_label(on, egui::RichText::new(text).strong());
                                if r.clicked() {
                                    order = Some(label == "Start");
                                }
                                r
                            }
                            _ => ui.strong(label),
                        };
                        if !tip.is_empty() {
                            r.on_hover_text(tip);
                        }
                    });
                }
            })
            .body(|body| {
                // labels that select text would take the click from the row
                let cell = |ui: &mut egui::Ui, text: String| ui.add(egui::Label::new(text).truncate().selectable(false));
                body.rows(18.0, rows.len(), |mut row| {
                    let (ti, i) = rows[row.index()];
                    let t = &ws.traces[ti];
                    let g = &t.largest_gaps()[i];
                    row.set_selected(self.picked == Some((ti, i)));
                    if several {
                        row.col(|ui| {
                            cell(ui, t.label.clone());
                        });
                    }
                    row.col(|ui| {
                        cell(ui, g.device.to_string());
                    });
                    row.col(|ui| {
                        cell(ui, fmt_ns(t.to_shared(g.start_ns) - origin));
                    });
                    row.col(|ui| {
                        cell(ui, fmt_ns(g.len_ns));
                    });
                    row.col(|ui| {
                        cell(ui, g.cause.label().to_string()).on_hover_text(g.cause.explain());
                    });
                    row.col(|ui| {
                        let name = g.held_by_name.as_deref().unwrap_or("–");
                        let r = cell(ui, name.to_string());
                        if let Some(s) = g.held_by {
                            let st = &t.store;
                            r.on_hover_text(format!("{name}\n{} long", fmt_ns(st.span_end(s) - st.span_start(s))));
                        }
                    });
                    if row.response().clicked() {
                        clicked = Some((ti, i));
                    }
                });
            });
        if let Some(by_start) = order {
            self.by_start = by_start;
        }
        if let Some((ti, i)) = clicked {
            self.picked = Some((ti, i));
            let t = &ws.traces[ti];
            let g = &t.largest_gaps()[i];
            cx.emit(Command::ShowRankStep { trace: t.id, t0: g.start_ns, t1: g.end_ns });
            if let Some(span) = g.held_by {
                cx.emit(Command::SelectSpan(SpanRef { trace: t.id, span }));
            }
        }
    }
}
