//! The timeline: lanes grouped per trace (rank) → GPU device (bands, streams, copy engines,
//! annotations, memory water level) / CPU process (threads, NVTX, async) / counters, drawn
//! from the store's level-of-detail query only. A frame runs in phases: lay out the rows
//! (`layout`), take input (`input`), prepare what to draw (`prepare`, pure: no painter, no
//! input) and paint it (`frame`); clicks then act on what the prepared frame found.
//!
//! Each trace has its own clock; the view, ruler, marks and area selections are on the shared
//! axis, and `Trace::to_shared` / `View::for_trace` (`view`) are the only way between the two.

mod bands;
pub mod colors;
mod counters;
mod flows;
pub mod frame;
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
mod rows;
pub mod ruler;
mod series;
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
use std::collections::HashSet;
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

pub struct TimelineView {
    /// The visible window of the shared axis.
    pub view: View,
    /// Width of the plot area in the last frame (px).
    pub plot_width: f32,
    pub scroll_y: f32,
    /// Groups toggled from how they start (`GroupKey::starts_folded`).
    pub collapsed: HashSet<GroupKey>,
    /// Scroll this trace's header to the top on the next frame.
    pub scroll_to_trace: Option<TraceId>,
    /// CPU process groups start folded (ranks side by side: their GPUs one above the other).
    pub fold_cpu_groups: bool,
    pub show_bands: bool,
    /// Marks and named notes (shared axis).
    pub marks: marks::Marks,
    /// A note just added with Shift+M: the Notes tab focuses its name.
    pub note_to_name: Option<usize>,
    pub stats: FrameStats,
    /// Fit the whole workspace at the next frame (after a load).
    pub fit_pending: bool,
    /// The view the opening fit left while some trace's steps were still due: when they
    /// arrive and the view is still this one (nobody moved it), the fit is redone on them.
    opening_fit: Option<OpeningFit>,
    /// Scroll so this lane is visible at the next frame.
    pub scroll_to_lane: Option<(TraceId, u32)>,
    /// The keyboard-shortcut sheet is shown (`?`).
    pub show_shortcuts: bool,
    /// The label column's width (drag its edge).
    pub label_w: f32,
    /// The Ctrl-drag measure (shared axis), until Esc.
    pub measure: Option<Measure>,
    /// What the pointer was over in the last frame (a measure snaps to its edges).
    last_hover: Option<hover::Hover>,
    /// Lanes pinned to the top (they stay while the rest scrolls).
    pub pinned: Vec<(TraceId, u32)>,
    /// A lane just revealed, flashed for a moment so the eye finds it.
    pub flash: Option<(TraceId, u32, std::time::Instant)>,
    area_drag: Option<(Pos2, i64)>,
    /// The rows of the last layout.
    pub layout: Layout,
    /// The plot area of the last frame (screen), for `span_pos`.
    last_plot: Rect,
}

impl Default for TimelineView {
    fn default() -> Self {
        TimelineView {
            view: View::default(),
            plot_width: 1000.0,
            scroll_y: 0.0,
            collapsed: HashSet::new(),
            scroll_to_trace: None,
            fold_cpu_groups: false,
            show_bands: true,
            marks: marks::Marks::default(),
            note_to_name: None,
            stats: FrameStats::default(),
            fit_pending: true,
            opening_fit: None,
            scroll_to_lane: None,
            show_shortcuts: false,
            label_w: LABEL_W,
            measure: None,
            last_hover: None,
            pinned: Vec::new(),
            flash: None,
            area_drag: None,
            layout: Layout::default(),
            last_plot: Rect::NOTHING,
        }
    }
}

impl TimelineView {
    /// Lays out the rows of every open trace (cheap: lanes are few).
    pub fn lay_out(&mut self, ws: &Workspace) {
        self.layout = Layout::new(ws, |k| self.is_collapsed(k), self.show_bands, &self.pinned);
    }

    /// Whether a group is folded: groups that start folded are open when toggled, the others
    /// folded.
    pub fn is_collapsed(&self, key: GroupKey) -> bool {
        self.collapsed.contains(&key) != key.starts_folded(self.fold_cpu_groups)
    }

    /// Folds an open group, opens a folded one.
    pub fn toggle(&mut self, key: GroupKey) {
        if !self.collapsed.remove(&key) {
            self.collapsed.insert(key);
        }
    }

    /// Expands trace `id` and scrolls its header to the top (on the next layout).
    pub fn show_trace(&mut self, id: TraceId) {
        self.collapsed.remove(&GroupKey::Trace(id));
        self.scroll_to_trace = Some(id);
    }

    /// The first fit after a load: the steps when there are (not the CUDA-init prologue),
    /// else everything.
    pub fn fit_opening(&mut self, ws: &Workspace) {
        match (ws.steps_extent(), ws.extent()) {
            (Some((a, b)), Some((origin, _))) => {
                self.view.origin = origin;
                let pad = (b - a) / 50;
                self.view.fit(a - pad, b + pad, self.plot_width);
            }
            _ => self.fit_all(ws),
        }
    }

    pub fn fit_all(&mut self, ws: &Workspace) {
        if let Some((a, b)) = ws.extent() {
            self.view.origin = a;
            let pad = (b - a) / 50;
            self.view.fit(a - pad, b + pad, self.plot_width);
        }
    }

    /// Centre `span` and zoom so that it takes about a third of the view (never zooming out
    /// past what is shown when it already reads well).
    pub fn reveal(&mut self, ws: &Workspace, r: SpanRef) {
        let Some((a, b)) = ws.span_range_shared(r) else { return };
        let d = (b - a).max(1);
        let (w0, w1) = self.view.window(self.plot_width);
        let px = d as f64 / self.view.npp;
        if a < w0 || b > w1 || px < 20.0 || px > self.plot_width as f64 * 0.9 {
            let pad = d.max(2_000);
            self.view.fit(a - pad, b + pad, self.plot_width);
        }
        if let Some(st) = ws.store(r.trace) {
            self.reveal_lane(ws, r.trace, st.span_meta(r.span).lane);
        }
    }

    /// Shows lane `lane` of trace `id`: unfolds the groups it is in, scrolls it into view on
    /// the next frame and flashes it (every jump ends here, so none lands off screen).
    pub fn reveal_lane(&mut self, ws: &Workspace, id: TraceId, lane: u32) {
        let Some(t) = ws.trace(id) else { return };
        for key in layout::Groups::containing(t, lane) {
            if self.is_collapsed(key) {
                self.toggle(key);
            }
        }
        self.scroll_to_lane = Some((id, lane));
        self.flash = Some((id, lane, std::time::Instant::now()));
    }

    /// Pins a lane to the top, or unpins it.
    pub fn toggle_pin(&mut self, id: TraceId, lane: u32) {
        match self.pinned.iter().position(|&p| p == (id, lane)) {
            Some(i) => {
                self.pinned.remove(i);
            }
            None => self.pinned.push((id, lane)),
        }
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
    pub fn span_pos(&self, ws: &Workspace, r: SpanRef) -> Option<Pos2> {
        let (a, b) = ws.span_range_shared(r)?;
        let m = ws.store(r.trace)?.span_meta(r.span);
        let y = self.layout.lane_y.get(&(r.trace, m.lane))?;
        let plot = self.last_plot;
        if !plot.is_positive() {
            return None; // no frame yet
        }
        let (x0, x1) = (self.view.x_of(a, plot.min.x), self.view.x_of(b, plot.min.x));
        let x = ((x0 + x1) / 2.0).clamp(x0.max(plot.min.x) + 1.0, x1.min(plot.max.x) - 1.0);
        let p = pos2(x, plot.min.y - self.scroll_y + y + m.depth as f32 * ROW_H + ROW_H / 2.0);
        plot.contains(p).then_some(p)
    }

    /// The plot area of the last frame (screen).
    pub fn last_plot(&self) -> Rect {
        self.last_plot
    }

    /// Puts the pane at `full` (screen): the plot's width and place for this frame's zooms and
    /// for `span_pos`.
    pub fn place(&mut self, full: Rect) -> frame::Areas {
        let areas = frame::Areas::of(full, self.label_w);
        self.plot_width = areas.plot.width().max(10.0);
        self.last_plot = areas.plot;
        areas
    }

    /// Scrolls to what the last commands asked to see: a trace's header, a span's lane.
    fn scroll_to_targets(&mut self, body_h: f32) {
        if let Some(id) = self.scroll_to_trace.take() {
            let key = GroupKey::Trace(id);
            let header = self.layout.rows.iter().find(|r| matches!(r.kind, RowKind::Header { key: k, .. } if k == key));
            if let Some(r) = header {
                self.scroll_y = r.y;
            }
        }
        if let Some(key) = self.scroll_to_lane.take() {
            if let Some(&y) = self.layout.lane_y.get(&key) {
                // the rows under the pinned ones are hidden too
                let top = self.scroll_y + self.layout.pinned_h;
                if y < top || y + ROW_H > self.scroll_y + body_h {
                    self.scroll_y = (y - self.layout.pinned_h - (body_h - self.layout.pinned_h) * 0.3).max(0.0);
                }
            } else {
                // not laid out yet (its groups unfold on this layout): try next frame
                self.scroll_to_lane = Some(key);
            }
        }
    }

    /// One frame: layout, input, prepare, paint, then what clicks on the painted frame mean.
    pub fn ui(&mut self, ui: &mut Ui, cx: &mut ViewCtx) {
        let (ws, sel, hl) = (cx.ws, cx.sel, cx.highlight);
        let mut cmds = Vec::new();
        self.frame_ui(ui, (ws, sel, hl), &mut cmds);
        for c in cmds {
            cx.emit(c);
        }
    }

    fn frame_ui(
        &mut self,
        ui: &mut Ui,
        (ws, sel, hl): (&Workspace, &crate::commands::Selection, &crate::commands::Highlight),
        cmds: &mut Vec<Command>,
    ) {
        let areas = self.place(ui.available_rect_before_wrap());
        if self.fit_pending && !ws.traces.is_empty() {
            self.fit_opening(ws);
            self.fit_pending = false;
            let steps_due = ws.traces.iter().any(|t| !t.derived.steps.is_ready());
            self.opening_fit = steps_due.then_some(OpeningFit::Fitted);
        } else if let Some(OpeningFit::Left(v)) = self.opening_fit {
            if ws.traces.iter().all(|t| t.derived.steps.is_ready()) {
                if self.view == v {
                    self.fit_opening(ws);
                }
                self.opening_fit = None;
            }
        }
        self.lay_out(ws);
        self.scroll_to_targets(areas.body.height());
        let resp = Responses {
            body: ui.interact(areas.body, ui.scope_id().with("timeline_body"), Sense::click_and_drag()),
            ruler: ui.interact(areas.ruler, ui.scope_id().with("timeline_ruler"), Sense::click_and_drag()),
        };
        self.handle_input(ui, &resp, areas.plot, ws, sel, cmds);
        if let Some(extent) = ws.extent() {
            self.view.bound_to(extent, self.plot_width);
        }
        if let Some(OpeningFit::Fitted) = self.opening_fit {
            self.opening_fit = Some(OpeningFit::Left(self.view));
        }
        let max_scroll = (self.layout.content_h - areas.body.height() + 40.0).max(0.0);
        self.scroll_y = self.scroll_y.clamp(0.0, max_scroll);

        // the label column's edge: drag to widen the labels
        let grip = Rect::from_x_y_ranges(areas.plot.min.x - 3.0..=areas.plot.min.x + 3.0, areas.body.y_range());
        let g = ui.interact(grip, ui.scope_id().with("timeline_label_grip"), Sense::drag());
        if g.hovered() || g.dragged() {
            ui.ctx().set_cursor_icon(egui::CursorIcon::ResizeHorizontal);
        }
        if g.dragged() {
            self.label_w = (self.label_w + g.drag_delta().x).clamp(MIN_LABEL_W, areas.full.width() * 0.6);
        }
        if self.flash_alpha() > 0 {
            ui.ctx().request_repaint();
        } else {
            self.flash = None;
        }
        let mut fd = self.prepare(ws, sel, hl, &FrameInput::new(ui, areas.full));
        self.stats = fd.stats;
        let (hover, links) = (fd.hover, std::mem::take(&mut fd.links));
        self.last_hover = hover;
        fd.paint(ui);
        self.handle_clicks(ui, &resp.body, (hover, &links), ws, cmds);
    }
}
