//! The first phase of a frame: from the laid-out rows, the view and the pointer, everything
//! the frame draws (`FrameDraw`) — no painter, no fonts, no input. Off-screen rows cost
//! nothing; every visible lane's items become quads of one mesh plus a few labels.

use super::frame::{Areas, Clip, FrameDraw, FrameInput};
use super::lanes::{LaneCtx, LanePainter};
use super::rows::{self, RowCtx};
use super::{bands, flows, ruler, TimelineState, TimelineView};
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
        let flash = self.flash.map(|(id, lane, _)| (id, lane, self.flash_alpha()));
        let cx = LaneCtx { body, plot, pointer, char_w: input.char_w, pal, hl, sel, flash };
        let mut lp = LanePainter::default();
        let top = body.min.y - st.scroll_y;
        let pinned_bottom = body.min.y + self.layout.pinned_h;
        // device-wide idle tint behind the stream lanes
        if st.show_bands {
            bands::device_tint(&mut lp, &cx, ws, &self.layout.rows, &st.view, top);
        }
        for r in &self.layout.rows {
            let y0 = body.min.y + self.layout.row_y(r, st.scroll_y);
            let y1 = y0 + r.h;
            let scrolls = r.y >= self.layout.pinned_h;
            let top = if scrolls { pinned_bottom } else { body.min.y };
            // off screen, or scrolled under the pinned rows: a lane is drawn while any of it
            // shows (a CPU thread's lane can be taller than the view, its deep spans the ones
            // a jump scrolls to), other rows are short and go once their top does
            let lane = matches!(r.kind, super::layout::RowKind::Lane { .. });
            let hidden_above = if lane { y1 <= top } else { y0 < top && scrolls };
            if y1 < body.min.y || y0 > body.max.y || hidden_above {
                continue;
            }
            let ti = r.kind.ti();
            let t = &ws.traces[ti];
            if let Some(label) = rows::pending_label(&r.kind).filter(|_| !t.derived.overview_ready()) {
                pending_row(&mut fd, &cx, label, (y0, y1));
                continue;
            }
            let view = st.view.for_trace(t);
            let mut rc = RowCtx { fd: &mut fd, lp: &mut lp, cx: &cx, ws, trace: t, ti, view, y: (y0, y1), top };
            rows::draw(&mut rc, &r.kind);
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
        if st.show_critical_path {
            super::critical_path::draw(&mut fd, ws, &self.layout, &st.view, (plot, top), pal.critical);
        }
        flows::p2p(&mut fd, ws, sel, &self.layout, &st.view, (plot, top), &pal);
        flows::draw(&mut fd, ws, sel, &self.layout, &st.view, (plot, top), &pal);
        self.overlays(st, ws, &mut fd, sel, input, a);
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
    fn overlays(
        &self,
        st: &TimelineState,
        ws: &Workspace,
        fd: &mut FrameDraw,
        sel: &Selection,
        input: &FrameInput,
        a: Areas,
    ) {
        let (body, plot) = (a.body, a.plot);
        for (i, m) in st.marks.list.iter().enumerate() {
            let x = st.view.x_of(m.t, plot.min.x);
            if x >= plot.min.x && x <= plot.max.x {
                fd.vline(Clip::Pane, x, body.y_range(), Stroke::new(1.0, input.palette.mark));
                // staggered so neighbouring marks' labels do not sit on each other
                let at = pos2(x + 2.0, body.min.y + 2.0 + (i % 3) as f32 * 13.0);
                let label = st.marks.label(i, st.view.origin);
                fd.text(Clip::Pane, at, Align2::LEFT_TOP, label, FontId::proportional(11.0), input.palette.mark);
            }
        }
        if let Some(m) = self.measure {
            let (t0, t1) = (m.t0.min(m.t1), m.t0.max(m.t1));
            let (xa, xb) = (st.view.x_of(t0, plot.min.x), st.view.x_of(t1, plot.min.x));
            let y = body.min.y + 40.0;
            let stroke = Stroke::new(1.5, input.palette.measure);
            for x in [xa, xb] {
                fd.vline(Clip::Plot, x, body.y_range(), Stroke::new(1.0, input.palette.measure));
            }
            fd.shape(Clip::Plot, Shape::line_segment([pos2(xa, y), pos2(xb, y)], stroke));
            let label = strobe_analysis::report::fmt_ns(t1 - t0);
            let at = pos2((xa + xb) / 2.0, y - 3.0);
            fd.text(Clip::Plot, at, Align2::CENTER_BOTTOM, label, FontId::proportional(13.0), input.palette.measure);
        }
        for r in self.layout.area_rects(st, ws, sel, body, plot) {
            fd.rect_filled(Clip::Pane, r, Color32::from_rgba_unmultiplied(120, 160, 255, 28));
            // its edges, so a selection of one lane reads as a box
            let stroke = Stroke::new(1.0, Color32::from_rgba_unmultiplied(120, 160, 255, 110));
            fd.shape(Clip::Pane, egui::epaint::RectShape::stroke(r, 0.0, stroke, egui::StrokeKind::Inside));
        }
        if let (Some((p0, _)), Some(p1)) = (self.area_drag, input.pointer) {
            let fill = Color32::from_rgba_unmultiplied(120, 160, 255, 40);
            let stroke = Stroke::new(1.0, Color32::LIGHT_BLUE);
            let r = Rect::from_two_pos(p0, p1);
            fd.shape(Clip::Pane, egui::epaint::RectShape::new(r, 0.0, fill, stroke, egui::StrokeKind::Inside));
        }
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
