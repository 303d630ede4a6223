//! Every jump ends here: a search result, a table row, a flow followed, F on the selection,
//! a track picked in the finder. A jump to a span brings the span itself on screen: its time
//! into the window and its row — not only its lane, whose top may be twenty rows above a deep
//! CPU op — into the visible rows, with a little context around it.

use super::{TimelineState, TimelineView, ROW_H};
use crate::workspace::{SpanRef, TraceId, Workspace};

/// Rows of context kept above and below a revealed span's row.
const CONTEXT_ROWS: f32 = 2.0;

/// What the next frame scrolls to: a lane's top, or the row of one of its depths.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScrollTarget {
    pub trace: TraceId,
    pub lane: u32,
    /// The span's depth in the lane (None: the lane itself).
    pub depth: Option<u32>,
}

impl TimelineView {
    /// Centre `span` and zoom so that it takes about a third of the view (never zooming out
    /// past what is shown when it already reads well), and scroll to its row.
    pub fn reveal(&mut self, st: &mut TimelineState, ws: &Workspace, r: SpanRef) {
        let Some((a, b)) = ws.span_range_shared(r) else { return };
        let d = (b - a).max(1);
        let (w0, w1) = st.view.window(self.plot_width);
        let px = d as f64 / st.view.npp;
        if a < w0 || b > w1 || px < 20.0 || px > self.plot_width as f64 * 0.9 {
            let pad = d.max(2_000);
            st.view.fit(a - pad, b + pad, self.plot_width);
        }
        self.show_span_row(st, ws, r);
    }

    /// F: fit the window to `span` with a tenth of it each side, and scroll to its row.
    pub fn frame_span(&mut self, st: &mut TimelineState, ws: &Workspace, r: SpanRef) {
        let Some((a, b)) = ws.span_range_shared(r) else { return };
        let pad = ((b - a) / 10).max(100);
        st.view.fit(a - pad, b + pad, self.plot_width);
        self.show_span_row(st, ws, r);
    }

    /// Unfolds the groups `span`'s lane is in, scrolls its row into view on the next frame and
    /// flashes the lane.
    pub fn show_span_row(&mut self, st: &mut TimelineState, ws: &Workspace, r: SpanRef) {
        let Some(s) = ws.store(r.trace) else { return };
        let m = s.span_meta(r.span);
        self.scroll_to_target(st, ws, ScrollTarget { trace: r.trace, lane: m.lane, depth: Some(m.depth as u32) });
    }

    /// Shows lane `lane` of trace `id`: unfolds the groups it is in, scrolls it into view on
    /// the next frame and flashes it.
    pub fn reveal_lane(&mut self, st: &mut TimelineState, ws: &Workspace, id: TraceId, lane: u32) {
        self.scroll_to_target(st, ws, ScrollTarget { trace: id, lane, depth: None });
    }

    fn scroll_to_target(&mut self, st: &mut TimelineState, ws: &Workspace, target: ScrollTarget) {
        if ws.trace(target.trace).is_none() {
            return;
        }
        st.unfold_to(ws, target.trace, target.lane);
        self.scroll_to = Some(target);
        self.flash = Some((target.trace, target.lane, std::time::Instant::now()));
    }

    /// Scrolls the laid-out rows so `target` is visible in a body `body_h` tall; false when its
    /// lane is not laid out (yet).
    pub(super) fn scroll_to_row(&self, st: &mut TimelineState, target: ScrollTarget, body_h: f32) -> bool {
        let key = (target.trace, target.lane);
        if st.pinned.contains(&key) {
            // its pinned copy at the top is always in view
            return true;
        }
        let Some(&lane_y) = self.layout.lane_y.get(&key) else { return false };
        let pinned_h = self.layout.pinned_h;
        // the rows under the pinned ones are hidden too
        let room = (body_h - pinned_h).max(ROW_H);
        let row_y = lane_y + target.depth.unwrap_or(0) as f32 * ROW_H;
        let ctx = (CONTEXT_ROWS * ROW_H).min(((room - ROW_H) / 2.0).max(0.0));
        let (want0, want1) = (row_y - ctx, row_y + ROW_H + ctx);
        let visible = |scroll: f32| want0 >= scroll + pinned_h && want1 <= scroll + body_h;
        if visible(st.scroll_y) {
            return true;
        }
        // the lane's top at a third of the view reads best (its outer spans above the target);
        // a row too deep for that is centred instead
        let lane_top = (lane_y - pinned_h - room * 0.3).max(0.0);
        st.scroll_y = if visible(lane_top) { lane_top } else { (row_y + ROW_H / 2.0 - pinned_h - room / 2.0).max(0.0) };
        true
    }

    /// The content rows visible below the pinned ones in the last frame, scrolled as `st`:
    /// `[top, bottom)` in layout coordinates (`Layout::lane_y`).
    pub fn visible_rows(&self, st: &TimelineState) -> (f32, f32) {
        (st.scroll_y + self.layout.pinned_h, st.scroll_y + self.last_plot().height())
    }
}
