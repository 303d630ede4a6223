//! Input on the timeline: drags pan (Shift-drag selects an area), the wheel scrolls and zooms,
//! W/S/A/D zoom and pan, F frames the selection, M marks a time; after the frame is prepared,
//! clicks select what is under the pointer, fold a group or follow a link.

use super::frame::Link;
use super::hover::{hover_text, Hover};
use super::layout::RowKind;
use super::{TimelineState, TimelineView};
use crate::commands::{Command, Selection};
use crate::workspace::{SpanRef, Workspace};
use egui::{Key, Rect, Sense, Ui};

/// The pane's two interactive areas of this frame.
pub struct Responses {
    /// Label column and plot.
    pub body: egui::Response,
    pub ruler: egui::Response,
}

/// A measure snaps to a span edge or a mark this close (px).
const SNAP_PX: f32 = 8.0;

impl TimelineView {
    /// The shared-axis time at `x`, snapped to the nearest edge of the span under the pointer
    /// (last frame's hover) or of a mark, when one is within `SNAP_PX`.
    pub(super) fn snap(&self, st: &TimelineState, ws: &Workspace, x: f32, plot: Rect) -> i64 {
        let t = st.view.t_of(x, plot.min.x);
        let mut edges: Vec<i64> = st.marks.list.iter().map(|m| m.t).collect();
        if let Some(Hover::Item { ti, item, .. }) = self.last_hover {
            if let Some(tr) = ws.traces.get(ti) {
                edges.extend([tr.to_shared(item.start), tr.to_shared(item.end)]);
            }
        }
        let near = |e: &i64| (st.view.x_of(*e, plot.min.x) - x).abs();
        edges.into_iter().filter(|e| near(e) <= SNAP_PX).min_by(|a, b| near(a).total_cmp(&near(b))).unwrap_or(t)
    }

    /// Drags, wheel and keys: moves the frame's view and scroll, and asks for what the keys
    /// mean.
    pub(super) fn handle_input(
        &mut self,
        ui: &Ui,
        r: &Responses,
        st: &mut TimelineState,
        ws: &Workspace,
        sel: &Selection,
        cmds: &mut Vec<Command>,
    ) {
        let pointer = ui.input(|i| i.pointer.hover_pos());
        if self.measure_drag(ui, &r.body, st, ws, pointer) {
            return;
        }
        self.pan_or_area_drag(ui, r, st, ws, pointer, cmds);
        let anchor = self.wheel(ui, r, st, pointer);
        if ui.ctx().egui_wants_keyboard_input() {
            return;
        }
        self.view_keys(ui, anchor, st, sel, cmds);
        let view_t0 = st.view.window(self.plot_width).0;
        typed_keys(ui, ws, sel, view_t0, cmds);
    }

    /// Ctrl-drag: measure from one span edge to another. True while a measure is being dragged
    /// (the drag is then the measure's only).
    fn measure_drag(
        &mut self,
        ui: &Ui,
        resp: &egui::Response,
        st: &TimelineState,
        ws: &Workspace,
        pointer: Option<egui::Pos2>,
    ) -> bool {
        let plot = self.last_plot;
        let ctrl = ui.input(|i| i.modifiers.command);
        if resp.drag_started() && ctrl {
            if let Some(p) = resp.interact_pointer_pos() {
                let t = self.snap(st, ws, p.x.max(plot.min.x), plot);
                self.measure = Some(super::Measure { t0: t, t1: t, dragging: true });
            }
        }
        let Some(mut m) = self.measure.filter(|m| m.dragging) else { return false };
        if let Some(p) = pointer {
            m.t1 = self.snap(st, ws, p.x.clamp(plot.min.x, plot.max.x), plot);
        }
        if resp.drag_stopped() {
            m.dragging = false;
            // the duration on the clipboard, as the label reads it
            ui.ctx().copy_text(strobe_analysis::report::fmt_ns((m.t1 - m.t0).abs()));
        }
        self.measure = Some(m);
        true
    }

    /// Dragging pans the view (the body's drag also scrolls); Shift-drag selects an area, whose
    /// time range and unpinned lanes are asked for when the drag stops.
    fn pan_or_area_drag(
        &mut self,
        ui: &Ui,
        r: &Responses,
        st: &mut TimelineState,
        ws: &Workspace,
        pointer: Option<egui::Pos2>,
        cmds: &mut Vec<Command>,
    ) {
        let plot = self.last_plot;
        let (resp, ruler_resp) = (&r.body, &r.ruler);
        let shift = ui.input(|i| i.modifiers.shift);
        if resp.drag_started() && shift {
            if let Some(p) = resp.interact_pointer_pos() {
                self.area_drag = Some((p, st.view.t_of(p.x.max(plot.min.x), plot.min.x)));
            }
        }
        if resp.dragged() || ruler_resp.dragged() {
            let d = if resp.dragged() { resp.drag_delta() } else { ruler_resp.drag_delta() };
            if self.area_drag.is_none() {
                st.view.t0 -= d.x as f64 * st.view.npp;
                if resp.dragged() {
                    st.scroll_y -= d.y;
                }
            }
        }
        if !resp.drag_stopped() {
            return;
        }
        let Some((p0, ta)) = self.area_drag.take() else { return };
        let Some(p1) = resp.interact_pointer_pos().or(pointer) else { return };
        let tb = st.view.t_of(p1.x.max(plot.min.x), plot.min.x);
        let (t0, t1) = (ta.min(tb), ta.max(tb));
        let top = plot.min.y - st.scroll_y;
        let (ya, yb) = (p0.y.min(p1.y) - top, p0.y.max(p1.y) - top);
        let lanes: Vec<(crate::workspace::TraceId, u32)> = self
            .layout
            .rows
            .iter()
            .filter(|r| r.y + r.h > ya && r.y < yb)
            .filter_map(|r| match r.kind {
                RowKind::Lane { ti, lane, pinned: false } => Some((ws.traces[ti].id, lane)),
                _ => None,
            })
            .collect();
        if t1 > t0 {
            cmds.push(Command::AreaSelected { t0, t1, lanes });
        }
    }

    /// The wheel scrolls, a pinch or Ctrl-wheel zooms at the pointer. Returns the x the keys
    /// zoom at: the pointer's over the pane, else the plot's middle.
    fn wheel(&self, ui: &Ui, r: &Responses, st: &mut TimelineState, pointer: Option<egui::Pos2>) -> f32 {
        let plot = self.last_plot;
        let hovered = r.body.hovered() || r.ruler.hovered();
        let anchor = pointer
            .filter(|_| hovered)
            .map(|p| (p.x - plot.min.x).clamp(0.0, plot.width()))
            .unwrap_or(plot.width() / 2.0);
        if hovered {
            let (zoom, scroll) = ui.input(|i| (i.zoom_delta(), i.smooth_scroll_delta));
            if zoom != 1.0 {
                st.view.zoom_at(1.0 / zoom as f64, anchor);
            } else {
                st.scroll_y -= scroll.y;
                st.view.t0 -= scroll.x as f64 * st.view.npp;
            }
        }
        anchor
    }

    /// W/S zoom, A/D pan, F frames the selection, M marks a time (Shift+M a note), Esc clears
    /// the selection (with nothing selected: ends the search).
    fn view_keys(&mut self, ui: &Ui, anchor: f32, st: &mut TimelineState, sel: &Selection, cmds: &mut Vec<Command>) {
        let plot = self.last_plot;
        let (w, s, a, d, f, m, esc, c) = ui.input(|i| {
            let n = |k: Key| i.events.iter().filter(|e| matches!(e, egui::Event::Key { key, pressed: true, modifiers, .. } if *key == k && !modifiers.command)).count() as i32;
            (n(Key::W), n(Key::S), n(Key::A), n(Key::D), n(Key::F), n(Key::M), n(Key::Escape), n(Key::C))
        });
        if c % 2 == 1 {
            cmds.push(Command::ToggleCriticalPath);
        }
        for _ in 0..w {
            st.view.zoom_at(0.8, anchor);
        }
        for _ in 0..s {
            st.view.zoom_at(1.25, anchor);
        }
        st.view.t0 += (d - a) as f64 * 0.15 * plot.width() as f64 * st.view.npp;
        if f > 0 {
            if let Some(r) = sel.span {
                cmds.push(Command::FrameSpan(r));
            } else if let Some((a, b)) = sel.range {
                cmds.push(Command::ZoomTo { t0: a, t1: b });
            } else {
                cmds.push(Command::FitAll);
            }
        }
        if m > 0 {
            let t = st.view.t_of(plot.min.x + anchor, plot.min.x);
            let named = ui.input(|i| i.modifiers.shift);
            cmds.push(Command::AddMark { t, note: if named { "note".into() } else { String::new() }, name_it: named });
            if named {
                // Shift+M: a note, named in the Notes tab
                cmds.push(Command::ShowNotes);
            }
        }
        if esc > 0 {
            // Esc takes back one thing at a time: a measure or the selection, then the search
            let nothing = self.measure.is_none() && sel.span.is_none() && sel.kernel.is_none() && sel.range.is_none();
            if nothing {
                cmds.push(Command::EndSearch);
            }
            self.measure = None;
            cmds.push(Command::ClearSelection);
        }
    }

    /// What the frame found under the pointer: its tooltip, a click selects it (a gap zooms to
    /// itself, a header folds its group), a double-click zooms onto it; the frame's links.
    pub(super) fn handle_clicks(
        &mut self,
        ui: &Ui,
        resp: &egui::Response,
        (hover, links): (Option<Hover>, &[Link]),
        st: &TimelineState,
        ws: &Workspace,
        cmds: &mut Vec<Command>,
    ) {
        for l in links {
            let r = ui.interact(l.rect, ui.scope_id().with(l.id), Sense::click());
            if let Some(label) = &l.label {
                r.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Link, true, label));
            }
            if r.on_hover_text(l.tip.as_str()).clicked() {
                cmds.push(l.command.clone());
            }
        }
        if let Some(h) = hover {
            // (not over its own right-click menu)
            if resp.hovered() && self.area_drag.is_none() && !resp.context_menu_opened() {
                let tip = hover_text(ws, &h);
                egui::Tooltip::always_open(
                    ui.ctx().clone(),
                    ui.layer_id(),
                    ui.scope_id().with("tl_tip"),
                    egui::PopupAnchor::Pointer,
                )
                .show(|ui| {
                    ui.set_max_width(520.0);
                    ui.label(tip);
                });
            }
        }
        if resp.clicked() {
            match hover {
                Some(Hover::Item { ti, span, .. }) => {
                    cmds.push(Command::SelectSpan(SpanRef { trace: ws.traces[ti].id, span }))
                }
                Some(Hover::Projected { ti, index }) => {
                    if let Some(p) = ws.traces[ti].nvtx_gpu().get(index) {
                        cmds.push(Command::SelectSpan(SpanRef { trace: ws.traces[ti].id, span: p.span }))
                    }
                }
                Some(Hover::Step { ti, step }) => {
                    let t = &ws.traces[ti];
                    if let Some(s) = t.steps().get(step) {
                        let pad = s.dur_ns / 40;
                        let (t0, t1) = t.range_to_shared((s.start_ns - pad, s.start_ns + s.dur_ns + pad));
                        cmds.push(Command::ZoomTo { t0, t1 })
                    }
                }
                Some(Hover::Microbatch { ti, index }) => {
                    let t = &ws.traces[ti];
                    let span = ws.pipeline.as_ref().and_then(|p| p.rank_of(t.id)?.microbatches.get(index)?.span);
                    if let Some(span) = span {
                        cmds.push(Command::SelectSpan(SpanRef { trace: t.id, span }))
                    }
                }
                Some(Hover::Gap { gap, ti }) => {
                    let half = (gap.end - gap.start) / 2;
                    let (t0, t1) = ws.traces[ti].range_to_shared((gap.start - half, gap.end + half));
                    cmds.push(Command::ZoomTo { t0, t1 })
                }
                _ => {
                    // header rows toggle collapse
                    if let Some(p) = resp.interact_pointer_pos() {
                        if let Some(r) = self.layout.row_at(p.y - self.last_plot.min.y, st.scroll_y) {
                            if let RowKind::Header { key, .. } = r.kind {
                                cmds.push(Command::ToggleFold(key));
                            } else {
                                cmds.push(Command::ClearSelection);
                            }
                        }
                    }
                }
            }
        }
        if resp.double_clicked() {
            if let Some(Hover::Item { item, ti, .. }) = hover {
                let pad = (item.end - item.start) / 10;
                let (t0, t1) = ws.traces[ti].range_to_shared((item.start - pad, item.end + pad));
                cmds.push(Command::ZoomTo { t0, t1 });
            }
        }
    }
}

/// Punctuation (it arrives as text: its key depends on the keyboard layout) steps along a lane,
/// a flow or the critical path and shows the shortcuts; Ctrl+P finds a track; `/` or Ctrl+F focuses the search.
fn typed_keys(ui: &Ui, ws: &Workspace, sel: &Selection, view_t0: i64, cmds: &mut Vec<Command>) {
    let typed: Vec<String> = ui.input(|i| {
        i.events.iter().filter_map(|e| if let egui::Event::Text(t) = e { Some(t.clone()) } else { None }).collect()
    });
    for t in typed {
        let jump = sel.span.and_then(|r| match t.as_str() {
            "." => super::navigate::step_on_lane(ws, r, true),
            "," => super::navigate::step_on_lane(ws, r, false),
            "]" => super::navigate::follow_flow(ws, r, true),
            "[" => super::navigate::follow_flow(ws, r, false),
            _ => None,
        });
        // along the critical path: from the selection, or from the window's left edge
        let jump = jump.or_else(|| match t.as_str() {
            ">" => super::critical_path::step_along(ws, sel, view_t0, true),
            "<" => super::critical_path::step_along(ws, sel, view_t0, false),
            _ => None,
        });
        if let Some(r) = jump {
            cmds.push(Command::RevealSpan(r));
        }
        if t == "?" {
            cmds.push(Command::ToggleShortcuts);
        }
    }
    if ui.input(|i| i.modifiers.command && i.key_pressed(Key::P)) {
        cmds.push(Command::FindTrack);
    }
    let slash = ui.input(|i| {
        i.events.iter().any(|e| matches!(e, egui::Event::Text(t) if t == "/"))
            || i.modifiers.command && i.key_pressed(Key::F)
    });
    if slash {
        cmds.push(Command::FocusSearch);
    }
}
