//! The Pipeline tab: the schedule, the theoretical bubble with its denominator, the bottleneck
//! stage with its evidence, and the stage × step heat map (one row per step, one column per
//! stage's rank), coloured on the rank × step table's scale (`ranks::heat_map::heat`: the
//! difference from the typical cell as a share of the median step). A click shows that
//! stage's rank and step in the timeline.

use super::PipelineView;
use crate::commands::Command;
use crate::ranks::heat_map::{heat, FULL, NEUTRAL};
use crate::view_ctx::ViewCtx;
use egui::{Color32, RichText, Sense, Vec2};
use strobe_analysis::pipeline::bubbles::StageStep;
use strobe_analysis::pipeline::schedule::Schedule;
use strobe_analysis::pipeline::PipelineReport;
use strobe_analysis::report::fmt_ns;

#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum Metric {
    #[default]
    Bubble,
    Work,
    P2pWait,
}

impl Metric {
    pub const ALL: [Metric; 3] = [Metric::Bubble, Metric::Work, Metric::P2pWait];

    pub fn name(self) -> &'static str {
        match self {
            Metric::Bubble => "bubble %",
            Metric::Work => "work",
            Metric::P2pWait => "P2P wait",
        }
    }

    /// The figure the colour reads (ns: a bubble % is coloured by its bubble time).
    pub fn ns(self, s: &StageStep) -> i64 {
        match self {
            Metric::Bubble => s.bubble_ns,
            Metric::Work => s.work_ns,
            Metric::P2pWait => s.p2p_wait_ns,
        }
    }

    pub fn text(self, s: &StageStep) -> String {
        match self {
            Metric::Bubble => format!("{:.1} %", s.bubble_pct),
            Metric::Work | Metric::P2pWait => format!("{:.3}", self.ns(s) as f64 / 1e6),
        }
    }
}

pub fn schedule_name(s: Schedule) -> &'static str {
    match s {
        Schedule::Gpipe => "GPipe",
        Schedule::OneFOneB => "1F1B",
        Schedule::Interleaved => "interleaved",
        Schedule::Unknown => "unknown",
    }
}

/// The tooltip of one cell: every figure of the stage in the step.
pub fn cell_tip(step: &str, s: &StageStep) -> String {
    let ms = |ns: i64| format!("{:.3} ms", ns as f64 / 1e6);
    format!(
        "stage {} · rank {} · {step}\nstep {} · work {} · bubble {} ({:.1} %)\n  warm-up {} · P2P wait {} · other idle {} · cool-down {}\n{} forward · {} backward{}\nclick: show in the timeline",
        s.stage,
        s.rank,
        ms(s.step_ns),
        ms(s.work_ns),
        ms(s.bubble_ns),
        s.bubble_pct,
        ms(s.warmup_ns),
        ms(s.p2p_wait_ns),
        ms(s.other_idle_ns),
        ms(s.cooldown_ns),
        s.forward,
        s.backward,
        if s.weight > 0 { format!(" · {} weight", s.weight) } else { String::new() }
    )
}

pub fn ui(ui: &mut egui::Ui, pv: &PipelineView, metric: &mut Metric, cx: &mut ViewCtx) {
    let r = &pv.pipeline.report;
    schedule_lines(ui, r);
    stage_grid(ui, pv, metric, cx);
    if !r.p2p.is_empty() {
        p2p_links(ui, r);
    }
}

/// The schedule, its theoretical bubble, the bottleneck stage and the strips' legend.
fn schedule_lines(ui: &mut egui::Ui, r: &PipelineReport) {
    ui.horizontal_wrapped(|ui| {
        ui.strong(format!("{} schedule", schedule_name(r.schedule)));
        let v = if r.virtual_stages > 1 { format!(" × {} chunks", r.virtual_stages) } else { String::new() };
        let src = match r.microbatch_source {
            strobe_analysis::pipeline::microbatch::MicrobatchSource::Annotation => "from annotations",
            strobe_analysis::pipeline::microbatch::MicrobatchSource::Transfers => "from the transfers",
        };
        ui.label(format!("· {} stages{v} · {} microbatches ({src})", r.stages, r.microbatches));
        ui.separator();
        match (r.theoretical_bubble_pct, &r.theoretical_bubble_formula) {
            (Some(p), Some(f)) => {
                ui.label(format!("theoretical bubble {p:.1} %")).on_hover_text(
                    "the schedule's bubble with equal stages and free transfers, as a share of the step",
                );
                ui.weak(format!("= {f}"));
            }
            _ => {
                ui.weak("no theoretical bubble (schedule not recognised)");
            }
        }
    });
    if let (Some(s), Some(rank)) = (r.bottleneck_stage, r.bottleneck_rank) {
        ui.horizontal_wrapped(|ui| {
            ui.label(
                RichText::new(format!("bottleneck: stage {s} (rank {rank})"))
                    .strong()
                    .color(Color32::from_rgb(230, 120, 90)),
            );
            if let Some(e) = &r.bottleneck_evidence {
                ui.weak(e);
            }
        });
    }
    ui.horizontal_wrapped(|ui| {
        ui.weak("timeline strips: solid = microbatch work, dim = waiting inside its range; bubble:");
        for k in crate::timeline::pipeline_strip::BubbleKind::ALL {
            if k != crate::timeline::pipeline_strip::BubbleKind::Cooldown {
                let name = if k == crate::timeline::pipeline_strip::BubbleKind::Warmup {
                    "warm-up / cool-down"
                } else {
                    k.name()
                };
                let (r, resp) = ui.allocate_exact_size(Vec2::new(18.0, 10.0), Sense::hover());
                ui.painter().rect_filled(r, 1.0, k.edge());
                resp.on_hover_text(k.explain());
                ui.label(RichText::new(name).color(k.edge())).on_hover_text(k.explain());
            }
        }
    });
}

/// The metric picker and a cell per step and stage, coloured against the typical cell; a
/// click shows that stage's step in the timeline.
fn stage_grid(ui: &mut egui::Ui, pv: &PipelineView, metric: &mut Metric, cx: &mut ViewCtx) {
    let r = &pv.pipeline.report;
    ui.horizontal(|ui| {
        ui.label("Cell:");
        for m in Metric::ALL {
            ui.selectable_value(metric, m, m.name());
        }
    });
    let cells: Vec<&StageStep> = r.steps.iter().flat_map(|s| s.stages.iter()).collect();
    let typical = strobe_analysis::stats::median(&cells.iter().map(|s| metric.ns(s)).collect::<Vec<_>>()).unwrap_or(0);
    let step_ns = strobe_analysis::stats::median(&cells.iter().map(|s| s.step_ns).collect::<Vec<_>>()).unwrap_or(1);
    let unit = if *metric == Metric::Bubble { "bubble % of the step" } else { "ms" };
    ui.weak(format!(
        "{unit} · colour: difference from the typical cell ({:.3} ms, the median) as a share of the median step ({:.3} ms); \
         grey within ±{:.0} %, full red / green from ±{:.0} % · click: show that stage's step in the timeline",
        typical as f64 / 1e6,
        step_ns as f64 / 1e6,
        NEUTRAL * 100.0,
        FULL * 100.0
    ));
    // wide pipelines scroll sideways here; the whole pane scrolls down (PipelinePane::ui)
    egui::ScrollArea::horizontal().id_salt("pipeline_scroll").show(ui, |ui| {
        egui::Grid::new("pipeline_grid").spacing([4.0, 3.0]).show(ui, |ui| {
            ui.strong("step");
            for pr in &pv.pipeline.ranks {
                let bn = r.bottleneck_rank == Some(pr.rank);
                let h = format!("stage {} · rank {}{}", pr.stage, pr.rank, if bn { " (bottleneck)" } else { "" });
                ui.strong(h);
            }
            ui.end_row();
            for (si, row) in r.steps.iter().enumerate() {
                ui.label(&row.name);
                for (k, s) in row.stages.iter().enumerate() {
                    let text = metric.text(s);
                    let (rect, resp) = ui.allocate_exact_size(Vec2::new(120.0, 20.0), Sense::click());
                    ui.painter().rect_filled(rect, 2.0, heat(metric.ns(s), typical, step_ns));
                    ui.painter().text(
                        rect.center(),
                        egui::Align2::CENTER_CENTER,
                        &text,
                        egui::FontId::monospace(11.0),
                        Color32::WHITE,
                    );
                    let resp = resp.on_hover_text(cell_tip(&row.name, s));
                    let range = pv.pipeline.ranks.get(k).and_then(|pr| pr.bubbles.get(si));
                    if resp.clicked() {
                        if let (Some(&trace), Some(iv)) = (pv.traces.get(k), range) {
                            cx.emit(Command::ShowRankStep { trace, t0: iv.t0, t1: iv.t1 });
                        }
                    }
                    // a label the accessibility tree (and tests) can find
                    resp.widget_info(|| {
                        egui::WidgetInfo::labeled(
                            egui::Role::Button,
                            true,
                            format!("{} stage {} rank {}: {text}", row.name, s.stage, s.rank),
                        )
                    });
                }
                ui.end_row();
            }
        });
    });
}

/// Per pair of stages: the transfers, their bytes, and the time spent waiting on them.
fn p2p_links(ui: &mut egui::Ui, r: &PipelineReport) {
    ui.separator();
    ui.strong("Point-to-point links")
        .on_hover_text("per pair: transfer = the shorter side's flight, wait = the longer side's excess; summed over the pairs (posted sends overlap, so a link's wait can exceed the time it covers)");
    egui::Grid::new("pipeline_p2p_grid").striped(true).show(ui, |ui| {
        for h in ["link", "pairs", "bytes", "transfer", "wait", "receiver waited"] {
            ui.label(RichText::new(h).strong());
        }
        ui.end_row();
        for l in &r.p2p {
            ui.label(format!("stage {} -> {} (rank {} -> {})", l.from_stage, l.to_stage, l.from_rank, l.to_rank));
            ui.monospace(l.pairs.to_string());
            ui.monospace(format!("{:.1} MB", l.bytes as f64 / 1e6));
            ui.monospace(fmt_ns(l.transfer_ns));
            ui.monospace(fmt_ns(l.wait_ns));
            ui.monospace(fmt_ns(l.recv_wait_ns));
            ui.end_row();
        }
    });
}
