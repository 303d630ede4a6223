//! The rank × step heat map: one row per step, one column per rank, the chosen figure in each
//! cell, coloured from the row's lowest (green) to highest (red) so the odd rank out stands
//! out; * marks a step's straggler. A click shows that rank's step in the timeline.

use super::Computed;
use crate::commands::Command;
use egui::{Color32, RichText, Sense, Vec2};
use strobe_analysis::ranks::step_table::RankStep;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Metric {
    StepTime,
    Compute,
    Comm,
    ExposedComm,
    Idle,
    Wait,
}

impl Metric {
    pub const ALL: [Metric; 6] =
        [Metric::StepTime, Metric::Compute, Metric::Comm, Metric::ExposedComm, Metric::Idle, Metric::Wait];
    pub fn name(self) -> &'static str {
        match self {
            Metric::StepTime => "step time",
            Metric::Compute => "compute",
            Metric::Comm => "comm",
            Metric::ExposedComm => "exposed comm",
            Metric::Idle => "idle",
            Metric::Wait => "wait",
        }
    }
    pub fn of(self, s: &RankStep) -> i64 {
        match self {
            Metric::StepTime => s.dur_ns,
            Metric::Compute => s.compute_ns,
            Metric::Comm => s.comm_ns,
            Metric::ExposedComm => s.exposed_comm_ns,
            Metric::Idle => s.idle_ns,
            Metric::Wait => s.wait_ns,
        }
    }
}

fn heat(v: i64, lo: i64, hi: i64) -> Color32 {
    let f = if hi > lo { (v - lo) as f32 / (hi - lo) as f32 } else { 0.0 };
    let g = Color32::from_rgb(40, 110, 60);
    let r = Color32::from_rgb(170, 50, 40);
    Color32::from_rgb(
        (g.r() as f32 + (r.r() as f32 - g.r() as f32) * f) as u8,
        (g.g() as f32 + (r.g() as f32 - g.g() as f32) * f) as u8,
        (g.b() as f32 + (r.b() as f32 - g.b() as f32) * f) as u8,
    )
}

pub fn ui(ui: &mut egui::Ui, c: &Computed, metric: &mut Metric, cx: &mut crate::view_ctx::ViewCtx) {
    ui.horizontal(|ui| {
        ui.label("Cell:");
        for m in Metric::ALL {
            ui.selectable_value(metric, m, m.name());
        }
        ui.weak("(ms; each row coloured from its lowest to its highest; * straggler; click: show in the timeline)");
    });
    let r = &c.report;
    egui::ScrollArea::both().id_salt("rank_step_scroll").max_height(ui.available_height() * 0.6).show(ui, |ui| {
        egui::Grid::new("rank_step_grid").spacing([4.0, 3.0]).show(ui, |ui| {
            ui.strong("step");
            for rk in &r.ranks {
                ui.strong(format!("rank {}", rk.rank));
            }
            ui.strong("collective skew max");
            ui.end_row();
            for row in &r.steps {
                ui.label(&row.name);
                let vals: Vec<i64> = row.per_rank.iter().map(|s| metric.of(s)).collect();
                let (lo, hi) = (vals.iter().copied().min().unwrap_or(0), vals.iter().copied().max().unwrap_or(0));
                for (ri, rk) in r.ranks.iter().enumerate() {
                    let Some(s) = row.per_rank.iter().find(|s| s.rank == rk.rank) else {
                        ui.weak("—");
                        continue;
                    };
                    let v = metric.of(s);
                    let star = if row.straggler == Some(rk.rank) { " *" } else { "" };
                    let text = format!("{:.3}{star}", v as f64 / 1e6);
                    let (rect, resp) = ui.allocate_exact_size(Vec2::new(96.0, 20.0), Sense::click());
                    ui.painter().rect_filled(rect, 2.0, heat(v, lo, hi));
                    ui.painter().text(
                        rect.center(),
                        egui::Align2::CENTER_CENTER,
                        &text,
                        egui::FontId::monospace(11.0),
                        Color32::WHITE,
                    );
                    let resp = resp.on_hover_text(format!(
                        "rank {} · {}\nstep {:.3} ms · compute {:.3} · comm {:.3} · exposed comm {:.3} · idle {:.3} · wait {:.3}",
                        rk.rank,
                        row.name,
                        s.dur_ns as f64 / 1e6,
                        s.compute_ns as f64 / 1e6,
                        s.comm_ns as f64 / 1e6,
                        s.exposed_comm_ns as f64 / 1e6,
                        s.idle_ns as f64 / 1e6,
                        s.wait_ns as f64 / 1e6
                    ));
                    if resp.clicked() {
                        cx.emit(Command::ShowRankStep {
                            trace: c.trace_of_rank[ri],
                            t0: s.start_ns,
                            t1: s.start_ns + s.dur_ns,
                        });
                    }
                    // a label the accessibility tree (and tests) can find
                    resp.widget_info(|| {
                        egui::WidgetInfo::labeled(
                            egui::Role::Button,
                            true,
                            format!("{} rank {}: {text}", row.name, rk.rank),
                        )
                    });
                }
                let skew = row.collective_skew_ns.iter().copied().max().unwrap_or(0);
                ui.monospace(format!("{:.3}", skew as f64 / 1e6));
                ui.end_row();
            }
        });
    });
    ui.separator();
    ui.strong("Per rank, across steps (median / p90 / max, ms)");
    egui::Grid::new("rank_summary_grid").striped(true).show(ui, |ui| {
        for h in ["rank", "step time", "wait"] {
            ui.label(RichText::new(h).strong());
        }
        ui.end_row();
        let d = |x: &strobe_analysis::ranks::distribution::Distribution| {
            format!("{:.3} / {:.3} / {:.3}", x.median_ns as f64 / 1e6, x.p90_ns as f64 / 1e6, x.max_ns as f64 / 1e6)
        };
        for s in &r.rank_summary {
            ui.label(format!("rank {}", s.rank));
            ui.monospace(d(&s.step_time));
            ui.monospace(d(&s.wait));
            ui.end_row();
        }
    });
}
