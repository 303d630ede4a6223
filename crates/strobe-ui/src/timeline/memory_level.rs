//! The GPU memory water level row: allocated and reserved bytes over time on one scale from
//! zero (so the gap between the lines is what the caching allocator holds but no tensor
//! uses), the allocated peak marked; clicking the peak (or its label) brings that moment
//! into view.

use super::{counter_columns, View, LABEL_W};
use crate::commands::Command;
use crate::workspace::Trace;
use egui::{pos2, vec2, Align2, Color32, FontId, Painter, Rect, Sense, Shape, Stroke, Ui};
use strobe_model::gpu_memory;

pub const ALLOCATED: Color32 = Color32::from_rgb(120, 200, 255);
pub const RESERVED: Color32 = Color32::from_rgb(230, 160, 80);
const PEAK: Color32 = Color32::from_rgb(255, 90, 90);

fn gib(b: f64) -> String {
    format!("{:.2} GiB", b / (1u64 << 30) as f64)
}

/// Draws one device's water level in `[y0, y1)`; returns the command a click on the peak asks
/// for. `view` is the trace's own clock (alignment applied); `offset_ns` maps back to the
/// shared axis for the command.
#[allow(clippy::too_many_arguments)]
pub fn draw(
    ui: &Ui,
    painter: &Painter,
    plot_painter: &Painter,
    body: Rect,
    plot: Rect,
    (y0, y1): (f32, f32),
    (t, trace): (&Trace, usize),
    device: i64,
    view: &View,
    pointer: Option<egui::Pos2>,
) -> Option<Command> {
    let peak = t.derived.memory.iter().find(|m| m.device == device)?;
    let series: Vec<(&str, Color32, &[i64], &[f64])> = [gpu_memory::RESERVED, gpu_memory::ALLOCATED]
        .into_iter()
        .flat_map(|want| {
            t.store
                .counters
                .iter()
                .filter(move |c| c.device == Some(device) && c.name == gpu_memory::NAME && c.series == want)
                .map(move |c| {
                    let (ts, vals) = t.store.counter_points(c);
                    (want, if want == gpu_memory::ALLOCATED { ALLOCATED } else { RESERVED }, ts, vals)
                })
        })
        .collect();
    let top = peak.peak_reserved_bytes.max(peak.peak_allocated_bytes).unwrap_or(1).max(1) as f64;
    let (a, b) = (y0 + 14.0, y1 - 3.0);
    let yv = |v: f64| b - (v / top).clamp(0.0, 1.0) as f32 * (b - a);
    for (_, color, ts, vals) in &series {
        let cols = counter_columns(ts, vals, view, plot);
        let mut line = Vec::with_capacity(cols.len() * 2);
        for (x, mn, mx) in &cols {
            let x = x.clamp(plot.min.x, plot.max.x);
            line.push(pos2(x, yv(*mn)));
            if mx != mn {
                line.push(pos2(x, yv(*mx)));
            }
        }
        plot_painter.add(Shape::line(line, Stroke::new(1.2, *color)));
    }
    plot_painter.text(
        pos2(plot.max.x - 4.0, y0 + 1.0),
        Align2::RIGHT_TOP,
        gib(top),
        FontId::monospace(9.0),
        Color32::GRAY,
    );

    // labels: what the lines are, and the peak as a link
    let text = ui.visuals().text_color();
    painter.text(pos2(body.min.x + 28.0, y0 + 8.0), Align2::LEFT_CENTER, "GPU memory", FontId::monospace(10.0), text);
    painter.text(
        pos2(body.min.x + 28.0, y0 + 20.0),
        Align2::LEFT_CENTER,
        "allocated",
        FontId::monospace(9.0),
        ALLOCATED,
    );
    painter.text(pos2(body.min.x + 90.0, y0 + 20.0), Align2::LEFT_CENTER, "reserved", FontId::monospace(9.0), RESERVED);
    let mut clicked = false;
    if let Some(p) = peak.peak_allocated_bytes.or(peak.peak_reserved_bytes) {
        let label = format!("peak {} ▸", gib(p as f64));
        let lr = Rect::from_min_size(pos2(body.min.x + 28.0, y0 + 26.0), vec2(LABEL_W - 34.0, 12.0));
        let r = ui.interact(lr, ui.scope_id().with(("memory_peak_label", trace, device)), Sense::click());
        r.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Link, true, &label));
        painter.text(lr.left_center(), Align2::LEFT_CENTER, &label, FontId::monospace(9.0), PEAK);
        clicked |= r.on_hover_text("show the moment of the peak").clicked();
        let x = view.x_of(peak.at_ns, plot.min.x);
        if x >= plot.min.x && x <= plot.max.x {
            let c = pos2(x, yv(p as f64));
            plot_painter.circle_filled(c, 3.5, PEAK);
            let mr = Rect::from_center_size(c, vec2(12.0, 12.0));
            let r = ui.interact(mr, ui.scope_id().with(("memory_peak_dot", trace, device)), Sense::click());
            clicked |= r
                .on_hover_text(format!(
                    "peak allocated {}, reserved then {} — click to zoom to this moment",
                    gib(p as f64),
                    value_at(&series, gpu_memory::RESERVED, peak.at_ns).map_or("–".into(), gib)
                ))
                .clicked();
        }
    }
    // hover: both values at the pointer
    if let Some(p) = pointer.filter(|p| plot.contains(*p) && p.y >= y0 && p.y < y1) {
        let at = view.t_of(p.x, plot.min.x);
        let tip: Vec<String> = [(gpu_memory::ALLOCATED, "allocated"), (gpu_memory::RESERVED, "reserved")]
            .iter()
            .filter_map(|(s, n)| value_at(&series, s, at).map(|v| format!("{n} {}", gib(v))))
            .collect();
        if !tip.is_empty() {
            plot_painter.text(
                pos2(p.x + 8.0, y0 + 1.0),
                Align2::LEFT_TOP,
                tip.join(" · "),
                FontId::monospace(9.0),
                text,
            );
        }
    }
    clicked.then(|| {
        let (w0, w1) = view.window(plot.width());
        let w = (w1 - w0).clamp(20_000, 2_000_000);
        let at = peak.at_ns + t.offset_ns;
        Command::ZoomTo { t0: at - w / 2, t1: at + w / 2 }
    })
}

/// The series' value at `t`: the last sample at or before it (the level is a step function).
fn value_at(series: &[(&str, Color32, &[i64], &[f64])], which: &str, t: i64) -> Option<f64> {
    series
        .iter()
        .filter(|s| s.0 == which)
        .filter_map(|(_, _, ts, vals)| ts.partition_point(|&x| x <= t).checked_sub(1).map(|i| vals[i]))
        .reduce(f64::max)
}
