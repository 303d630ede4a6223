//! The first phase of a frame: from the laid-out rows, the view and the pointer, everything
//! the frame draws (`FrameDraw`) — no painter, no fonts, no input. Off-screen rows cost
//! nothing; every visible lane's items become quads of one mesh plus a few labels.

use super::colors::{MARK, MEASURE};
use super::frame::{Areas, Clip, FrameDraw, FrameInput};
use super::lanes::{truncate, LaneCtx, LanePainter};
use super::layout::RowKind;
use super::{bands, counters, flows, memory_level, ruler, TimelineState, TimelineView, ROW_H};
use crate::commands::{Highlight, Selection};
use crate::workspace::Workspace;
use egui::{pos2, Align2, Color32, FontId, Rect, Shape, Stroke};

impl TimelineView {
    /// One frame of the laid-out rows (`lay_out` first) at `st`'s view and scroll.
    pub fn prepare(
        &self,
        st: &TimelineState,
        ws: &Workspace,
        sel: &Selection,
        hl: &Highlight,
        input: &FrameInput,
    ) -> FrameDraw {
        let a = Areas::of(input.full, st.label_w);
        let (body, plot, pal) = (a.body, a.plot, input.palette);
        let mut fd = FrameDraw { areas: Some(a), ..Default::default() };
        fd.rect_filled(Clip::Pane, body, pal.bg);
        // grid lines under everything
        let ticks = ruler::ticks(&st.view, plot);
        for (x, _, major) in &ticks {
            if *major {
                fd.vline(Clip::Pane, *x, body.y_range(), Stroke::new(1.0, pal.grid));
            }
        }
        let pointer = input.pointer.filter(|p| body.contains(*p));
        let cx = LaneCtx { body, plot, pointer, char_w: input.char_w, pal, hl, sel };
        let mut lp = LanePainter::default();
        let top = body.min.y - st.scroll_y;
        let pinned_bottom = body.min.y + self.layout.pinned_h;
        // device-wide idle tint behind the stream lanes
        if st.show_bands {
            bands::device_tint(&mut lp, &cx, ws, &self.layout.rows, &st.view, top);
        }
        let separator = Stroke::new(0.5, pal.faint);
        for r in &self.layout.rows {
            let y0 = body.min.y + self.layout.row_y(r, st.scroll_y);
            let y1 = y0 + r.h;
            // off screen, or scrolled under the pinned rows
            if y1 < body.min.y || y0 > body.max.y || (r.y >= self.layout.pinned_h && y0 < pinned_bottom) {
                continue;
            }
            let trace = match r.kind {
                RowKind::Header { .. } => None,
                RowKind::Lane { trace, .. }
                | RowKind::Bands { trace, .. }
                | RowKind::Counter { trace, .. }
                | RowKind::Series { trace, .. }
                | RowKind::MemoryLevel { trace, .. }
                | RowKind::RankSummary { trace }
                | RowKind::Steps { trace }
                | RowKind::NvtxGpu { trace, .. }
                | RowKind::Pipeline { trace } => Some(trace),
            };
            let t = trace.map(|ti| &ws.traces[ti]);
            let tv = t.map(|t| st.view.for_trace(t)).unwrap_or(st.view);
            if let Some(label) = pending_label(&r.kind).filter(|_| t.is_some_and(|t| !t.derived.overview_ready())) {
                pending_row(&mut fd, &cx, label, (y0, y1));
                continue;
            }
            match (&r.kind, t) {
                (RowKind::Header { label, level, collapsed, .. }, _) => {
                    header(&mut fd, &cx, (label.as_str(), *level, *collapsed), (y0, y1))
                }
                (RowKind::Lane { trace, lane, pinned }, Some(t)) => {
                    lp.stats.lanes_drawn += 1;
                    let lane_name = &t.store.lanes[*lane as usize].name;
                    let name = if *pinned { format!("{} · {lane_name}", t.label) } else { lane_name.clone() };
                    let lab = truncate(&name, ((a.label_w() - 28.0) / (input.char_w * 1.1)) as usize);
                    let at = pos2(body.min.x + 28.0, y0 + ROW_H / 2.0);
                    if *pinned {
                        let band = Rect::from_min_max(pos2(body.min.x, y0), pos2(plot.min.x, y1));
                        fd.rect_filled(Clip::Pane, band, pal.faint);
                    }
                    if self.flash.is_some_and(|(id, l, _)| id == t.id && l == *lane) {
                        let band = Rect::from_min_max(pos2(body.min.x, y0), pos2(body.max.x, y1));
                        fd.rect_filled(
                            Clip::Pane,
                            band,
                            Color32::from_rgba_unmultiplied(255, 220, 90, self.flash_alpha()),
                        );
                    }
                    fd.text(Clip::Pane, at, Align2::LEFT_CENTER, lab, FontId::monospace(11.0), pal.text);
                    fd.hline(Clip::Pane, body.x_range(), y1 - 0.5, separator);
                    lp.draw_lane(&cx, t, *trace, *lane, y0, &tv);
                }
                (RowKind::Bands { trace, device }, Some(t)) => {
                    bands::band_row(&mut fd, &mut lp, &cx, (t, *trace, *device), &tv, (y0, y1))
                }
                (RowKind::NvtxGpu { trace, device }, Some(t)) => {
                    super::nvtx_gpu::draw(&mut fd, &mut lp, &cx, (t, *trace, *device), &tv, y0);
                    fd.hline(Clip::Pane, body.x_range(), y1 - 0.5, separator);
                }
                (RowKind::Steps { trace }, Some(t)) => {
                    super::step_strip::draw(&mut fd, &mut lp, &cx, (t, *trace), &tv, (y0, y1));
                    fd.hline(Clip::Pane, body.x_range(), y1 - 0.5, separator);
                }
                (RowKind::Pipeline { trace }, Some(t)) => {
                    super::pipeline_strip::draw(&mut fd, &mut lp, &cx, (ws, t, *trace), &tv, (y0, y1));
                    fd.hline(Clip::Pane, body.x_range(), y1 - 0.5, separator);
                }
                (RowKind::RankSummary { .. }, Some(t)) => {
                    bands::rank_summary(&mut fd, &mut lp.mesh, &cx, t, &tv, (y0, y1))
                }
                (RowKind::MemoryLevel { trace, device }, Some(t)) => {
                    memory_level::draw(&mut fd, &cx, (t, *trace), *device, &tv, (y0, y1));
                    fd.hline(Clip::Pane, body.x_range(), y1 - 0.5, separator);
                }
                (RowKind::Counter { series, .. }, Some(t)) => {
                    let c = &t.store.counters[*series];
                    let name = format!("{} {}", c.name, c.series);
                    counters::counter_row(&mut fd, &cx, &name, t.store.counter_points(c), &tv, (y0, y1));
                }
                (RowKind::Series { series, .. }, Some(t)) => {
                    let d = &t.series()[*series];
                    counters::counter_row(&mut fd, &cx, &d.name, (d.ts.as_slice(), d.vals.as_slice()), &tv, (y0, y1));
                }
                (_, None) => {}
            }
        }
        let LanePainter { mesh, labels, outlines, mut stats, hover } = lp;
        stats.labels = labels.len();
        fd.mesh(Clip::Plot, mesh);
        for (r, c, w) in outlines {
            fd.shape(Clip::Plot, Shape::rect_stroke(r, 0.0, Stroke::new(w, c), egui::StrokeKind::Inside));
        }
        for (p, s, c) in labels {
            fd.text(Clip::Plot, p, Align2::LEFT_CENTER, s, FontId::monospace(11.0), c);
        }
        flows::p2p(&mut fd, ws, sel, &self.layout, &st.view, (plot, top));
        flows::draw(&mut fd, ws, sel, &self.layout, &st.view, (plot, top));
        self.overlays(st, &mut fd, sel, input, a);
        ruler::draw(&mut fd, &pal, a.ruler, plot, &st.view, &ticks);
        // label gutter separator
        fd.vline(Clip::Pane, plot.min.x, body.y_range(), Stroke::new(1.0, pal.separator));
        if ws.traces.is_empty() {
            fd.text(
                Clip::Pane,
                body.center(),
                Align2::CENTER_CENTER,
                "Open a trace: File > Open…, or drop files here",
                FontId::proportional(16.0),
                pal.weak,
            );
        }
        fd.hover = hover;
        fd.stats = stats;
        fd
    }

    /// Marks, the selected time range and the area being dragged, over the rows.
    fn overlays(&self, st: &TimelineState, fd: &mut FrameDraw, sel: &Selection, input: &FrameInput, a: Areas) {
        let (body, plot) = (a.body, a.plot);
        for (i, m) in st.marks.list.iter().enumerate() {
            let x = st.view.x_of(m.t, plot.min.x);
            if x >= plot.min.x && x <= plot.max.x {
                fd.vline(Clip::Pane, x, body.y_range(), Stroke::new(1.0, MARK));
                // staggered so neighbouring marks' labels do not sit on each other
                let at = pos2(x + 2.0, body.min.y + 2.0 + (i % 3) as f32 * 13.0);
                let label = st.marks.label(i, st.view.origin);
                fd.text(Clip::Pane, at, Align2::LEFT_TOP, label, FontId::proportional(11.0), MARK);
            }
        }
        if let Some(m) = self.measure {
            let (t0, t1) = (m.t0.min(m.t1), m.t0.max(m.t1));
            let (xa, xb) = (st.view.x_of(t0, plot.min.x), st.view.x_of(t1, plot.min.x));
            let y = body.min.y + 40.0;
            let stroke = Stroke::new(1.5, MEASURE);
            for x in [xa, xb] {
                fd.vline(Clip::Plot, x, body.y_range(), Stroke::new(1.0, MEASURE));
            }
            fd.shape(Clip::Plot, Shape::line_segment([pos2(xa, y), pos2(xb, y)], stroke));
            let label = strobe_analysis::report::fmt_ns(t1 - t0);
            let at = pos2((xa + xb) / 2.0, y - 3.0);
            fd.text(Clip::Plot, at, Align2::CENTER_BOTTOM, label, FontId::proportional(13.0), MEASURE);
        }
        if let Some((t0, t1)) = sel.range {
            let (xa, xb) = (st.view.x_of(t0, plot.min.x).max(plot.min.x), st.view.x_of(t1, plot.min.x).min(plot.max.x));
            if xb > xa {
                let r = Rect::from_x_y_ranges(xa..=xb, body.y_range());
                fd.rect_filled(Clip::Pane, r, Color32::from_rgba_unmultiplied(120, 160, 255, 18));
            }
        }
        if let (Some((p0, _)), Some(p1)) = (self.area_drag, input.pointer) {
            let fill = Color32::from_rgba_unmultiplied(120, 160, 255, 40);
            let stroke = Stroke::new(1.0, Color32::LIGHT_BLUE);
            let r = Rect::from_two_pos(p0, p1);
            fd.shape(Clip::Pane, egui::epaint::RectShape::new(r, 0.0, fill, stroke, egui::StrokeKind::Inside));
        }
    }
}

/// The gutter label of a row the overview fills (`Layout` holds it open until then).
fn pending_label(kind: &RowKind) -> Option<&'static str> {
    match kind {
        RowKind::Steps { .. } => Some("steps"),
        RowKind::Bands { .. } => Some("comm / idle gaps"),
        RowKind::NvtxGpu { .. } => Some("NVTX (GPU)"),
        RowKind::MemoryLevel { .. } => Some("GPU memory"),
        RowKind::RankSummary { .. } => Some("GPU busy"),
        _ => None,
    }
}

/// A row whose figures are still being measured: its label, and a word where they will be.
fn pending_row(fd: &mut FrameDraw, cx: &LaneCtx, label: &str, (y0, y1): (f32, f32)) {
    let y = (y0 + y1) / 2.0;
    let font = FontId::proportional(11.0);
    fd.text(Clip::Pane, pos2(cx.body.min.x + 28.0, y), Align2::LEFT_CENTER, label, font.clone(), cx.pal.weak);
    fd.text(Clip::Pane, pos2(cx.plot.min.x + 8.0, y), Align2::LEFT_CENTER, "measuring…", font, cx.pal.weak);
    fd.hline(Clip::Pane, cx.body.x_range(), y1 - 0.5, Stroke::new(0.5, cx.pal.faint));
}

/// A group's header: its band, the disclosure triangle (painted: the default fonts have no
/// ▶/▼) and its label.
fn header(fd: &mut FrameDraw, cx: &LaneCtx, (label, level, collapsed): (&str, u8, bool), (y0, y1): (f32, f32)) {
    let body = cx.body;
    let rr = Rect::from_min_max(pos2(body.min.x, y0), pos2(body.max.x, y1));
    fd.rect_filled(Clip::Pane, rr, if level == 0 { cx.pal.header } else { cx.pal.faint });
    let cx_ = body.min.x + 9.0 + 12.0 * level as f32;
    let cy = (y0 + y1) / 2.0;
    let tri = if collapsed {
        vec![pos2(cx_ - 3.0, cy - 5.0), pos2(cx_ + 4.0, cy), pos2(cx_ - 3.0, cy + 5.0)]
    } else {
        vec![pos2(cx_ - 5.0, cy - 3.0), pos2(cx_ + 5.0, cy - 3.0), pos2(cx_, cy + 4.0)]
    };
    fd.shape(Clip::Pane, Shape::convex_polygon(tri, cx.pal.text, Stroke::NONE));
    let font = FontId::proportional(if level == 0 { 13.0 } else { 12.0 });
    fd.text(Clip::Pane, pos2(cx_ + 9.0, cy), Align2::LEFT_CENTER, label, font, cx.pal.strong);
}
