//! "Where a faster kernel pays most": the profiled kernels ranked by what their estimated
//! speedup would save per step of the trace open beside the report
//! (`strobe_analysis::ncu_gain`), a bar each for the gain's share of the step. A click on a
//! row selects the kernel's longest launch.

use egui::{Color32, RichText};
use strobe_analysis::ncu_gain::{duration, StepGains};
use strobe_analysis::roofline::RooflineReport;

const GAIN: Color32 = Color32::from_rgb(46, 160, 67);

/// Draws the list; returns the launch (index into `report.kernels`) of a clicked row.
pub fn list(ui: &mut egui::Ui, g: &StepGains, report: &RooflineReport) -> Option<usize> {
    ui.label(
        RichText::new(format!(
            "per step: mean of {} steps, {} · gain = the kernel's time per step × its estimated speedup \
             (ncu's largest global rule estimate, else its roofline distance)",
            g.steps,
            duration(g.step_ns)
        ))
        .small()
        .weak(),
    );
    let top = g.kernels.first().map(|k| k.gain_pct_of_step).unwrap_or(0.0).max(1e-9);
    let mut clicked = None;
    for k in g.kernels.iter().take(15) {
        let resp = ui
            .horizontal(|ui| {
                let (rect, _) = ui.allocate_exact_size(egui::vec2(120.0, 14.0), egui::Sense::hover());
                ui.painter().rect_filled(rect, 2.0, ui.visuals().extreme_bg_color);
                let w = rect.width() * (k.gain_pct_of_step / top).clamp(0.0, 1.0) as f32;
                ui.painter().rect_filled(egui::Rect::from_min_size(rect.min, egui::vec2(w, rect.height())), 2.0, GAIN);
                ui.label(RichText::new(k.sentence(g.step_ns)).monospace().small());
                let why = match k.gain_from {
                    "ncu" => k.ncu_rule.as_deref().map(strobe_analysis::ncu_detail::paragraph::rule_words),
                    _ => Some("roofline distance".to_string()),
                };
                if let Some(w) = why {
                    ui.label(RichText::new(format!("({w})")).small().weak());
                }
                ui.add(egui::Label::new(RichText::new(&k.timeline_name).small()).truncate().sense(egui::Sense::click()))
            })
            .inner;
        let longest = k.launches.iter().copied().max_by_key(|&i| report.kernels.get(i).and_then(|x| x.duration_ns));
        let resp = resp.on_hover_text(format!(
            "{}\n{} per step in {:.1} calls · ncu estimate {} · roofline estimate {}\nclick: select its launch",
            k.name,
            duration(k.ns_per_step),
            k.calls_per_step,
            k.ncu_speedup_pct.map(|p| format!("{p:.1} %")).unwrap_or_else(|| "-".into()),
            k.roofline_speedup_pct.map(|p| format!("{p:.1} %")).unwrap_or_else(|| "-".into()),
        ));
        if resp.clicked() {
            clicked = longest;
        }
    }
    if g.kernels.len() > 15 {
        ui.weak(format!("{} more kernels", g.kernels.len() - 15));
    }
    clicked
}
