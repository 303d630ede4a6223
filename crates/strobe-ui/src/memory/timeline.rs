//! Active-memory timeline: every allocation a band, stacked bottom-up in allocation order over
//! trace positions, with reserved bytes as a line above. No top-N cap: each pixel column shows
//! the allocations alive at the position where allocated bytes peak within the entries the
//! column stands for (so no peak is lost when zoomed out), and the picture is rasterised into
//! a texture only when the view, the size or the selection changes — a frame that changes
//! nothing only draws the texture. Drag to brush-zoom, scroll to zoom, double-click to reset,
//! click a band for its stack and its alloc and free entries.

use crate::jobs::{take_ready, Pending};
use egui::{Color32, ColorImage, Pos2, Rect, Sense, Stroke, TextureHandle, TextureOptions, Vec2};
use rayon::prelude::*;
use std::sync::Arc;
use strobe_analysis::memory::{bytes, AllocationTimeline, StackSweep};

/// Allocations above which even the first raster is made on a worker, so the frame a big
/// snapshot arrives in stays short (the plot shows the reserved line until the picture lands).
const BIG_TIMELINE: usize = 100_000;

/// The picture of one view: a W×H raster and the position each column shows.
pub struct Raster {
    pub width: usize,
    pub height: usize,
    pub pixels: Vec<Color32>,
    /// Position shown by each column.
    pub column_pos: Vec<usize>,
    /// Pixel rows painted plus allocs and frees swept — how much work the raster did.
    pub bands_painted: usize,
}

/// What a raster shows: positions `[k0, k1)` in `w`×`h` pixels, `y_max` bytes at the top, the
/// selected allocation painted white.
#[derive(Clone, Copy, PartialEq, Debug)]
pub struct RasterKey {
    pub k0: f64,
    pub k1: f64,
    pub w: usize,
    pub h: usize,
    pub y_max: f64,
    pub selected: Option<usize>,
}

pub fn band_color(tl: &AllocationTimeline, i: usize) -> Color32 {
    let a = &tl.allocs[i];
    // one hue per call site, so one layer's buffers read as one colour; alternate lightness so
    // neighbours of the same site stay apart
    let mut h = (a.stack as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (a.stream as u64).rotate_left(17);
    h ^= h >> 29;
    let hue = (h % 360) as f32 / 360.0;
    let light = if i.is_multiple_of(2) { 0.55 } else { 0.45 };
    egui::ecolor::Hsva::new(hue, 0.55, light + 0.2, 1.0).into()
}

/// Positions `[a, b)` that pixel column `x` of `w` stands for in the view `[k0, k1)`.
fn column_range(k0: f64, k1: f64, w: usize, x: usize) -> (usize, usize) {
    let span = (k1 - k0).max(1e-9);
    let a = (k0 + span * x as f64 / w as f64).floor().max(0.0) as usize;
    let b = ((k0 + span * (x + 1) as f64 / w as f64).floor() as usize).max(a + 1);
    (a, b)
}

/// The position column `x` shows: where allocated bytes peak among its entries.
fn column_position(tl: &AllocationTimeline, k0: f64, k1: f64, w: usize, x: usize) -> usize {
    let (a, b) = column_range(k0, k1, w, x);
    tl.peak_in(a, b.min(tl.len + 1))
}

/// Rasterises what `key` asks for. Each core sweeps forward over its share of the columns
/// (allocs and frees in between); each pixel row of a column takes the band covering its centre.
pub fn rasterize(tl: &AllocationTimeline, key: &RasterKey) -> Raster {
    let RasterKey { k0, k1, w, h, y_max, selected } = *key;
    let column_pos: Vec<usize> = (0..w).map(|x| column_position(tl, k0, k1, w, x)).collect();
    let bpp = y_max.max(1.0) / h as f64;
    // one sweep per core over its share of the columns (each starts from an interval query)
    let parts = rayon::current_num_threads().clamp(1, 8).min(w.max(1));
    let chunk = w.div_ceil(parts);
    let painted: Vec<(Vec<Color32>, usize)> = column_pos
        .par_chunks(chunk.max(1))
        .map(|cols| {
            let mut out = vec![Color32::TRANSPARENT; cols.len() * h];
            let mut sweep = StackSweep::new(tl, cols.first().copied().unwrap_or(0));
            let mut rows_painted = 0;
            for (cx, &k) in cols.iter().enumerate() {
                sweep.advance_to(k);
                let top = sweep.total();
                let mut last: Option<(usize, Color32)> = None;
                for row in 0..h {
                    let y = ((row as f64 + 0.5) * bpp) as i64;
                    if y >= top {
                        break;
                    }
                    let Some(i) = sweep.band_at(y) else { break };
                    let c = match last {
                        Some((j, c)) if j == i => c,
                        _ => {
                            let c = if Some(i) == selected { Color32::WHITE } else { band_color(tl, i) };
                            last = Some((i, c));
                            c
                        }
                    };
                    out[cx * h + row] = c;
                    rows_painted += 1;
                }
            }
            (out, rows_painted + sweep.events)
        })
        .collect();
    let mut pixels = vec![Color32::TRANSPARENT; w * h];
    let mut work = 0;
    for (ci, (out, n)) in painted.into_iter().enumerate() {
        work += n;
        for (cx, col) in out.chunks(h).enumerate() {
            let x = ci * chunk + cx;
            for (row, &c) in col.iter().enumerate() {
                pixels[(h - 1 - row) * w + x] = c;
            }
        }
    }
    Raster { width: w, height: h, pixels, column_pos, bands_painted: work }
}

/// What a user did in the timeline that the rest of the pane follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimelineAction {
    /// Show the allocator state after this many entries.
    Seek(usize),
}

pub struct ActiveMemoryView {
    /// Visible positions `[view.0, view.1)`.
    pub view: (f64, f64),
    pub selected: Option<usize>,
    /// What the texture shows; drawn mapped onto the current view until a fresh one arrives.
    key: Option<RasterKey>,
    stale: bool,
    texture: Option<TextureHandle>,
    /// A raster being made on a worker thread, for this key.
    pending: Option<(RasterKey, Pending<(Raster, f64)>)>,
    /// How long the last raster took (ms): above a frame's budget, the next one goes to a
    /// worker and frames keep drawing the old picture, moved and scaled to the new view.
    pub last_raster_ms: f64,
    brush_from: Option<f32>,
    /// Columns and bands of the last raster (tests and the bench read them).
    pub columns_drawn: usize,
    pub bands_painted: usize,
    pub rasters_made: usize,
    /// Where the plot was drawn in the last frame (tests aim at it).
    pub plot_rect: Rect,
}

impl ActiveMemoryView {
    pub fn new(tl: &AllocationTimeline) -> ActiveMemoryView {
        ActiveMemoryView {
            view: (0.0, tl.len as f64 + 1.0),
            selected: None,
            key: None,
            stale: false,
            texture: None,
            pending: None,
            last_raster_ms: 0.0,
            brush_from: None,
            columns_drawn: 0,
            bands_painted: 0,
            rasters_made: 0,
            plot_rect: Rect::NOTHING,
        }
    }

    /// Forces the next frame to rasterise again (benchmarks).
    pub fn invalidate(&mut self) {
        self.stale = true;
    }

    /// Whether a raster is being made on a worker.
    pub fn raster_pending(&self) -> bool {
        self.pending.is_some()
    }

    pub fn reset(&mut self, tl: &AllocationTimeline) {
        self.view = (0.0, tl.len as f64 + 1.0);
    }

    /// Centres the view on position `k` (keeping the zoom, or showing ±5 % when whole).
    pub fn show_position(&mut self, tl: &AllocationTimeline, k: usize) {
        let full = tl.len as f64 + 1.0;
        let mut span = self.view.1 - self.view.0;
        if span >= full * 0.99 {
            span = (full * 0.1).max(50.0);
        }
        let c = k as f64 + 0.5;
        let k0 = (c - span / 2.0).clamp(0.0, (full - span).max(0.0));
        self.view = (k0, (k0 + span).min(full));
    }

    fn install(&mut self, ctx: &egui::Context, key: RasterKey, r: Raster, ms: f64) {
        self.columns_drawn = r.width;
        self.bands_painted = r.bands_painted;
        self.rasters_made += 1;
        self.last_raster_ms = ms;
        let img = ColorImage {
            size: [r.width, r.height],
            pixels: r.pixels,
            source_size: Vec2::new(r.width as f32, r.height as f32),
        };
        match &mut self.texture {
            Some(t) => t.set(img, TextureOptions::NEAREST),
            None => self.texture = Some(ctx.load_texture("strobe_active_memory", img, TextureOptions::NEAREST)),
        }
        self.key = Some(key);
    }

    /// Moves the view to `k` only when it is off screen.
    pub fn show_position_if_hidden(&mut self, tl: &AllocationTimeline, k: usize) {
        let x = k as f64 + 0.5;
        if x < self.view.0 || x >= self.view.1 {
            self.show_position(tl, k);
        }
    }
    pub fn ui(
        &mut self,
        ui: &mut egui::Ui,
        s: &strobe_model::memory::MemorySnapshot,
        tl: &Arc<AllocationTimeline>,
        cursor: usize,
        ooms: &[usize],
        height: f32,
    ) -> Option<TimelineAction> {
        let (outer, resp) = ui.allocate_exact_size(Vec2::new(ui.available_width(), height), Sense::click_and_drag());
        let plot = Rect::from_min_max(outer.min + Vec2::new(70.0, 4.0), outer.max - Vec2::new(4.0, 18.0));
        self.plot_rect = plot;
        let painter = ui.painter_at(outer);
        painter.rect_filled(plot, 0.0, Color32::from_gray(20));
        let pf = PlotFrame::new(ui.ctx(), plot, tl, self.view);
        self.refresh_raster(ui.ctx(), tl, pf.raster_key(self.selected));
        if let (Some(t), Some(tk)) = (&self.texture, self.key) {
            // the picture of view tk, placed where its positions and bytes fall in this view
            let r =
                Rect::from_min_max(Pos2::new(pf.x_of(tk.k0), pf.y_of(tk.y_max)), Pos2::new(pf.x_of(tk.k1), plot.max.y));
            ui.painter_at(plot).image(t.id(), r, Rect::from_min_max(Pos2::ZERO, Pos2::new(1.0, 1.0)), Color32::WHITE);
        }
        draw_reserved(&painter, &pf, tl);
        draw_markers(&painter, &pf, cursor, ooms);
        draw_axes(&painter, &pf, s, tl);
        self.interact(ui, &resp, &painter, &pf, s, tl)
    }

    /// Installs a raster a worker finished, and asks for a new one when the view changed: made
    /// in this frame when the last one was quick, else on a worker.
    fn refresh_raster(&mut self, ctx: &egui::Context, tl: &Arc<AllocationTimeline>, key: RasterKey) {
        if let Some((pk, (r, ms))) = take_ready(&mut self.pending) {
            self.install(ctx, pk, r, ms);
        }
        if (self.key == Some(key) && !self.stale) || self.pending.is_some() {
            return;
        }
        self.stale = false;
        // a raster that may not fit a frame goes to a worker: after one that took over
        // 8 ms, and the first of a big timeline (the frame the snapshot arrives in)
        let big = tl.allocs.len() > BIG_TIMELINE;
        if (self.texture.is_none() && !big) || (self.texture.is_some() && self.last_raster_ms <= 8.0) {
            let t0 = std::time::Instant::now();
            let r = rasterize(tl, &key);
            self.install(ctx, key, r, t0.elapsed().as_secs_f64() * 1e3);
        } else {
            let tl = Arc::clone(tl);
            let job = Pending::spawn_ui(ctx, move || {
                let t0 = std::time::Instant::now();
                let r = rasterize(&tl, &key);
                (r, t0.elapsed().as_secs_f64() * 1e3)
            });
            self.pending = Some((key, job));
        }
    }

    /// Brush-zoom, click to select, double-click to reset, scroll to zoom, hover for a tooltip.
    fn interact(
        &mut self,
        ui: &egui::Ui,
        resp: &egui::Response,
        painter: &egui::Painter,
        pf: &PlotFrame,
        s: &strobe_model::memory::MemorySnapshot,
        tl: &AllocationTimeline,
    ) -> Option<TimelineAction> {
        let mut action = None;
        let (plot, k0, k1) = (pf.plot, pf.k0, pf.k1);
        let full = tl.len as f64 + 1.0;
        if resp.drag_started() {
            // from where the button went down, not where the drag threshold was crossed
            self.brush_from = ui.input(|i| i.pointer.press_origin()).or(resp.interact_pointer_pos()).map(|p| p.x);
        }
        if let (Some(x0), Some(p)) = (self.brush_from, resp.interact_pointer_pos()) {
            if resp.dragged() {
                let r = Rect::from_x_y_ranges(x0.min(p.x)..=x0.max(p.x), plot.y_range());
                painter.rect_filled(r, 0.0, Color32::from_rgba_unmultiplied(120, 160, 255, 50));
            }
        }
        if resp.drag_stopped() {
            if let (Some(x0), Some(p)) = (self.brush_from.take(), resp.interact_pointer_pos()) {
                let (xa, xb) = (x0.min(p.x).max(plot.min.x), x0.max(p.x).min(plot.max.x));
                if xb - xa >= 4.0 {
                    let k_at = |x: f32| k0 + (k1 - k0) * ((x - plot.min.x) / plot.width()) as f64;
                    self.view = (k_at(xa), k_at(xb).max(k_at(xa) + 1.0));
                }
            }
        }
        if resp.double_clicked() {
            self.view = (0.0, full);
        } else if resp.clicked() {
            if let Some((k, band)) = resp.interact_pointer_pos().and_then(|p| pf.hit(tl, p)) {
                self.selected = band;
                action = Some(TimelineAction::Seek(k));
            }
        }
        if resp.hovered() {
            let scroll = ui.input(|i| i.smooth_scroll_delta.y + i.smooth_scroll_delta.x);
            if scroll != 0.0 {
                if let Some(p) = resp.hover_pos() {
                    let f = (p.x - plot.min.x) as f64 / plot.width() as f64;
                    let c = k0 + (k1 - k0) * f;
                    let z = (-scroll as f64 / 200.0).exp();
                    let span = ((k1 - k0) * z).clamp(4.0, full);
                    let n0 = (c - span * f).clamp(0.0, full - span);
                    self.view = (n0, n0 + span);
                }
            }
            if let Some((k, Some(i))) = resp.hover_pos().and_then(|p| pf.hit(tl, p)) {
                band_tooltip(resp, s, tl, k, i);
            }
        }
        action
    }

    /// The selected allocation: sizes, its alloc and free entries (buttons seek to them), stack.
    pub fn selected_ui(
        &mut self,
        ui: &mut egui::Ui,
        s: &strobe_model::memory::MemorySnapshot,
        tl: &AllocationTimeline,
    ) -> Option<TimelineAction> {
        let mut action = None;
        let whole = (0.0, tl.len as f64 + 1.0);
        if self.view != whole && ui.small_button("Whole trace").on_hover_text("or double-click the plot").clicked() {
            self.view = whole;
        }
        let Some(i) = self.selected else {
            ui.weak("Click a band for its stack and its alloc and free entries; drag to zoom, double-click to reset.");
            return None;
        };
        let a = tl.allocs[i];
        ui.horizontal_wrapped(|ui| {
            ui.strong(format!("Allocation of {} at 0x{:x}, stream {}", bytes(a.size), a.addr, a.stream));
            for (what, entry, missing) in [
                ("alloc", a.alloc_entry, "allocated before the trace's first entry"),
                ("free", a.free_entry, "still allocated at the end"),
            ] {
                match entry {
                    Some(e) => {
                        if ui.link(format!("{what}: entry {e}")).clicked() {
                            action = Some(TimelineAction::Seek(e as usize + 1));
                        }
                    }
                    None => {
                        ui.label(missing);
                    }
                }
            }
        });
        super::stack::ui(ui, s, a.stack, "active_memory", 90.0);
        action
    }
}

/// Where the plot lies this frame and what it shows: positions `[k0, k1)` over `w` raster
/// columns, `y_max` bytes at the top.
struct PlotFrame {
    plot: Rect,
    k0: f64,
    k1: f64,
    /// Raster size in physical pixels.
    w: usize,
    h: usize,
    y_max: f64,
}

impl PlotFrame {
    fn new(ctx: &egui::Context, plot: Rect, tl: &AllocationTimeline, (k0, k1): (f64, f64)) -> PlotFrame {
        let ppp = ctx.pixels_per_point();
        let w = ((plot.width() * ppp) as usize).clamp(1, 8192);
        let h = ((plot.height() * ppp) as usize).clamp(1, 4096);
        let a0 = k0.floor().max(0.0) as usize;
        let a1 = (k1.ceil() as usize).min(tl.len + 1).max(a0 + 1);
        let (_, res_hi) = tl.reserved_range(a0, a1);
        let alloc_hi = tl.allocated_max(a0, a1);
        let y_max = (res_hi.max(alloc_hi).max(1) as f64) * 1.05;
        PlotFrame { plot, k0, k1, w, h, y_max }
    }

    fn raster_key(&self, selected: Option<usize>) -> RasterKey {
        RasterKey { k0: self.k0, k1: self.k1, w: self.w, h: self.h, y_max: self.y_max, selected }
    }

    fn x_of(&self, k: f64) -> f32 {
        self.plot.min.x + ((k - self.k0) / (self.k1 - self.k0)) as f32 * self.plot.width()
    }

    fn y_of(&self, b: f64) -> f32 {
        self.plot.max.y - (b / self.y_max) as f32 * self.plot.height()
    }

    /// The position and the band under `pos`.
    fn hit(&self, tl: &AllocationTimeline, pos: Pos2) -> Option<(usize, Option<usize>)> {
        let plot = self.plot;
        if !plot.contains(pos) {
            return None;
        }
        // the column's position as the raster chose it: the peak among its entries
        let x = ((pos.x - plot.min.x) / plot.width() * self.w as f32).floor() as usize;
        let k = column_position(tl, self.k0, self.k1, self.w, x.min(self.w - 1));
        let b = (plot.max.y - pos.y) as f64 / plot.height() as f64 * self.y_max;
        Some((k, tl.band_at(k, b)))
    }
}

/// Reserved bytes: the max over each column's entries, with the column's min..max as a tick.
fn draw_reserved(painter: &egui::Painter, pf: &PlotFrame, tl: &AllocationTimeline) {
    let plot = pf.plot;
    let cols = plot.width().max(1.0) as usize;
    let mut line: Vec<Pos2> = Vec::with_capacity(cols);
    let res_stroke = Stroke::new(1.5, Color32::from_rgb(255, 120, 80));
    for x in 0..cols {
        let (ka, kb) = column_range(pf.k0, pf.k1, cols, x);
        if ka > tl.len {
            break;
        }
        let (lo, hi) = tl.reserved_range(ka, kb.min(tl.len + 1));
        let px = plot.min.x + x as f32 + 0.5;
        let p = Pos2::new(px, pf.y_of(hi as f64));
        if lo < hi {
            painter.line_segment([Pos2::new(px, pf.y_of(lo as f64)), p], res_stroke);
        }
        line.push(p);
    }
    if line.len() > 1 {
        painter.add(egui::Shape::line(line, res_stroke));
    }
}

/// Out-of-memory entries in red, the cursor in yellow.
fn draw_markers(painter: &egui::Painter, pf: &PlotFrame, cursor: usize, ooms: &[usize]) {
    let plot = pf.plot;
    for &o in ooms {
        let x = pf.x_of(o as f64 + 0.5);
        if x >= plot.min.x && x <= plot.max.x {
            painter.line_segment([Pos2::new(x, plot.min.y), Pos2::new(x, plot.max.y)], Stroke::new(2.0, Color32::RED));
        }
    }
    let cx = pf.x_of(cursor as f64 + 0.5);
    if cx >= plot.min.x && cx <= plot.max.x {
        painter.line_segment([Pos2::new(cx, plot.min.y), Pos2::new(cx, plot.max.y)], Stroke::new(1.0, Color32::YELLOW));
    }
}

/// Byte ticks on the left, the first and last entry (with their time) below, the legend on top.
fn draw_axes(
    painter: &egui::Painter,
    pf: &PlotFrame,
    s: &strobe_model::memory::MemorySnapshot,
    tl: &AllocationTimeline,
) {
    let plot = pf.plot;
    let font = egui::FontId::proportional(11.0);
    for i in 0..=4 {
        let b = pf.y_max * i as f64 / 4.0;
        let y = pf.y_of(b);
        painter
            .line_segment([Pos2::new(plot.min.x - 4.0, y), Pos2::new(plot.min.x, y)], Stroke::new(1.0, Color32::GRAY));
        painter.text(
            Pos2::new(plot.min.x - 6.0, y),
            egui::Align2::RIGHT_CENTER,
            bytes(b as u64),
            font.clone(),
            Color32::GRAY,
        );
    }
    let lbl = |k: f64| {
        let k = (k.max(0.0) as usize).min(tl.len);
        match tl.time_at(s, k) {
            Some(t) => {
                let t0 = tl.first_time(s).unwrap_or(t);
                format!("entry {k} · {:.3} s", (t - t0) as f64 / 1e6)
            }
            None => format!("entry {k}"),
        }
    };
    painter.text(
        Pos2::new(plot.min.x, plot.max.y + 2.0),
        egui::Align2::LEFT_TOP,
        lbl(pf.k0),
        font.clone(),
        Color32::GRAY,
    );
    painter.text(
        Pos2::new(plot.max.x, plot.max.y + 2.0),
        egui::Align2::RIGHT_TOP,
        lbl(pf.k1 - 1.0),
        font,
        Color32::GRAY,
    );
    painter.text(
        plot.min + Vec2::new(6.0, 4.0),
        egui::Align2::LEFT_TOP,
        "active memory (bands: allocations) · reserved (line)",
        egui::FontId::proportional(12.0),
        Color32::from_gray(200),
    );
}

/// The hovered allocation: size, address, stream, entry and the top of its stack.
fn band_tooltip(
    resp: &egui::Response,
    s: &strobe_model::memory::MemorySnapshot,
    tl: &AllocationTimeline,
    k: usize,
    i: usize,
) {
    let a = tl.allocs[i];
    resp.clone().on_hover_ui_at_pointer(|ui| {
        ui.label(format!("{} at 0x{:x}, stream {} (entry {k})", bytes(a.size), a.addr, a.stream));
        for f in super::stack::user_frames(s, a.stack, 4) {
            ui.monospace(super::stack::line(f));
        }
    });
}
