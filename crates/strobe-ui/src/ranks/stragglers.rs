//! The Stragglers section: a verdict line (who held the others back, in how many steps), the
//! rule it applies, then one block per step with a straggler: its headline with a "show in
//! timeline" button, the evidence as labelled figures, and the per-collective skew and what
//! the rank ran before its first late collective, folded.

use super::heat_map::Click;
use super::Computed;
use egui::RichText;
use strobe_analysis::ranks::straggler::{StepStraggler, StragglerPattern};

const STRAGGLER: egui::Color32 = egui::Color32::from_rgb(235, 120, 60);

fn ms(ns: i64) -> String {
    format!("{:.3} ms", ns as f64 / 1e6)
}

/// The verdict over the whole job, one line.
pub fn verdict(c: &Computed) -> String {
    let r = &c.report;
    if r.stragglers.is_empty() {
        return "No straggler: no rank held the others back materially in any step.".into();
    }
    let steps = r.steps.len();
    let who: Vec<String> = r
        .stragglers
        .iter()
        .map(|s| {
            format!("rank {} in {} of {steps} steps ({})", s.rank, s.steps.len(), s.kind.as_str().replace('_', "-"))
        })
        .collect();
    let pattern = match r.straggler_pattern {
        StragglerPattern::Fixed => " — always the same rank",
        StragglerPattern::Rotating => " — several ranks by turns",
        StragglerPattern::None => "",
    };
    format!("Straggler: {}{pattern}", who.join(", "))
}

/// The section; returns the step a "show in timeline" button asked for.
pub fn ui(ui: &mut egui::Ui, c: &Computed) -> Option<Click> {
    let r = &c.report;
    ui.label(RichText::new(verdict(c)).strong().color(if r.stragglers.is_empty() {
        ui.visuals().strong_text_color()
    } else {
        STRAGGLER
    }));
    // the links' verdict beside the ranks': a late rank is a straggler, a group moving its
    // bytes slowly with nobody late is a slow link
    if let Some(v) = super::bandwidth::verdict(c) {
        let colour = if r.slow_links.is_empty() { ui.visuals().strong_text_color() } else { STRAGGLER };
        ui.label(RichText::new(v).strong().color(colour));
    }
    ui.weak(format!(
        "A rank is the straggler of a step when it arrives last at most of the step's collectives and the others waited for it at least {} more than it waited (10 % of the median step, {}).",
        ms(r.straggler_threshold_ns),
        ms(r.median_step_ns)
    ));
    let mut click = None;
    egui::ScrollArea::vertical().id_salt("straggler_scroll").auto_shrink([false, true]).show(ui, |ui| {
        for s in &r.straggler_steps {
            ui.add_space(6.0);
            ui.separator();
            if let Some(c2) = finding(ui, c, s) {
                click = Some(c2);
            }
        }
    });
    click
}

/// Where rank `rank`'s step `step` is: the click that shows it.
fn step_click(c: &Computed, rank: i64, step: &str) -> Option<Click> {
    let rank_index = c.report.ranks.iter().position(|e| e.rank == rank)?;
    let row = c.report.steps.iter().find(|s| s.name == step)?;
    let s = row.per_rank.iter().find(|p| p.rank == rank)?;
    Some(Click { rank_index, step: Some((s.start_ns, s.start_ns + s.dur_ns)) })
}

/// One step's straggler: headline and button, the figures, the folded detail.
fn finding(ui: &mut egui::Ui, c: &Computed, s: &StepStraggler) -> Option<Click> {
    let mut click = None;
    ui.horizontal(|ui| {
        ui.label(
            RichText::new(format!(
                "{}: rank {} is the straggler (last at {} of {} collectives)",
                s.step, s.rank, s.last_at, s.collectives
            ))
            .strong()
            .color(STRAGGLER),
        )
        .on_hover_text(&s.evidence);
        let target = step_click(c, s.rank, &s.step);
        let b = ui
            .add_enabled(target.is_some(), egui::Button::new("show in timeline").small())
            .on_hover_text(format!("rank {}'s {} on the timeline", s.rank, s.step));
        if b.clicked() {
            click = target;
        }
    });
    let max_skew = s.per_collective.iter().map(|e| e.skew_ns).max();
    egui::Grid::new(("straggler_figures", &s.step, s.rank)).num_columns(2).spacing([16.0, 2.0]).show(ui, |ui| {
        let mut row = |k: &str, v: String| {
            ui.weak(k);
            ui.monospace(v);
            ui.end_row();
        };
        row("others waited for it", format!("{} (median over the other ranks)", ms(s.median_others_wait_ns)));
        row("it waited", ms(s.own_wait_ns));
        row("the bar", format!("{} (others' wait less its own must reach it)", ms(s.threshold_ns)));
        row(
            "exposed wait it caused",
            format!(
                "{} ({}; its usual {})",
                ms(s.blamed_exposed_wait_ns),
                s.kind.as_str().replace('_', "-"),
                ms(s.usual_blamed_ns)
            ),
        );
        if let Some(m) = max_skew {
            row("largest arrival skew", ms(m));
        }
    });
    egui::CollapsingHeader::new(format!("arrival skew per collective ({})", s.per_collective.len()))
        .id_salt(("skew", &s.step))
        .show(ui, |ui| {
            for e in &s.per_collective {
                ui.monospace(format!(
                    "{} #{}: skew {}, straggler arrived +{}{}",
                    e.name,
                    e.occurrence,
                    ms(e.skew_ns),
                    ms(e.straggler_arrival_ns),
                    if e.straggler_last { " (last)" } else { "" }
                ));
            }
        });
    if let Some(b) = &s.before {
        egui::CollapsingHeader::new(format!(
            "what rank {} did before its first late {}: {} compute, {} GPU idle",
            s.rank,
            b.collective,
            ms(b.compute_ns),
            ms(b.gpu_idle_ns)
        ))
        .id_salt(("before", &s.step))
        .show(ui, |ui| {
            for k in &b.top_kernels {
                ui.monospace(format!("{:>4}× {:>12}  {}", k.count, ms(k.total_ns), k.name));
            }
        });
    }
    click
}
