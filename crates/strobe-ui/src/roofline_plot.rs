//! What the two roofline plots (the Efficiency tab's and the ncu kernel pane's) share: decade
//! grid marks labelled with SI prefixes in FLOP/byte and FLOP/s, and a legend drawn above the
//! plot (egui_plot's own legend sits inside the plot, over the roofs and the points).

use egui::Color32;
use egui_plot::GridMark;

/// Grid marks at every decade (log10 space), every other one when they would crowd.
pub fn decades(input: egui_plot::GridInput) -> Vec<GridMark> {
    let (lo, hi) = input.bounds;
    if !(lo.is_finite() && hi.is_finite()) || hi - lo > 400.0 {
        return Vec::new();
    }
    let step = if input.base_step_size * 40.0 > 1.0 { 2.0 } else { 1.0 };
    let mut v = (lo / step).floor() * step;
    let mut out = Vec::new();
    while v <= hi {
        out.push(GridMark { value: v, step_size: step });
        v += step;
    }
    out
}

/// A decade's label: 10^`exp` in `unit`, below one as a decimal ("0.01 FLOP/B"), above with
/// an SI prefix ("1 TFLOP/s").
pub fn decade_label(exp: i32, unit: &str) -> String {
    if (-4..0).contains(&exp) {
        format!("{} {unit}", 10f64.powi(exp))
    } else {
        crate::units::si(10f64.powi(exp), unit)
    }
}

/// An axis formatter (log10 values) that labels whole decades in `unit`, nothing between,
/// and nothing for a mark outside the axis' visible range (egui_plot asks for the marks
/// around it too, and would print them beside the plot).
pub fn axis_formatter(unit: &'static str) -> impl Fn(GridMark, &std::ops::RangeInclusive<f64>) -> String {
    move |m, range| {
        if range.contains(&m.value) && (m.value - m.value.round()).abs() < 1e-6 {
            decade_label(m.value.round() as i32, unit)
        } else {
            String::new()
        }
    }
}

/// One entry of the legend: a line (a ceiling) or a dot (a kind of point), with its figure
/// (a ceiling's peak) shown beside its name.
pub struct LegendEntry {
    pub label: String,
    pub color: Color32,
    pub line: bool,
    pub value: Option<String>,
}

/// The legend as a row of swatches and labels above the plot, wrapping between entries (an
/// entry, swatch, name and figure, stays on one line).
pub fn legend_row(ui: &mut egui::Ui, entries: &[LegendEntry]) {
    const SWATCH: egui::Vec2 = egui::vec2(18.0, 12.0);
    ui.horizontal_wrapped(|ui| {
        ui.style_mut().wrap_mode = Some(egui::TextWrapMode::Extend);
        let font = egui::TextStyle::Body.resolve(ui.style());
        let gap = ui.spacing().item_spacing.x;
        let row_w = ui.available_width();
        for (i, e) in entries.iter().enumerate() {
            // the entry's width, measured before it is placed: a new row when it would not fit
            let text_w = |t: &str| ui.painter().layout_no_wrap(t.to_string(), font.clone(), Color32::WHITE).size().x;
            let w = SWATCH.x + gap + text_w(&e.label) + e.value.as_deref().map_or(0.0, |v| gap + text_w(v));
            if i > 0 && ui.available_size_before_wrap().x < w + 8.0 + 2.0 * gap && w < row_w {
                ui.end_row();
            }
            let (rect, _) = ui.allocate_exact_size(SWATCH, egui::Sense::hover());
            let p = ui.painter();
            if e.line {
                p.line_segment([rect.left_center(), rect.right_center()], egui::Stroke::new(2.0, e.color));
            } else {
                p.circle_filled(rect.center(), 4.5, e.color);
            }
            ui.label(&e.label);
            if let Some(v) = &e.value {
                ui.weak(v);
            }
            ui.add_space(8.0);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decade_labels() {
        assert_eq!(decade_label(-2, "FLOP/B"), "0.01 FLOP/B");
        assert_eq!(decade_label(0, "FLOP/B"), "1 FLOP/B");
        assert_eq!(decade_label(3, "FLOP/B"), "1 kFLOP/B");
        assert_eq!(decade_label(6, "FLOP/s"), "1 MFLOP/s");
        assert_eq!(decade_label(12, "FLOP/s"), "1 TFLOP/s");
        assert_eq!(decade_label(14, "FLOP/s"), "100 TFLOP/s");
        assert_eq!(decade_label(-8, "FLOP/B"), "10 nFLOP/B");
    }
}
