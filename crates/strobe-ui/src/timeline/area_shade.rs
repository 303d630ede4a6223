//! The area selection's shade: over the lanes it took only, as Perfetto draws it, not the
//! whole height of the timeline (the rows it skipped are not in its table).

use super::layout::{Layout, RowKind};
use super::TimelineState;
use crate::commands::Selection;
use crate::workspace::Workspace;
use egui::Rect;
use std::collections::HashSet;

impl Layout {
    /// The screen rectangles the area selection shades in a frame whose body and plot are
    /// `body` and `plot`: one per run of adjacent selected lanes, clipped to the visible rows.
    pub fn area_rects(&self, st: &TimelineState, ws: &Workspace, sel: &Selection, body: Rect, plot: Rect) -> Vec<Rect> {
        let Some((t0, t1)) = sel.range else { return Vec::new() };
        let (xa, xb) = (st.view.x_of(t0, plot.min.x).max(plot.min.x), st.view.x_of(t1, plot.min.x).min(plot.max.x));
        if xb <= xa {
            return Vec::new();
        }
        let taken: HashSet<_> = sel.range_lanes.iter().copied().collect();
        let pinned_bottom = body.min.y + self.pinned_h;
        let mut out: Vec<Rect> = Vec::new();
        for r in &self.rows {
            let RowKind::Lane { ti, lane, pinned } = r.kind else { continue };
            let Some(t) = ws.traces.get(ti) else { continue };
            if !taken.contains(&(t.id, lane)) {
                continue;
            }
            let y0 = body.min.y + self.row_y(r, st.scroll_y);
            // a scrolling row shows only below the pinned ones
            let top = if pinned { body.min.y } else { pinned_bottom };
            let (y0, y1) = (y0.max(top), (y0 + r.h).min(body.max.y));
            if y1 <= y0 {
                continue;
            }
            match out.last_mut() {
                Some(last) if (last.max.y - y0).abs() < 0.5 => last.max.y = y1,
                _ => out.push(Rect::from_x_y_ranges(xa..=xb, y0..=y1)),
            }
        }
        out
    }
}
