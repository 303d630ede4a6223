//! The selected span's flows (launch → kernel, and other flow events) as arrows between the
//! spans' starts, on lanes that are laid out; and a pipeline's matched P2P send/receive
//! pairs as arrows between the ranks (`p2p`).

use super::frame::{Clip, FrameDraw};
use super::layout::Layout;
use super::{View, ROW_H};
use crate::commands::Selection;
use crate::workspace::Workspace;
use egui::{pos2, vec2, Color32, Pos2, Rect, Shape, Stroke};

/// At most this many arrows (a span with thousands of flows would hide everything).
const MAX_ARROWS: usize = 64;
/// A CUDA graph launch fans out to every kernel of its replay: up to this many, thinner.
const MAX_GRAPH_ARROWS: usize = 2048;

pub fn draw(
    fd: &mut FrameDraw,
    ws: &Workspace,
    sel: &Selection,
    layout: &Layout,
    shared: &View,
    (plot, top): (Rect, f32),
    pal: &super::frame::Palette,
) {
    let Some(r) = sel.span else { return };
    let Some(t) = ws.trace(r.trace) else { return };
    let (st, tv) = (&*t.store, shared.for_trace(t));
    let pos = |span: u32| -> Option<Pos2> {
        let m = st.span_meta(span);
        let y = layout.lane_y.get(&(r.trace, m.lane))?;
        Some(pos2(tv.x_of(st.span_start(span), plot.min.x), top + y + m.depth as f32 * ROW_H + ROW_H / 2.0))
    };
    let mut flows: Vec<(u32, u32)> = st.flows_to(r.span).map(|f| (f.from, f.to)).collect();
    flows.extend(st.flows_from(r.span).map(|f| (f.from, f.to)));
    let graph = strobe_analysis::cuda_graphs::is_graph_launch(st.span_name(r.span)) && flows.len() > MAX_ARROWS;
    let (cap, width) = if graph { (MAX_GRAPH_ARROWS, 1.0) } else { (MAX_ARROWS, 1.6) };
    for (a, b) in flows.into_iter().take(cap) {
        let (Some(p), Some(q)) = (pos(a), pos(b)) else { continue };
        arrow(fd, p, q, width, pal.flow);
    }
}

/// An arrow from `p` to `q`: a dot at its tail, a head where it is long enough to carry one.
fn arrow(fd: &mut FrameDraw, p: Pos2, q: Pos2, width: f32, c: Color32) {
    fd.shape(Clip::Plot, Shape::line_segment([p, q], Stroke::new(width, c)));
    fd.shape(Clip::Plot, Shape::circle_filled(p, 1.0 + width, c));
    let len = (q - p).length();
    if len < 12.0 {
        return;
    }
    let dir = (q - p) / len;
    let n = vec2(-dir.y, dir.x);
    let (l, w) = (5.0 + 2.5 * width, 2.5 + 1.25 * width);
    fd.shape(Clip::Plot, Shape::convex_polygon(vec![q, q - dir * l + n * w, q - dir * l - n * w], c, Stroke::NONE));
}

/// At most this many P2P arrows a frame (zoomed out over many steps they would be a wash).
const MAX_P2P_ARROWS: usize = 400;

/// A pipeline's matched send/receive pairs as arrows from the send's post to the receive's
/// completion, each end on the transfer's own lane where it is laid out, else on its stage's
/// pipeline strip. Faint, and bright for the pairs of the selected span.
pub fn p2p(
    fd: &mut FrameDraw,
    ws: &Workspace,
    sel: &Selection,
    layout: &Layout,
    shared: &View,
    (plot, top): (Rect, f32),
    pal: &super::frame::Palette,
) {
    let Some(pv) = &ws.pipeline else { return };
    let p = &pv.pipeline;
    // where a transfer of rank-entry `k` is drawn, on the shared axis's screen
    let end = |k: usize, op: &strobe_analysis::pipeline::p2p::P2pOp, t_local: i64| -> Option<Pos2> {
        let id = *pv.traces.get(k)?;
        let t = ws.trace(id)?;
        let x = shared.for_trace(t).x_of(t_local, plot.min.x);
        let y = match layout.lane_y.get(&(id, op.lane)) {
            Some(y) => y + t.store.span_meta(op.span).depth as f32 * ROW_H + ROW_H / 2.0,
            None => layout.pipeline_y.get(&id)? + super::pipeline_strip::HEIGHT / 2.0,
        };
        Some(pos2(x, top + y))
    };
    let faint = pal.flow_faint;
    let mut drawn = 0;
    for pair in &p.pairs {
        let (Some(a), Some(b)) = (pv.index_of_rank(pair.from_rank), pv.index_of_rank(pair.to_rank)) else { continue };
        let (Some(s), Some(r)) = (p.ranks[a].transfers.get(pair.send), p.ranks[b].transfers.get(pair.recv)) else {
            continue;
        };
        let (Some(ps), Some(pr)) = (end(a, s, s.flight_start_ns), end(b, r, r.flight_end_ns)) else { continue };
        // both ends off the same side of the plot: nothing of it shows
        if (ps.x < plot.min.x && pr.x < plot.min.x) || (ps.x > plot.max.x && pr.x > plot.max.x) {
            continue;
        }
        let selected = sel.span.is_some_and(|x| {
            (x.trace == pv.traces[a] && x.span == s.span) || (x.trace == pv.traces[b] && x.span == r.span)
        });
        if selected {
            arrow(fd, ps, pr, 1.8, pal.flow);
        } else {
            arrow(fd, ps, pr, 1.0, faint);
        }
        drawn += 1;
        if drawn >= MAX_P2P_ARROWS {
            break;
        }
    }
}
