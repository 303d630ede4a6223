//! The legend beside the bars: every part in its colour, with its ms and share in the step in
//! focus (hovered, else selected, else the median) and in the median step; each part a link to
//! its evidence in the step in focus, and beside it the evidence itself (op classes, the
//! largest other GPU work, the collectives that waited, the CPU ranges that held the host),
//! each a link of its own.

use super::bars::share;
use super::colors::part_color;
use super::links::{evidence, part_commands, part_link_text};
use crate::commands::Command;
use crate::workspace::TraceId;
use strobe_analysis::attribution::{StepBreakdown, PART_NAMES};
use strobe_analysis::report::fmt_ns;

/// Evidence links shown beside a part (the rest are in its bar's tooltip).
const EVIDENCE_SHOWN: usize = 3;

/// Draws the legend; returns what a click asked for. One line per part, so the ten fit the
/// bottom panel's usual height.
pub fn ui(ui: &mut egui::Ui, trace: TraceId, focus: &StepBreakdown, median: Option<&StepBreakdown>) -> Vec<Command> {
    let mut out = Vec::new();
    let dark = ui.visuals().dark_mode;
    let same = median.is_some_and(|m| m.step == focus.step && m.start_ns == focus.start_ns);
    // rows of text height: the ten parts and the header fit the bottom panel's usual height
    ui.spacing_mut().interact_size.y = 14.0;
    egui::Grid::new("step_legend").num_columns(4).spacing([12.0, 1.0]).show(ui, |ui| {
        ui.strong("part");
        ui.strong(crate::timeline::truncate(&focus.step, 24)).on_hover_text(&focus.step);
        match median {
            Some(m) if !same => {
                ui.strong("median step").on_hover_text(&m.step);
            }
            _ => {
                ui.weak(if same { "(the median step)" } else { "" });
            }
        }
        ui.strong("made of");
        ui.end_row();
        for (i, (key, label)) in PART_NAMES.iter().enumerate() {
            let ns = focus.parts.values()[i];
            let m_ns = median.map_or(0, |m| m.parts.values()[i]);
            ui.horizontal(|ui| {
                let (r, _) = ui.allocate_exact_size(egui::vec2(12.0, 12.0), egui::Sense::hover());
                ui.painter().rect_filled(r, 2.0, part_color(i, dark));
                let text = egui::RichText::new(*label);
                if ns > 0 || m_ns > 0 {
                    if ui.link(text).on_hover_text(part_link_text(key)).clicked() {
                        out.extend(part_commands(trace, focus, key));
                    }
                } else {
                    ui.weak(text).on_hover_text("none in these steps");
                }
            });
            ui.label(format!("{} · {}", fmt_ns(ns), share(ns, focus.dur_ns)));
            match median.filter(|_| !same) {
                Some(m) => ui.label(format!("{} · {}", fmt_ns(m_ns), share(m_ns, m.dur_ns))),
                None => ui.label(""),
            };
            ui.horizontal(|ui| {
                let ev = evidence(trace, focus, key);
                for e in ev.iter().take(EVIDENCE_SHOWN) {
                    let text = crate::timeline::truncate(&e.label, 28);
                    let tip = format!("{} · {} · {}", e.label, fmt_ns(e.ns), share(e.ns, focus.dur_ns));
                    if e.commands.is_empty() {
                        ui.weak(text).on_hover_text(tip);
                    } else if ui.link(text).on_hover_text(tip).clicked() {
                        out.extend(e.commands.iter().cloned());
                    }
                }
                if ev.len() > EVIDENCE_SHOWN {
                    ui.weak(format!("+{}", ev.len() - EVIDENCE_SHOWN));
                }
            });
            ui.end_row();
        }
    });
    for n in &focus.notes {
        ui.colored_label(egui::Color32::from_rgb(230, 180, 60), n);
    }
    out
}
