//! The time axis: the visible window of the shared axis, and how one trace's own clock maps
//! onto it (`Trace::to_shared` / `to_local`, the rank alignment offset).

use crate::workspace::{SpanRef, Trace, Workspace};

pub const MIN_NPP: f64 = 0.01;
pub const MAX_NPP: f64 = 1e13;

/// The visible time window: `t0` is relative to `origin` (absolute ns) so f64 keeps ns
/// precision even for epoch-based clocks; `npp` is ns per pixel.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct View {
    pub origin: i64,
    pub t0: f64,
    pub npp: f64,
}

impl Default for View {
    fn default() -> Self {
        View { origin: 0, t0: 0.0, npp: 1000.0 }
    }
}

impl View {
    /// Absolute [t0, t1) shown by `width` pixels.
    pub fn window(&self, width: f32) -> (i64, i64) {
        let a = self.origin.saturating_add(self.t0.floor() as i64);
        let b = self.origin.saturating_add((self.t0 + self.npp * width as f64).ceil() as i64);
        (a, b.max(a + 1))
    }

    pub fn fit(&mut self, t0: i64, t1: i64, width: f32) {
        let w = width.max(10.0) as f64;
        self.t0 = (t0 - self.origin) as f64;
        self.npp = ((t1 - t0).max(1) as f64 / w).max(MIN_NPP);
    }

    /// Zoom by `factor` (< 1 zooms in) keeping the time under pixel `px` still.
    pub fn zoom_at(&mut self, factor: f64, px: f32) {
        let t = self.t0 + px as f64 * self.npp;
        self.npp = (self.npp * factor).clamp(MIN_NPP, MAX_NPP);
        self.t0 = t - px as f64 * self.npp;
    }

    /// Keeps the window on `[a, b)` (the workspace's extent, shared axis) with a margin of
    /// a tenth of it each side: zoom out stops at the whole extent plus its margins, and a
    /// pan stops where the margin ends (a window wider than the extent is centred).
    pub fn bound_to(&mut self, (a, b): (i64, i64), width: f32) {
        let w = width.max(10.0) as f64;
        let span = (b - a).max(1) as f64;
        let margin = span / 10.0;
        let max_npp = ((span + 2.0 * margin) / w).max(MIN_NPP);
        self.npp = self.npp.min(max_npp);
        let (lo, hi) = ((a - self.origin) as f64 - margin, (b - self.origin) as f64 + margin);
        let win = self.npp * w;
        self.t0 = if win >= hi - lo { (lo + hi - win) / 2.0 } else { self.t0.clamp(lo, hi - win) };
    }

    /// This (shared-axis) view as trace `t`'s own clock sees it: the same pixels, its times.
    pub fn for_trace(&self, t: &Trace) -> View {
        View { origin: self.origin - t.offset_ns, ..*self }
    }

    #[inline]
    pub fn x_of(&self, t: i64, left: f32) -> f32 {
        left + (((t - self.origin) as f64 - self.t0) / self.npp) as f32
    }

    #[inline]
    pub fn t_of(&self, x: f32, left: f32) -> i64 {
        self.origin + (self.t0 + (x - left) as f64 * self.npp).round() as i64
    }
}

/// The one mapping between a trace's own clock and the shared axis the view, the ruler, marks
/// and area selections are on: every zoom, reveal and hit test goes through it.
impl Trace {
    #[inline]
    pub fn to_shared(&self, t: i64) -> i64 {
        t + self.offset_ns
    }

    #[inline]
    pub fn to_local(&self, t: i64) -> i64 {
        t - self.offset_ns
    }

    /// A trace-local range [a, b) on the shared axis.
    pub fn range_to_shared(&self, (a, b): (i64, i64)) -> (i64, i64) {
        (self.to_shared(a), self.to_shared(b))
    }
}

impl Workspace {
    /// Where span `r` is on the shared axis.
    pub fn span_range_shared(&self, r: SpanRef) -> Option<(i64, i64)> {
        let t = self.trace(r.trace)?;
        Some(t.range_to_shared((t.store.span_start(r.span), t.store.span_end(r.span))))
    }
}
