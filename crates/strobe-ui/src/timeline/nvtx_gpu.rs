//! The "NVTX (GPU)" row of a device: each CPU range (NVTX, record_function) drawn where the
//! GPU work it launched ran (`strobe_analysis::nvtx_gpu`), nested ranges below their parents.
//! Hover for its GPU time; a click selects the CPU range.

use super::frame::Clip;
use super::hover::Hover;
use super::lanes::truncate;
use super::rows::RowCtx;
use super::ROW_H;
use crate::workspace::{Trace, Workspace};
use egui::{pos2, Align2, Color32, FontId, Rect};
use strobe_analysis::report::fmt_ns;

/// The row's gutter label while the overview is measured.
pub const PENDING_LABEL: &str = "NVTX (GPU)";

/// Rows drawn at most (deeper nesting is folded into the last).
pub const MAX_ROWS: u32 = 4;

/// How tall the row of `device` is.
pub fn height(t: &Trace, device: i64) -> Option<f32> {
    let (_, r) = t.nvtx_gpu_index()?.depth.iter().find(|d| d.0 == device)?;
    Some(height_of(r + 1))
}

/// How tall the row is with `rows` rows of ranges.
pub fn height_of(rows: u32) -> f32 {
    rows.clamp(1, MAX_ROWS) as f32 * ROW_H + 2.0
}

/// The row of GPU `device`, then the line under it.
pub fn draw(rc: &mut RowCtx, device: i64) {
    draw_ranges(rc, device);
    rc.separator();
}

fn draw_ranges(rc: &mut RowCtx, device: i64) {
    let (cx, t, tv, y0, ti) = (rc.cx, rc.trace, &rc.view, rc.y.0, rc.ti);
    let (body, plot) = (cx.body, cx.plot);
    let lp = &mut *rc.lp;
    rc.fd.text(
        Clip::Pane,
        pos2(body.min.x + 28.0, y0 + ROW_H / 2.0),
        Align2::LEFT_CENTER,
        "NVTX (GPU)",
        FontId::monospace(11.0),
        cx.pal.text,
    );
    let Some(index) = t.nvtx_gpu_index() else { return };
    let (lo, ranges, max_end) = index.of_device(device);
    let (w0, w1) = tv.window(plot.width());
    // sorted by start: from the first range whose device has reached the window by its end
    let first = max_end.partition_point(|&e| e < w0);
    // per drawn row, the right edge of the last box: a range that ends inside it lies under
    // pixels already painted (at a whole-trace zoom, most of ~10⁵ ranges)
    let mut painted = [f32::MIN; MAX_ROWS as usize];
    for (k, p) in ranges.iter().enumerate().skip(first) {
        if p.start_ns > w1 {
            break;
        }
        if p.end_ns < w0 {
            continue;
        }
        let (xa, xb) = (
            tv.x_of(p.start_ns, plot.min.x).max(plot.min.x - 1.0),
            tv.x_of(p.end_ns, plot.min.x).min(plot.max.x + 1.0),
        );
        let row = p.depth.min(MAX_ROWS - 1) as usize;
        let xb = xb.max(xa + 1.0);
        if xb <= painted[row] {
            continue;
        }
        painted[row] = xb;
        let y = y0 + row as f32 * ROW_H + 1.0;
        let r = Rect::from_min_max(pos2(xa, y), pos2(xb, y + ROW_H - 2.0));
        let c = t.color(t.store.span_meta(p.span).name, strobe_model::SpanKind::Nvtx);
        lp.mesh.add_colored_rect(r, c);
        if r.width() > 30.0 {
            let n = ((r.width() - 4.0) / cx.char_w) as usize;
            lp.labels.push((pos2(r.min.x.max(plot.min.x) + 2.0, r.center().y), truncate(&p.name, n), Color32::BLACK));
        }
        if cx.pointer.is_some_and(|q| r.contains(q)) {
            lp.hover = Some(Hover::Projected { ti, index: lo + k });
        }
    }
}

/// The tooltip of a projected range: its GPU time and how many GPU spans make it.
pub fn projected_text(ws: &Workspace, ti: usize, index: usize) -> String {
    let Some(p) = ws.traces[ti].nvtx_gpu().get(index) else { return String::new() };
    format!(
        "{} on GPU {}\nGPU time {} over {} ({} GPU spans)\nclick to select the CPU range",
        p.name,
        p.device,
        fmt_ns(p.gpu_ns),
        fmt_ns(p.end_ns - p.start_ns),
        p.gpu_spans
    )
}
