//! The steps' critical paths on the timeline: each span on a path outlined in one colour, and
//! a thin line from each to the next so the path reads as a chain across lanes (View ▸
//! Critical path, or C); `>` / `<` walk the path span by span (`step_along`).

use super::frame::{Clip, FrameDraw};
use super::layout::Layout;
use super::{View, ROW_H};
use crate::commands::Selection;
use crate::workspace::{SpanRef, Workspace};
use egui::{pos2, Color32, Rect, Shape, Stroke};

/// Past this many path spans outlined in a trace, no further step's path is drawn in the frame
/// (zoomed out over many steps the outline of each would be a wash).
const MAX_OUTLINED: usize = 20_000;

pub fn draw(fd: &mut FrameDraw, ws: &Workspace, layout: &Layout, shared: &View, (plot, top): (Rect, f32), c: Color32) {
    let (w0, w1) = shared.window(plot.width());
    let link = Stroke::new(1.0, c.gamma_multiply(0.7));
    for t in &ws.traces {
        let Some(figs) = t.step_figures() else { continue };
        let (st, tv) = (&*t.store, shared.for_trace(t));
        let (a, b) = (t.to_local(w0), t.to_local(w1));
        let n = st.span_count() as u32;
        let mut drawn = 0;
        // step by step: a path links only the spans of its own step
        for p in figs.steps.iter().filter(|s| s.start_ns < b && s.start_ns + s.dur_ns > a) {
            let Some(p) = &p.critical_path else { continue };
            let mut prev: Option<egui::Pos2> = None;
            for &s in p.spans.iter().filter(|&&s| s < n) {
                let m = st.span_meta(s);
                let Some(y) = layout.lane_y.get(&(t.id, m.lane)) else {
                    // its lane is folded or hidden: the chain resumes at the next one shown
                    continue;
                };
                let (s0, s1) = (st.span_start(s), st.span_end(s));
                let y0 = top + y + m.depth as f32 * ROW_H;
                let (x0, x1) = (tv.x_of(s0, plot.min.x), tv.x_of(s1, plot.min.x));
                let mid = y0 + ROW_H / 2.0;
                if let Some(p) = prev {
                    fd.shape(Clip::Plot, Shape::line_segment([p, pos2(x0, mid)], link));
                }
                prev = Some(pos2(x1, mid));
                if s1 < a || s0 > b {
                    continue;
                }
                // a span narrower than the stroke still shows as a mark
                let r = Rect::from_min_max(pos2(x0, y0), pos2(x1.max(x0 + 3.0), y0 + ROW_H - 1.0));
                fd.shape(Clip::Plot, Shape::rect_stroke(r, 1.0, Stroke::new(2.0, c), egui::StrokeKind::Outside));
                drawn += 1;
            }
            if drawn >= MAX_OUTLINED {
                break;
            }
        }
    }
}

/// The next (`forward`) or previous span on a critical path: from the selected span when it
/// is on one (its neighbour on the path), else from the selected span's start or, with
/// nothing selected, from the window's left edge (`view_t0`, shared axis). The trace is the
/// selected span's, else the selected step's, else the first with a path.
pub fn step_along(ws: &Workspace, sel: &Selection, view_t0: i64, forward: bool) -> Option<SpanRef> {
    let trace = sel
        .span
        .map(|r| r.trace)
        .or(sel.step.map(|s| s.0))
        .and_then(|id| ws.trace(id))
        .or_else(|| ws.traces.iter().find(|t| t.step_figures().is_some_and(|f| !f.path_spans.is_empty())))?;
    let spans = &trace.step_figures()?.path_spans;
    let st = &trace.store;
    let from = sel.span.filter(|r| r.trace == trace.id);
    let at = match from.and_then(|r| spans.iter().position(|&s| s == r.span)) {
        Some(i) if forward => i + 1,
        Some(i) => i.checked_sub(1)?,
        None => {
            let t = from.map_or(trace.to_local(view_t0), |r| st.span_start(r.span));
            if forward {
                // at or after the window's edge, after a selected span
                let strict = from.is_some();
                spans.partition_point(|&s| if strict { st.span_start(s) <= t } else { st.span_start(s) < t })
            } else {
                spans.partition_point(|&s| st.span_start(s) < t).checked_sub(1)?
            }
        }
    };
    spans.get(at).map(|&span| SpanRef { trace: trace.id, span })
}
