//! One step as a horizontal stacked bar: its parts left to right in `PART_NAMES` order, each as
//! long as its share of the longest step shown (so bars compare across steps), each part a
//! widget of its own (a tooltip with what it is made of; a click: its evidence), the step's
//! name before it (a click: the step on the timeline).

use super::colors::{part_color, text_on};
use super::links::{evidence, part_link_text};
use strobe_analysis::attribution::{StepBreakdown, PART_NAMES};
use strobe_analysis::report::fmt_ns;

/// Height of a bar row.
pub const BAR_H: f32 = 20.0;
/// Width of the step name before the bars.
pub const NAME_W: f32 = 190.0;

/// What the pointer and clicks did on a bar row this frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BarEvents {
    /// The row is under the pointer.
    pub hovered: bool,
    /// The step's name, or the row beside its parts, was clicked.
    pub name_clicked: bool,
    /// A part (its `PART_NAMES` index) was clicked.
    pub part_clicked: Option<usize>,
}

/// A part's share of its step, as the legend and the tooltips write it.
pub fn share(ns: i64, of: i64) -> String {
    if of <= 0 {
        return "–".into();
    }
    format!("{:.1} %", ns as f64 * 100.0 / of as f64)
}

/// A part's tooltip: its length, its share, what it is made of and what a click does.
pub fn part_tooltip(s: &StepBreakdown, i: usize) -> String {
    let (key, label) = PART_NAMES[i];
    let ns = s.parts.values()[i];
    let mut out = format!("{} · {label}\n{} · {} of the step", s.step, fmt_ns(ns), share(ns, s.dur_ns));
    if key == "model_at_peak_ns" {
        if let Some(m) = s.details.mfu {
            out += &format!(" (MFU {:.1} %)", m * 100.0);
        }
    }
    let ev = evidence(crate::workspace::TraceId::default(), s, key);
    for e in ev.iter().take(6) {
        out += &format!("\n  {} {}", fmt_ns(e.ns), e.label);
    }
    if ev.len() > 6 {
        out += &format!("\n  … {} more", ev.len() - 6);
    }
    out += "\n";
    out += part_link_text(key);
    out
}

/// The step name's tooltip: its length, its critical path, its notes.
pub fn step_tooltip(s: &StepBreakdown) -> String {
    let mut out = format!("{} · {}", s.step, fmt_ns(s.dur_ns));
    if let Some(r) = s.rank {
        out += &format!(" · rank {r}");
    }
    if let Some(p) = &s.critical_path {
        let b = &p.bounds;
        out += &format!(
            "\ncritical path {}: CPU {} · GPU compute {} · GPU comm {} · launch overhead {} · kernel gaps {} · data loading {}",
            fmt_ns(p.length_ns),
            fmt_ns(b.cpu_ns),
            fmt_ns(b.gpu_compute_ns),
            fmt_ns(b.gpu_comm_ns),
            fmt_ns(b.launch_overhead_ns),
            fmt_ns(b.kernel_gap_ns),
            fmt_ns(b.data_loading_ns)
        );
        for o in p.top_ops.iter().take(3) {
            out += &format!("\n  {} {}", fmt_ns(o.ns), o.name);
        }
    }
    for n in &s.notes {
        out += &format!("\nnote: {n}");
    }
    out += "\nclick: show the step on the timeline";
    out
}

/// Draws step `s`'s row: its name, then its bar scaled so that `scale_ns` fills `bar_w`.
pub fn bar_row(ui: &mut egui::Ui, s: &StepBreakdown, scale_ns: i64, bar_w: f32, selected: bool) -> BarEvents {
    let mut ev = BarEvents::default();
    let dark = ui.visuals().dark_mode;
    // the row itself: a click beside the parts shows the step, as its name does
    let (row, row_resp) = ui.allocate_exact_size(egui::vec2(NAME_W + bar_w, BAR_H), egui::Sense::click());
    ev.hovered = row_resp.hovered() || ui.rect_contains_pointer(row);
    let row_label = format!("{} bar", s.step);
    row_resp.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Button, true, &row_label));
    let row_clicked = row_resp.clicked();
    if selected {
        ui.painter().rect_filled(row, 2.0, ui.visuals().selection.bg_fill.gamma_multiply(0.5));
    }
    // the name: a link to the step on the timeline
    let name_rect = egui::Rect::from_min_size(row.min, egui::vec2(NAME_W - 6.0, BAR_H));
    let name = format!("{} · {}", s.step, fmt_ns(s.dur_ns));
    let name_resp =
        ui.interact(name_rect, ui.scope_id().with(("step_name", &s.step, s.start_ns)), egui::Sense::click());
    // a step with notes (no shapes, no GPU work…) reads amber; its tooltip says why
    let color = match (name_resp.hovered(), s.notes.is_empty(), ui.visuals().dark_mode) {
        (true, _, _) => ui.visuals().strong_text_color(),
        (false, false, true) => egui::Color32::from_rgb(230, 180, 60),
        (false, false, false) => egui::Color32::from_rgb(160, 100, 0),
        (false, true, _) => ui.visuals().text_color(),
    };
    let font = egui::FontId::proportional(12.5);
    let galley = ui.painter().layout_no_wrap(crate::timeline::truncate(&name, 30), font, color);
    ui.painter().galley(name_rect.left_center() - egui::vec2(0.0, galley.size().y / 2.0), galley, color);
    name_resp.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Link, true, &name));
    let name_resp = name_resp.on_hover_text(step_tooltip(s));
    ev.name_clicked = name_resp.clicked() || row_clicked;
    // the parts, left to right
    let scale = bar_w as f64 / scale_ns.max(1) as f64;
    let mut x = row.min.x + NAME_W;
    let (y0, y1) = (row.min.y + 2.0, row.max.y - 2.0);
    for (i, ns) in s.parts.values().into_iter().enumerate() {
        if ns <= 0 {
            continue;
        }
        let w = (ns as f64 * scale) as f32;
        let r = egui::Rect::from_min_max(egui::pos2(x, y0), egui::pos2(x + w, y1));
        x += w;
        let fill = part_color(i, dark);
        ui.painter().rect_filled(r, 0.0, fill);
        if w < 1.0 {
            continue; // too thin to aim at: its share is in the legend
        }
        let (_, label) = PART_NAMES[i];
        // its share written on it where it fits
        if w > 44.0 {
            let text = share(ns, s.dur_ns);
            let f = egui::FontId::proportional(11.0);
            ui.painter().text(r.center(), egui::Align2::CENTER_CENTER, text, f, text_on(fill));
        }
        let resp = ui.interact(r, ui.scope_id().with(("step_part", &s.step, s.start_ns, i)), egui::Sense::click());
        if resp.hovered() {
            ui.painter().rect_stroke(
                r,
                0.0,
                egui::Stroke::new(1.5, ui.visuals().strong_text_color()),
                egui::StrokeKind::Inside,
            );
        }
        let a11y = format!("{}: {label} {}", s.step, fmt_ns(ns));
        resp.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Link, true, &a11y));
        if resp.on_hover_text(part_tooltip(s, i)).clicked() {
            ev.part_clicked = Some(i);
        }
    }
    ev
}

#[cfg(test)]
mod tests {
    use super::*;
    use strobe_analysis::attribution::{Details, Evidence, Parts};

    #[test]
    fn a_part_tooltip_lists_what_it_is_made_of() {
        let parts = Parts { model_at_peak_ns: 30_000_000, model_ops_inefficiency_ns: 60_000_000, ..Default::default() };
        let details = Details {
            mfu: Some(1.0 / 3.0),
            inefficiency_by_class: vec![Evidence { name: "gemm".into(), ns: 60_000_000, ..Default::default() }],
            ..Default::default()
        };
        let s =
            StepBreakdown { step: "ProfilerStep#3".into(), dur_ns: 90_000_000, parts, details, ..Default::default() };
        let t = part_tooltip(&s, 1);
        assert!(t.starts_with("ProfilerStep#3 · model-op inefficiency\n"), "{t}");
        assert!(t.contains("66.7 % of the step"), "{t}");
        assert!(t.contains("GEMM"), "{t}");
        assert!(part_tooltip(&s, 0).contains("(MFU 33.3 %)"));
    }
}
