//! The A/B diff's step-time comparison: the median step of each side, part by part and op
//! class by op class (`attribution::compare`), as the CLI's `strobe diff` prints it.

use strobe_analysis::attribution::compare::{headline, title, BreakdownDiff, Delta};
use strobe_analysis::report::fmt_ns;

pub fn ui(ui: &mut egui::Ui, d: Option<&BreakdownDiff>) {
    let Some(d) = d else {
        ui.weak("Median step: one side has no steps to compare.");
        return;
    };
    ui.strong(title(d));
    let changed = headline(d, 100_000);
    if !changed.is_empty() {
        ui.label(changed);
    }
    // the bar's scale: the largest change, so the rows compare with each other
    let rows: Vec<&Delta> = d
        .parts
        .iter()
        .filter(|p| p.a_ns != 0 || p.b_ns != 0)
        .chain(d.classes.iter().filter(|c| c.delta_ns != 0))
        .collect();
    let scale = rows.iter().map(|r| r.delta_ns.unsigned_abs()).max().unwrap_or(0).max(1) as f32;
    egui::Grid::new("diff_breakdown").striped(true).num_columns(5).show(ui, |ui| {
        for h in ["part", "A", "B", "B − A", ""] {
            ui.strong(h);
        }
        ui.end_row();
        for r in rows {
            let class = d.classes.iter().any(|c| std::ptr::eq(c, r));
            ui.label(if class { format!("  {}", r.label) } else { r.label.clone() });
            ui.monospace(fmt_ns(r.a_ns));
            ui.monospace(fmt_ns(r.b_ns));
            ui.monospace(fmt_ns(r.delta_ns));
            delta_bar(ui, r.delta_ns as f32 / scale);
            ui.end_row();
        }
    });
}

/// A bar from the middle: right and red where B takes longer, left and green where shorter.
fn delta_bar(ui: &mut egui::Ui, x: f32) {
    let (rect, _) = ui.allocate_exact_size(egui::vec2(120.0, 10.0), egui::Sense::hover());
    let mid = rect.center().x;
    let end = mid + x.clamp(-1.0, 1.0) * rect.width() / 2.0;
    let colour = if x > 0.0 { egui::Color32::from_rgb(210, 70, 60) } else { egui::Color32::from_rgb(70, 170, 90) };
    let bar = egui::Rect::from_x_y_ranges(mid.min(end)..=mid.max(end), rect.y_range());
    ui.painter().rect_filled(bar, 1.0, colour);
    ui.painter().vline(mid, rect.y_range(), egui::Stroke::new(1.0, ui.visuals().weak_text_color()));
}
