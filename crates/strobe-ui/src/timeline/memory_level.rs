//! The GPU memory water level row: allocated and reserved bytes over time on one scale from
//! zero (so the gap between the lines is what the caching allocator holds but no tensor
//! uses), the allocated peak marked; clicking the peak (or its label) brings that moment
//! into view.

use super::counters::{column_line, counter_columns};
use super::frame::{Clip, Link};
use super::rows::RowCtx;
use crate::commands::Command;
use egui::{pos2, vec2, Align2, Color32, FontId, Rect, Shape};
use strobe_model::gpu_memory;

pub const RESERVED: Color32 = Color32::from_rgb(230, 160, 80);
const PEAK: Color32 = Color32::from_rgb(255, 90, 90);

/// Taller than a counter: it carries two series and the peak.
pub const HEIGHT: f32 = 48.0;
/// The row's gutter label while the overview is measured.
pub const PENDING_LABEL: &str = "GPU memory";

/// A counter value (bytes, as f64) in the memory pane's units.
fn bytes(b: f64) -> String {
    strobe_analysis::memory::bytes(b.max(0.0).round() as u64)
}

/// Draws GPU `device`'s water level, then the line under it.
pub fn draw(rc: &mut RowCtx, device: i64) {
    draw_level(rc, device);
    rc.separator();
}

/// The water level; the peak's label and dot become links whose click brings that moment
/// into view.
fn draw_level(rc: &mut RowCtx, device: i64) {
    let (cx, t, view, (y0, y1), ti) = (rc.cx, rc.trace, &rc.view, rc.y, rc.ti);
    let fd = &mut *rc.fd;
    let Some(peak) = t.memory_peaks().iter().find(|m| m.device == device) else { return };
    let (body, plot) = (cx.body, cx.plot);
    let series: Vec<(&str, Color32, &[i64], &[f64])> = [gpu_memory::RESERVED, gpu_memory::ALLOCATED]
        .into_iter()
        .flat_map(|want| {
            t.store
                .counters
                .iter()
                .filter(move |c| c.device == Some(device) && c.name == gpu_memory::NAME && c.series == want)
                .map(move |c| {
                    let (ts, vals) = t.store.counter_points(c);
                    (want, if want == gpu_memory::ALLOCATED { cx.pal.line } else { RESERVED }, ts, vals)
                })
        })
        .collect();
    let top = peak.peak_reserved_bytes.max(peak.peak_allocated_bytes).unwrap_or(1).max(1) as f64;
    let (a, b) = (y0 + 14.0, y1 - 3.0);
    let yv = |v: f64| b - (v / top).clamp(0.0, 1.0) as f32 * (b - a);
    for (_, color, ts, vals) in &series {
        let cols = counter_columns(ts, vals, view, plot);
        fd.shape(Clip::Plot, column_line(&cols, plot, yv, *color));
    }
    fd.text(
        Clip::Plot,
        pos2(plot.max.x - 4.0, y0 + 1.0),
        Align2::RIGHT_TOP,
        bytes(top),
        FontId::monospace(11.0),
        Color32::GRAY,
    );

    // labels: what the lines are, and the peak as a link
    let text = cx.pal.text;
    let lx = body.min.x + 28.0;
    fd.text(Clip::Pane, pos2(lx, y0 + 8.0), Align2::LEFT_CENTER, "GPU memory", FontId::monospace(11.0), text);
    fd.text(Clip::Pane, pos2(lx, y0 + 20.0), Align2::LEFT_CENTER, "allocated", FontId::monospace(11.0), cx.pal.line);
    fd.text(
        Clip::Pane,
        pos2(body.min.x + 90.0, y0 + 20.0),
        Align2::LEFT_CENTER,
        "reserved",
        FontId::monospace(11.0),
        RESERVED,
    );
    if let Some(p) = peak.peak_allocated_bytes.or(peak.peak_reserved_bytes) {
        // the moment of the peak, on the shared axis, in a window about as wide as the view
        let (w0, w1) = view.window(plot.width());
        let w = (w1 - w0).clamp(20_000, 2_000_000);
        let at = t.to_shared(peak.at_ns);
        let command = Command::ZoomTo { t0: at - w / 2, t1: at + w / 2 };
        let label = format!("peak {} ▸", strobe_analysis::memory::bytes(p));
        let lr = Rect::from_min_size(pos2(lx, y0 + 26.0), vec2(cx.plot.min.x - cx.body.min.x - 34.0, 13.0));
        fd.text(Clip::Pane, lr.left_center(), Align2::LEFT_CENTER, label.clone(), FontId::monospace(11.0), PEAK);
        fd.links.push(Link {
            id: ("memory_peak_label", ti, device),
            rect: lr,
            label: Some(label),
            tip: "show the moment of the peak".into(),
            command: command.clone(),
        });
        let x = view.x_of(peak.at_ns, plot.min.x);
        if x >= plot.min.x && x <= plot.max.x {
            let c = pos2(x, yv(p as f64));
            fd.shape(Clip::Plot, Shape::circle_filled(c, 3.5, PEAK));
            let tip = format!(
                "peak allocated {}, reserved then {} — click to zoom to this moment",
                strobe_analysis::memory::bytes(p),
                value_at(&series, gpu_memory::RESERVED, peak.at_ns).map_or("–".into(), bytes)
            );
            let rect = Rect::from_center_size(c, vec2(12.0, 12.0));
            fd.links.push(Link { id: ("memory_peak_dot", ti, device), rect, label: None, tip, command });
        }
    }
    // hover: both values at the pointer
    if let Some(p) = cx.pointer.filter(|p| plot.contains(*p) && p.y >= y0 && p.y < y1) {
        let at = view.t_of(p.x, plot.min.x);
        let tip: Vec<String> = [(gpu_memory::ALLOCATED, "allocated"), (gpu_memory::RESERVED, "reserved")]
            .iter()
            .filter_map(|(s, n)| value_at(&series, s, at).map(|v| format!("{n} {}", bytes(v))))
            .collect();
        if !tip.is_empty() {
            fd.text(
                Clip::Plot,
                pos2(p.x + 8.0, y0 + 1.0),
                Align2::LEFT_TOP,
                tip.join(" · "),
                FontId::monospace(11.0),
                text,
            );
        }
    }
}

/// The series' value at `t`: the last sample at or before it (the level is a step function).
fn value_at(series: &[(&str, Color32, &[i64], &[f64])], which: &str, t: i64) -> Option<f64> {
    series
        .iter()
        .filter(|s| s.0 == which)
        .filter_map(|(_, _, ts, vals)| ts.partition_point(|&x| x <= t).checked_sub(1).map(|i| vals[i]))
        .reduce(f64::max)
}
