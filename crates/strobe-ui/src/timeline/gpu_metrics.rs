//! A GPU's sampled metrics (Nsight Systems GPU metrics) as rows of its group: the usual ones
//! (SMs Active, SM Issue, Tensor Active, DRAM, PCIe, NVLink) first, the rest (clocks, warps
//! in flight, …) in a sub-group that starts folded, as Nsight Systems shows them. A
//! percentage is drawn filled on a fixed 0–100 % scale, so rows and moments compare at a
//! glance; another unit is drawn as a counter, scaled to what is visible.

use super::counters::{counter_columns, counter_row};
use super::frame::Clip;
use super::hover::Hover;
use super::lanes::truncate;
use super::rows::RowCtx;
use crate::workspace::Workspace;
use egui::{pos2, Align2, Color32, FontId, Mesh, Rect};
use strobe_model::gpu_metrics as names;
use strobe_store::Store;

pub const HEIGHT: f32 = 30.0;

/// The fill of a percentage row.
const FILL: Color32 = Color32::from_rgba_premultiplied(60, 140, 90, 200);

/// GPU `device`'s metric series (indices into the store's counters): the usual ones in
/// their order, and the rest by name.
pub fn series_of(s: &Store, device: i64) -> (Vec<usize>, Vec<usize>) {
    let mut all: Vec<usize> = s
        .counters
        .iter()
        .enumerate()
        .filter(|(_, c)| c.device == Some(device) && c.name == names::NAME)
        .map(|(i, _)| i)
        .collect();
    all.sort_by(|&a, &b| {
        let (a, b) = (&s.counters[a].series, &s.counters[b].series);
        (names::rank(a), a).cmp(&(names::rank(b), b))
    });
    all.into_iter().partition(|&i| names::is_usual(&s.counters[i].series))
}

/// The GPUs that have metric series.
pub fn devices(s: &Store) -> Vec<i64> {
    strobe_analysis::gpu_metrics::devices(s)
}

/// The row of metric `series` (an index into the store's counters), then the line under it.
pub fn draw(rc: &mut RowCtx, series: usize) {
    let t = rc.trace;
    let c = &t.store.counters[series];
    let (ts, vals) = t.store.counter_points(c);
    let plot = rc.cx.plot;
    // the sample whose period holds the pointer's time
    if let Some(p) = rc.cx.pointer.filter(|p| p.y >= rc.y.0 && p.y < rc.y.1 && plot.contains(*p)) {
        let at = rc.view.t_of(p.x, plot.min.x);
        let i = ts.partition_point(|&x| x <= at);
        if i > 0 {
            rc.lp.hover = Some(Hover::Metric { ti: rc.ti, series, sample: i - 1 });
        }
    }
    if names::unit(&c.series) != "%" {
        counter_row(rc.fd, rc.cx, &c.series, (ts, vals), &rc.view, rc.y);
        rc.separator();
        return;
    }
    let (cx, (y0, y1)) = (rc.cx, rc.y);
    let (body, plot) = (cx.body, cx.plot);
    let label = names::short_name(&c.series);
    rc.fd.text(
        Clip::Pane,
        pos2(body.min.x + 28.0, (y0 + y1) / 2.0),
        Align2::LEFT_CENTER,
        truncate(&format!("{label} %"), ((plot.min.x - body.min.x - 28.0) / cx.char_w) as usize),
        FontId::monospace(11.0),
        cx.pal.text,
    );
    let cols = counter_columns(ts, vals, &rc.view, plot);
    let (top, bottom) = (y0 + 3.0, y1 - 2.0);
    let yv = |v: f64| bottom - (v / 100.0).clamp(0.0, 1.0) as f32 * (bottom - top);
    // a column per pixel, filled from 0 to the column's highest sample: a short burst stays
    // visible when zoomed out, as Nsight Systems draws its metrics
    let mut mesh = Mesh::default();
    for w in cols.windows(2) {
        let (x0, x1) = (w[0].0.max(plot.min.x), w[1].0.min(plot.max.x));
        if x1 > x0 {
            mesh.add_colored_rect(Rect::from_min_max(pos2(x0, yv(w[0].2)), pos2(x1, bottom)), FILL);
        }
    }
    if let Some(&(x, _, mx)) = cols.last() {
        // the last column: a pixel wide (there is no next sample to say how long it holds)
        let (x0, x1) = (x.max(plot.min.x), (x + 1.0).min(plot.max.x));
        if x1 > x0 {
            mesh.add_colored_rect(Rect::from_min_max(pos2(x0, yv(mx)), pos2(x1, bottom)), FILL);
        }
    }
    rc.fd.mesh(Clip::Plot, mesh);
    rc.fd.text(
        Clip::Plot,
        pos2(plot.max.x - 4.0, y0 + 1.0),
        Align2::RIGHT_TOP,
        "100%",
        FontId::monospace(10.0),
        Color32::GRAY,
    );
    rc.separator();
}

/// The tooltip of a metric sample: its value, when it was taken, and how long it holds.
pub fn sample_text(ws: &Workspace, ti: usize, series: usize, sample: usize) -> String {
    let Some(t) = ws.traces.get(ti) else { return String::new() };
    let Some(c) = t.store.counters.get(series) else { return String::new() };
    let (ts, vals) = t.store.counter_points(c);
    let (Some(&at), Some(&v)) = (ts.get(sample), vals.get(sample)) else { return String::new() };
    let unit = match names::unit(&c.series) {
        "%" => "% of peak".to_string(),
        u => u.to_string(),
    };
    let d = c.device.map(|d| format!("GPU {d} · ")).unwrap_or_default();
    let mut s = format!("{d}{}\n{v} {unit}\nsampled at {}", names::short_name(&c.series), fmt_ns(at));
    if let Some(&next) = ts.get(sample + 1) {
        s.push_str(&format!(" for {}", fmt_ns(next - at)));
    }
    s
}

fn fmt_ns(ns: i64) -> String {
    strobe_analysis::report::fmt_ns(ns)
}
