//! The timeline: lanes grouped per trace (rank) → GPU device (bands, streams, copy engines,
//! annotations, memory water level) / CPU process (threads, NVTX, async) / counters, drawn
//! from the store's level-of-detail query only. A frame runs in phases: lay out the rows
//! (`layout`), take input (`input`), prepare what to draw (`prepare`, pure: no painter, no
//! input) and paint it (`frame`); clicks then act on what the prepared frame found.
//!
//! Each trace has its own clock; the view, ruler, marks and area selections are on the shared
//! axis, and `Trace::to_shared` / `View::for_trace` (`view`) are the only way between the two.

mod area_shade;
mod bands;
pub mod colors;
pub mod context_menu;
mod counters;
pub mod critical_path;
mod flows;
pub mod frame;
mod gpu_metrics;
mod header;
pub mod hover;
mod input;
pub mod lanes;
pub mod layout;
pub mod marks;
mod memory_level;
pub mod navigate;
mod nvtx_gpu;
pub mod pipeline_strip;
mod prepare;
mod rank_summary;
pub mod reveal;
mod rows;
pub mod ruler;
mod series;
pub mod state;
mod step_strip;
pub mod view;

use crate::commands::Command;
use crate::view_ctx::ViewCtx;
use crate::workspace::{SpanRef, TraceId, Workspace};
use egui::{pos2, Pos2, Rect, Sense, Ui};
pub use frame::{FrameDraw, FrameInput, FrameStats, Palette};
use input::Responses;
pub use lanes::truncate;
pub use layout::{GroupKey, Layout, Row, RowKind};
pub use state::TimelineState;
pub use view::{View, MAX_NPP, MIN_NPP};

pub const ROW_H: f32 = 18.0;
/// The label column's width until the user drags its edge.
pub const LABEL_W: f32 = 230.0;
pub const MIN_LABEL_W: f32 = 120.0;
/// How long a revealed lane flashes (s).
const FLASH_S: f32 = 1.0;
pub const RULER_H: f32 = 24.0;

/// Where the opening fit stands while the steps it would show are still being found.
#[derive(Clone, Copy, Debug)]
enum OpeningFit {
    /// Fitted this frame: the view is taken once the frame has bounded it.
    Fitted,
    /// The view as the fit left it.
    Left(View),
}

/// A measured interval: from where the drag started to where it is (or ended).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Measure {
    pub t0: i64,
    pub t1: i64,
    pub dragging: bool,
}

/// The timeline pane's own state: what it measured or is in the middle of. The window, the
/// scroll, marks, folds and pins are the app's (`TimelineState`, read through `ViewCtx`).
pub struct TimelineView {
    /// Width of the plot area in the last frame (px).
    pub plot_width: f32,
    /// Scroll this trace's header to the top on the next frame.
    pub scroll_to_trace: Option<TraceId>,
    pub stats: FrameStats,
    /// The view the opening fit left while some trace's steps were still due: when they
    /// arrive and the view is still this one (nobody moved it), the fit is redone on them.
    opening_fit: Option<OpeningFit>,
    /// Scroll so this lane (or one of its span rows) is visible at the next frame.
    pub scroll_to: Option<reveal::ScrollTarget>,
    /// The Ctrl-drag measure (shared axis), until Esc.
    pub measure: Option<Measure>,
    /// What the pointer was over in the last frame (a measure snaps to its edges).
    last_hover: Option<hover::Hover>,
    /// A lane just revealed, flashed for a moment so the eye finds it.
    pub flash: Option<(TraceId, u32, std::time::Instant)>,
    area_drag: Option<(Pos2, i64)>,
    /// What the open right-click menu is about.
    menu_target: Option<context_menu::MenuTarget>,
    /// The rows of the last layout.
    pub layout: Layout,
    /// The plot area of the last frame (screen), for `span_pos`.
    last_plot: Rect,
}

impl Default for TimelineView {
    fn default() -> Self {
        TimelineView {
            plot_width: 1000.0,
            scroll_to_trace: None,
            stats: FrameStats::default(),
            opening_fit: None,
            scroll_to: None,
            measure: None,
            last_hover: None,
            flash: None,
            area_drag: None,
            menu_target: None,
            layout: Layout::default(),
            last_plot: Rect::NOTHING,
        }
    }
}

impl TimelineView {
    /// Lays out the rows of every open trace (cheap: lanes are few).
    pub fn lay_out(&mut self, st: &TimelineState, ws: &Workspace) {
        self.layout = Layout::new(ws, |k| st.is_collapsed(k), st.show_bands, &st.pinned, &st.hidden);
    }

    /// Expands trace `id` and scrolls its header to the top (on the next layout).
    pub fn show_trace(&mut self, st: &mut TimelineState, id: TraceId) {
        st.collapsed.remove(&GroupKey::Trace(id));
        self.scroll_to_trace = Some(id);
    }

    /// How opaque the flash over a revealed lane is now (it fades over a second).
    pub fn flash_alpha(&self) -> u8 {
        let Some((_, _, at)) = self.flash else { return 0 };
        let f = 1.0 - at.elapsed().as_secs_f32() / FLASH_S;
        (f.clamp(0.0, 1.0) * 90.0) as u8
    }

    /// Where a span's start row is on screen in the last frame (its middle, at the start
    /// when the span is wider than the plot): what a click on it would hit. None when its
    /// lane is not laid out (collapsed) or it lies outside the plot.
    pub fn span_pos(&self, st: &TimelineState, ws: &Workspace, r: SpanRef) -> Option<Pos2> {
        let (a, b) = ws.span_range_shared(r)?;
        let m = ws.store(r.trace)?.span_meta(r.span);
        let y = self.layout.lane_y.get(&(r.trace, m.lane))?;
        let plot = self.last_plot;
        if !plot.is_positive() {
            return None; // no frame yet
        }
        let (x0, x1) = (st.view.x_of(a, plot.min.x), st.view.x_of(b, plot.min.x));
        // the part of it on the plot, a pixel in from its edges when it is wide enough
        let (lo, hi) = (x0.max(plot.min.x), x1.min(plot.max.x));
        if hi < lo {
            return None; // left or right of the window
        }
        let inset = if hi - lo > 2.0 { 1.0 } else { 0.0 };
        let x = ((x0 + x1) / 2.0).clamp(lo + inset, hi - inset);
        let p = pos2(x, plot.min.y - st.scroll_y + y + m.depth as f32 * ROW_H + ROW_H / 2.0);
        plot.contains(p).then_some(p)
    }

    /// The plot area of the last frame (screen).
    pub fn last_plot(&self) -> Rect {
        self.last_plot
    }

    /// Puts the pane at `full` (screen) with a `label_w` label column: the plot's width and
    /// place for this frame's zooms and for `span_pos`.
    pub fn place(&mut self, full: Rect, label_w: f32) -> frame::Areas {
        let areas = frame::Areas::of(full, label_w);
        self.plot_width = areas.plot.width().max(10.0);
        self.last_plot = areas.plot;
        areas
    }

    /// Scrolls to what the last commands asked to see: a trace's header, a span's lane.
    fn scroll_to_targets(&mut self, st: &mut TimelineState, body_h: f32) {
        if let Some(id) = self.scroll_to_trace.take() {
            let key = GroupKey::Trace(id);
            let header = self.layout.rows.iter().find(|r| matches!(r.kind, RowKind::Header { key: k, .. } if k == key));
            if let Some(r) = header {
                st.scroll_y = r.y;
            }
        }
        if let Some(target) = self.scroll_to.take() {
            if !self.scroll_to_row(st, target, body_h) {
                // not laid out yet (its groups unfold on this layout): try next frame
                self.scroll_to = Some(target);
            }
        }
    }

    /// One frame: layout, input, prepare, paint, then what clicks on the painted frame mean.
    /// The frame works on a copy of the shared state (input moves the view, the frame draws
    /// the moved one) and hands what it changed back as commands.
    pub fn ui(&mut self, ui: &mut Ui, cx: &mut ViewCtx) {
        let (ws, sel, hl) = (cx.ws, cx.sel, cx.highlight);
        let mut st = cx.state.clone();
        let mut cmds = Vec::new();
        self.frame_ui(ui, &mut st, (ws, sel, hl), &mut cmds);
        let seen = cx.state;
        if (st.view, st.scroll_y, st.fit_pending) != (seen.view, seen.scroll_y, seen.fit_pending) {
            cx.emit(Command::SetView { from: seen.view, view: st.view, scroll_y: st.scroll_y });
        }
        if st.label_w != seen.label_w {
            cx.emit(Command::SetLabelWidth(st.label_w));
        }
        for c in cmds {
            cx.emit(c);
        }
    }

    fn frame_ui(
        &mut self,
        ui: &mut Ui,
        st: &mut TimelineState,
        (ws, sel, hl): (&Workspace, &crate::commands::Selection, &crate::commands::Highlight),
        cmds: &mut Vec<Command>,
    ) {
        let areas = self.place(ui.available_rect_before_wrap(), st.label_w);
        if st.fit_pending && !ws.traces.is_empty() {
            st.fit_opening(ws, self.plot_width);
            st.fit_pending = false;
            let steps_due = ws.traces.iter().any(|t| !t.derived.steps_ready());
            self.opening_fit = steps_due.then_some(OpeningFit::Fitted);
        } else if let Some(OpeningFit::Left(v)) = self.opening_fit {
            if ws.traces.iter().all(|t| t.derived.steps_ready()) {
                if st.view == v {
                    st.fit_opening(ws, self.plot_width);
                }
                self.opening_fit = None;
            }
        }
        self.lay_out(st, ws);
        self.scroll_to_targets(st, areas.body.height());
        let resp = Responses {
            body: ui.interact(areas.body, ui.scope_id().with("timeline_body"), Sense::click_and_drag()),
            ruler: ui.interact(areas.ruler, ui.scope_id().with("timeline_ruler"), Sense::click_and_drag()),
        };
        self.handle_input(ui, &resp, st, ws, sel, cmds);
        if let Some(extent) = ws.extent() {
            st.view.bound_to(extent, self.plot_width);
        }
        if let Some(OpeningFit::Fitted) = self.opening_fit {
            self.opening_fit = Some(OpeningFit::Left(st.view));
        }
        let max_scroll = (self.layout.content_h - areas.body.height() + 40.0).max(0.0);
        st.scroll_y = st.scroll_y.clamp(0.0, max_scroll);

        // the label column's edge: drag to widen the labels
        let grip = Rect::from_x_y_ranges(areas.plot.min.x - 3.0..=areas.plot.min.x + 3.0, areas.body.y_range());
        let g = ui.interact(grip, ui.scope_id().with("timeline_label_grip"), Sense::drag());
        if g.hovered() || g.dragged() {
            ui.ctx().set_cursor_icon(egui::CursorIcon::ResizeHorizontal);
        }
        if g.dragged() {
            st.label_w = (st.label_w + g.drag_delta().x).clamp(MIN_LABEL_W, areas.full.width() * 0.6);
        }
        if self.flash_alpha() > 0 {
            ui.ctx().request_repaint();
        } else {
            self.flash = None;
        }
        let mut fd = self.prepare(st, ws, sel, hl, &FrameInput::new(ui, areas.full));
        self.stats = fd.stats;
        let (hover, links) = (fd.hover, std::mem::take(&mut fd.links));
        self.last_hover = hover;
        fd.paint(ui);
        self.handle_clicks(ui, &resp.body, (hover, &links), st, ws, cmds);
        self.context_menu(&resp.body, (st, ws), hover, cmds);
        self.hidden_lanes_menu(ui, areas.ruler, (st, ws), cmds);
    }
}
