//! The rank × step heat map: one row per step, one column per rank, the chosen figure in each
//! cell, coloured by how far it is from the typical cell — the median of that figure over the
//! whole table — measured in steps: the difference as a share of the median step time. So
//! the colour means the same across the table: two ranks 0.1 % apart are both grey, a rank
//! that waits a fifth of a step longer is red wherever it is. * marks a step's straggler; a
//! click shows that rank's step in the timeline.

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

/// Differences within this share of the median step read as "the same" (grey).
pub const NEUTRAL: f64 = 0.02;
/// Differences of this share of the median step or more take the full colour.
pub const FULL: f64 = 0.25;

/// The colour of a cell `v` when the typical cell is `typical` and the median step `step_ns`.
pub fn heat(v: i64, typical: i64, step_ns: i64) -> Color32 {
    let d = (v - typical) as f64 / step_ns.max(1) as f64;
    let neutral = Color32::from_rgb(70, 70, 76);
    if d.abs() <= NEUTRAL {
        return neutral;
    }
    let f = ((d.abs() - NEUTRAL) / (FULL - NEUTRAL)).min(1.0) as f32;
    let to = if d > 0.0 { Color32::from_rgb(190, 45, 35) } else { Color32::from_rgb(35, 135, 60) };
    let mix = |a: u8, b: u8| (a as f32 + (b as f32 - a as f32) * (0.35 + 0.65 * f)) as u8;
    Color32::from_rgb(mix(neutral.r(), to.r()), mix(neutral.g(), to.g()), mix(neutral.b(), to.b()))
}

pub fn ui(ui: &mut egui::Ui, c: &Computed, metric: &mut Metric, cx: &mut crate::view_ctx::ViewCtx) {
    ui.horizontal(|ui| {
        ui.label("Cell:");
        for m in Metric::ALL {
            ui.selectable_value(metric, m, m.name());
        }
    });
    let r = &c.report;
    let all =
        |f: &dyn Fn(&RankStep) -> i64| -> Vec<i64> { r.steps.iter().flat_map(|s| s.per_rank.iter().map(f)).collect() };
    let typical = strobe_analysis::stats::median(&all(&|s| metric.of(s))).unwrap_or(0);
    let step_ns = strobe_analysis::stats::median(&all(&|s| s.dur_ns)).unwrap_or(1);
    ui.weak(format!(
        "ms · colour: difference from the typical cell ({:.3} ms, the median) as a share of the median step ({:.3} ms); \
         grey within ±{:.0} %, full red / green from ±{:.0} % · * straggler · click: show in the timeline",
        typical as f64 / 1e6,
        step_ns as f64 / 1e6,
        NEUTRAL * 100.0,
        FULL * 100.0
    ));
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
                for (ri, rk) in r.ranks.iter().enumerate() {
                    let Some(s) = row.per_rank.iter().find(|s| s.rank == rk.rank) else {
                        ui.weak("—");
                        continue;
                    };
                    let v = metric.of(s);
                    let star = if row.straggler == Some(rk.rank) { " *" } else { "" };
                    let text = format!("{:.3}{star}", v as f64 / 1e6);
                    let (rect, resp) = ui.allocate_exact_size(Vec2::new(96.0, 20.0), Sense::click());
                    ui.painter().rect_filled(rect, 2.0, heat(v, typical, step_ns));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_means_the_same_across_the_table() {
        let step = 50_000_000;
        // two ranks 0.1 % of a step apart: both the neutral grey
        assert_eq!(heat(50_050_000, 50_000_000, step), heat(49_950_000, 50_000_000, step));
        assert_eq!(heat(50_050_000, 50_000_000, step), heat(50_000_000, 50_000_000, step));
        // a fifth of a step slower is red, faster green, the full colour from a quarter
        let slow = heat(60_000_000, 50_000_000, step);
        assert!(slow.r() > slow.g() + 80, "{slow:?}");
        let fast = heat(40_000_000, 50_000_000, step);
        assert!(fast.g() > fast.r() + 50, "{fast:?}");
        assert_eq!(heat(70_000_000, 50_000_000, step), heat(90_000_000, 50_000_000, step));
        // a small figure (wait) is measured against the step, not against itself
        let wait = heat(2_000_000, 1_000_000, step);
        assert_eq!(wait, heat(0, 0, step), "1 ms more wait in a 50 ms step is 2 %: grey");
    }
}
