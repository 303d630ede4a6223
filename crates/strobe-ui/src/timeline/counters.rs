//! Counter rows: a store counter drawn as a step line (min..max per pixel column) scaled to
//! what is visible. The series derived from the trace (`series`) are drawn the same way, and
//! the GPU memory water level (`memory_level`) too, on a fixed scale.

use super::frame::{Clip, FrameDraw};
use super::lanes::{truncate, LaneCtx};
use super::rows::RowCtx;
use super::View;

pub const HEIGHT: f32 = 36.0;

/// The row of the store's counter `series` (an index into the store's counters).
pub fn draw(rc: &mut RowCtx, series: usize) {
    let t = rc.trace;
    let c = &t.store.counters[series];
    let name = format!("{} {}", c.name, c.series);
    counter_row(rc.fd, rc.cx, &name, t.store.counter_points(c), &rc.view, rc.y);
}
use egui::{pos2, Align2, Color32, FontId, Rect, Shape, Stroke};

/// A step-function series' (x, min, max) per pixel column of the visible window.
pub fn counter_columns(ts: &[i64], vals: &[f64], view: &View, plot: Rect) -> Vec<(f32, f64, f64)> {
    let mut pts: Vec<(f32, f64, f64)> = Vec::new();
    if ts.is_empty() {
        return pts;
    }
    let (w0, w1) = view.window(plot.width());
    let a = ts.partition_point(|&x| x < w0).saturating_sub(1);
    let b = (ts.partition_point(|&x| x < w1) + 1).min(ts.len());
    let mut i = a;
    while i < b {
        let x = view.x_of(ts[i], plot.min.x).floor();
        let boundary = view.t_of(x + 1.0, plot.min.x);
        let j = (i + ts[i..b].partition_point(|&q| q < boundary)).max(i + 1);
        let (mut mn, mut mx) = (f64::MAX, f64::MIN);
        // cap work per column: sample at most 64 points of a dense column
        let step = ((j - i) / 64).max(1);
        let mut k = i;
        while k < j {
            mn = mn.min(vals[k]);
            mx = mx.max(vals[k]);
            k += step;
        }
        mn = mn.min(vals[j - 1]);
        mx = mx.max(vals[j - 1]);
        pts.push((x, mn, mx));
        i = j;
    }
    pts
}

/// The columns as one line through each column's min and max; `yv` maps a value to screen y.
pub fn column_line(cols: &[(f32, f64, f64)], plot: Rect, yv: impl Fn(f64) -> f32, color: Color32) -> Shape {
    let mut line = Vec::with_capacity(cols.len() * 2);
    for (x, mn, mx) in cols {
        let x = x.clamp(plot.min.x, plot.max.x);
        line.push(pos2(x, yv(*mn)));
        if mx != mn {
            line.push(pos2(x, yv(*mx)));
        }
    }
    Shape::line(line, Stroke::new(1.2, color))
}

/// A counter row in `[y0, y1)`: its name in the label column, the line in the plot with the
/// top of its scale in the unit the counter's name gives (bytes, a rate, a count).
pub fn counter_row(
    fd: &mut FrameDraw,
    cx: &LaneCtx,
    name: &str,
    (ts, vals): (&[i64], &[f64]),
    tv: &View,
    (y0, y1): (f32, f32),
) {
    let (body, plot) = (cx.body, cx.plot);
    fd.text(
        Clip::Pane,
        pos2(body.min.x + 28.0, y0 + 10.0),
        Align2::LEFT_CENTER,
        truncate(name, ((plot.min.x - body.min.x - 28.0) / cx.char_w) as usize),
        FontId::monospace(11.0),
        cx.pal.text,
    );
    let pts = counter_columns(ts, vals, tv, plot);
    if pts.is_empty() {
        return;
    }
    let (y0, y1) = (y0 + 2.0, y1 - 2.0);
    let lo = pts.iter().map(|p| p.1).fold(f64::MAX, f64::min);
    let mut hi = pts.iter().map(|p| p.2).fold(f64::MIN, f64::max);
    if hi <= lo {
        hi = lo + 1.0;
    }
    let yv = |v: f64| y1 - ((v - lo) / (hi - lo)) as f32 * (y1 - y0);
    fd.shape(Clip::Plot, column_line(&pts, plot, yv, cx.pal.line));
    fd.text(
        Clip::Plot,
        pos2(plot.max.x - 4.0, y0),
        Align2::RIGHT_TOP,
        crate::units::CounterUnit::of(name).fmt(hi),
        FontId::monospace(11.0),
        Color32::GRAY,
    );
}
