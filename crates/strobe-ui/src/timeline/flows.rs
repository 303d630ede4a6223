//! The selected span's flows (launch → kernel, and other flow events) as arrows between the
//! spans' starts, on lanes that are laid out.

use super::frame::{Clip, FrameDraw};
use super::layout::Layout;
use super::{View, ROW_H};
use crate::commands::Selection;
use crate::workspace::Workspace;
use egui::{pos2, vec2, Color32, Pos2, Rect, Shape, Stroke};

/// At most this many arrows (a span with thousands of flows would hide everything).
const MAX_ARROWS: usize = 64;

pub fn draw(
    fd: &mut FrameDraw,
    ws: &Workspace,
    sel: &Selection,
    layout: &Layout,
    shared: &View,
    (plot, top): (Rect, f32),
) {
    let Some(r) = sel.span else { return };
    let Some(t) = ws.trace(r.trace) else { return };
    let (st, tv) = (&*t.store, shared.for_trace(t));
    let pos = |span: u32| -> Option<Pos2> {
        let m = st.span_meta(span);
        let y = layout.lane_y.get(&(r.trace, m.lane))?;
        Some(pos2(tv.x_of(st.span_start(span), plot.min.x), top + y + m.depth as f32 * ROW_H + ROW_H / 2.0))
    };
    let stroke = Stroke::new(1.6, Color32::from_rgb(255, 255, 255));
    let mut flows: Vec<(u32, u32)> = st.flows_to(r.span).map(|f| (f.from, f.to)).collect();
    flows.extend(st.flows_from(r.span).map(|f| (f.from, f.to)));
    for (a, b) in flows.into_iter().take(MAX_ARROWS) {
        let (Some(p), Some(q)) = (pos(a), pos(b)) else { continue };
        fd.shape(Clip::Plot, Shape::line_segment([p, q], stroke));
        fd.shape(Clip::Plot, Shape::circle_filled(p, 3.0, Color32::WHITE));
        let dir = (q - p).normalized();
        let n = vec2(-dir.y, dir.x);
        fd.shape(
            Clip::Plot,
            Shape::convex_polygon(
                vec![q, q - dir * 9.0 + n * 4.5, q - dir * 9.0 - n * 4.5],
                Color32::WHITE,
                Stroke::NONE,
            ),
        );
    }
}
