//! The timeline: lanes grouped per trace (rank) → GPU device (bands, streams, copy engines,
//! annotations) / CPU process (threads, NVTX, async) / counters, drawn from the store's
//! level-of-detail query only. Preprocess then draw: every visible lane's LOD items become
//! quads of one mesh plus a few labels; off-screen lanes cost nothing.

pub mod colors;
mod memory_level;
pub mod ruler;

use crate::commands::{Command, Highlight, Selection};
use crate::workspace::{SpanRef, Trace, Workspace};
use colors::*;
use egui::{pos2, vec2, Align2, Color32, FontId, Key, Mesh, Pos2, Rect, Sense, Shape, Stroke, Ui};
use std::collections::{BTreeMap, HashMap, HashSet};
use strobe_analysis::idle::IdleGap;
use strobe_analysis::report::fmt_ns;
use strobe_model::{LaneKind, SpanKind};
use strobe_store::LodItem;

pub const ROW_H: f32 = 18.0;
pub const LABEL_W: f32 = 230.0;
pub const RULER_H: f32 = 24.0;
pub const HEADER_H: f32 = 20.0;
pub const BANDS_H: f32 = 22.0;
pub const COUNTER_H: f32 = 36.0;
/// The GPU memory water level: taller than a counter, it carries two series and the peak.
pub const MEMORY_H: f32 = 48.0;
const LANE_PAD: f32 = 3.0;

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

    #[inline]
    pub fn x_of(&self, t: i64, left: f32) -> f32 {
        left + (((t - self.origin) as f64 - self.t0) / self.npp) as f32
    }

    #[inline]
    pub fn t_of(&self, x: f32, left: f32) -> i64 {
        self.origin + (self.t0 + (x - left) as f64 * self.npp).round() as i64
    }
}

pub const MIN_NPP: f64 = 0.01;
pub const MAX_NPP: f64 = 1e13;

#[derive(Clone, Debug, PartialEq)]
pub enum RowKind {
    Header {
        key: String,
        label: String,
        level: u8,
        collapsed: bool,
    },
    Lane {
        trace: usize,
        lane: u32,
        depths: u32,
    },
    Bands {
        trace: usize,
        device: i64,
    },
    Counter {
        trace: usize,
        series: usize,
    },
    /// A series derived from the trace (queue length, memcpy bandwidth), index into
    /// `Derived::series`.
    Series {
        trace: usize,
        series: usize,
    },
    /// A GPU's memory water level: allocated and reserved bytes on one scale from 0, the
    /// allocated peak marked.
    MemoryLevel {
        trace: usize,
        device: i64,
    },
    /// A collapsed trace (rank) as one lane: GPU compute / comm / memory busy and long idle gaps.
    RankSummary {
        trace: usize,
    },
}

#[derive(Clone, Debug)]
pub struct Row {
    pub kind: RowKind,
    /// Offset from the top of the lane area (before scrolling).
    pub y: f32,
    pub h: f32,
}

/// What the pointer is over.
#[derive(Clone, Copy, Debug)]
enum Hover {
    Item { trace: usize, item: LodItem, span: u32 },
    Gap { trace: usize, gap: IdleGap },
    Band { device: i64, overlapped: bool, iv: (i64, i64) },
}

/// Counts from the last frame, for tests and the benchmark.
#[derive(Clone, Copy, Debug, Default)]
pub struct FrameStats {
    pub lanes_drawn: usize,
    pub items: usize,
    pub folded: usize,
    pub labels: usize,
}

pub struct TimelineView {
    pub view: View,
    /// Width of the plot area in the last frame (px).
    pub plot_width: f32,
    pub scroll_y: f32,
    pub collapsed: HashSet<String>,
    /// Scroll this trace's header to the top on the next frame.
    pub scroll_to_trace: Option<usize>,
    /// CPU process groups start folded (ranks side by side: their GPUs one above the other).
    pub fold_cpu_groups: bool,
    pub show_bands: bool,
    pub marks: Vec<i64>,
    pub stats: FrameStats,
    /// Fit the whole workspace at the next frame (after a load).
    pub fit_pending: bool,
    /// Scroll so this lane is visible at the next frame.
    pub reveal_lane: Option<(usize, u32)>,
    area_drag: Option<(Pos2, i64)>,
    pub rows: Vec<Row>,
    lane_y: HashMap<(usize, u32), f32>,
    content_h: f32,
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
            marks: Vec::new(),
            stats: FrameStats::default(),
            fit_pending: true,
            reveal_lane: None,
            area_drag: None,
            rows: Vec::new(),
            lane_y: HashMap::new(),
            content_h: 0.0,
            last_plot: Rect::NOTHING,
        }
    }
}

fn lane_group_order(k: &LaneKind) -> u8 {
    match k {
        LaneKind::GpuStream { .. } => 0,
        LaneKind::CopyEngine { .. } => 1,
        LaneKind::GpuAnnotation { .. } => 2,
        LaneKind::CpuThread { .. } => 3,
        LaneKind::Nvtx { .. } => 4,
        LaneKind::Async { .. } => 5,
    }
}

impl TimelineView {
    /// Lays out the rows of every open trace (cheap: lanes are few).
    pub fn layout(&mut self, ws: &Workspace) {
        let mut rows = Vec::new();
        let mut y = 0.0f32;
        fn push(rows: &mut Vec<Row>, y: &mut f32, kind: RowKind, h: f32) -> f32 {
            let at = *y;
            rows.push(Row { kind, y: at, h });
            *y += h;
            at
        }
        /// A row per lane, as tall as its nesting; where each starts goes to `lane_y`.
        fn push_lanes(
            rows: &mut Vec<Row>,
            y: &mut f32,
            lane_y: &mut HashMap<(usize, u32), f32>,
            s: &strobe_store::Store,
            ti: usize,
            lanes: &[u32],
        ) {
            for &l in lanes {
                let depths = s.lane_index()[l as usize].max_depth + 1;
                let kind = RowKind::Lane { trace: ti, lane: l, depths };
                lane_y.insert((ti, l), push(rows, y, kind, depths as f32 * ROW_H + LANE_PAD));
            }
        }
        self.lane_y.clear();
        for (ti, t) in ws.traces.iter().enumerate() {
            let s = &*t.store;
            let key = format!("t{ti}");
            let collapsed = self.is_collapsed(&key);
            let label = if t.offset_ns != 0 {
                format!("{}  (aligned {:+.3} ms)", t.label, t.offset_ns as f64 / 1e6)
            } else {
                t.label.clone()
            };
            push(&mut rows, &mut y, RowKind::Header { key, label, level: 0, collapsed }, HEADER_H);
            if collapsed {
                if !t.derived.unions.is_empty() {
                    push(&mut rows, &mut y, RowKind::RankSummary { trace: ti }, BANDS_H);
                }
                continue;
            }
            let mut devices: BTreeMap<i64, Vec<u32>> = BTreeMap::new();
            let mut procs: Vec<(String, Vec<u32>)> = Vec::new();
            for lane in s.lanes_in_order() {
                let li = s.lane_index()[lane as usize];
                if li.member_end == li.member_begin {
                    continue;
                }
                let kind = &s.lanes[lane as usize].kind;
                if let Some(d) = kind.device() {
                    devices.entry(d).or_default().push(lane);
                } else {
                    let pid = match kind {
                        LaneKind::CpuThread { pid, .. } | LaneKind::Nvtx { pid, .. } | LaneKind::Async { pid, .. } => {
                            pid.clone()
                        }
                        _ => unreachable!(),
                    };
                    let pname = s.names.processes.iter().rev().find(|(p, _)| *p == pid).map(|(_, n)| n.clone());
                    let label = match pname {
                        Some(n) => format!("CPU · {n} (pid {pid})"),
                        None => format!("CPU · pid {pid}"),
                    };
                    match procs.iter_mut().find(|(l, _)| *l == label) {
                        Some((_, v)) => v.push(lane),
                        None => procs.push((label, vec![lane])),
                    }
                }
            }
            let has_device_rows: HashSet<i64> = t.derived.unions.iter().map(|u| u.device).collect();
            for (d, mut lanes) in devices {
                lanes.sort_by_key(|&l| (lane_group_order(&s.lanes[l as usize].kind), s.lanes[l as usize].kind.clone()));
                let key = format!("t{ti}/gpu{d}");
                let collapsed = self.is_collapsed(&key);
                let dev_name =
                    s.meta.devices.iter().find(|x| x.id == d).map(|x| format!(" · {}", x.name)).unwrap_or_default();
                push(
                    &mut rows,
                    &mut y,
                    RowKind::Header { key, label: format!("GPU {d}{dev_name}"), level: 1, collapsed },
                    HEADER_H,
                );
                if collapsed {
                    continue;
                }
                if self.show_bands && has_device_rows.contains(&d) {
                    push(&mut rows, &mut y, RowKind::Bands { trace: ti, device: d }, BANDS_H);
                }
                push_lanes(&mut rows, &mut y, &mut self.lane_y, s, ti, &lanes);
                if t.derived.memory.iter().any(|m| m.device == d) {
                    push(&mut rows, &mut y, RowKind::MemoryLevel { trace: ti, device: d }, MEMORY_H);
                }
            }
            for (pi, (label, lanes)) in procs.into_iter().enumerate() {
                let key = format!("t{ti}/p{pi}");
                let collapsed = self.is_collapsed(&key);
                push(&mut rows, &mut y, RowKind::Header { key, label, level: 1, collapsed }, HEADER_H);
                if collapsed {
                    continue;
                }
                push_lanes(&mut rows, &mut y, &mut self.lane_y, s, ti, &lanes);
            }
            // a GPU's own series are drawn in its group (MemoryLevel), not here
            if s.counters.iter().any(|c| c.device.is_none()) {
                let key = format!("t{ti}/counters");
                let collapsed = self.is_collapsed(&key);
                push(
                    &mut rows,
                    &mut y,
                    RowKind::Header { key, label: "Counters".into(), level: 1, collapsed },
                    HEADER_H,
                );
                if !collapsed {
                    for (i, _) in s.counters.iter().enumerate().filter(|(_, c)| c.device.is_none()) {
                        push(&mut rows, &mut y, RowKind::Counter { trace: ti, series: i }, COUNTER_H);
                    }
                }
            }
            if !t.derived.series.is_empty() {
                let key = format!("+t{ti}/series");
                let collapsed = self.is_collapsed(&key);
                let label = "Queue length per stream · memcpy bandwidth (HTA)".to_string();
                push(&mut rows, &mut y, RowKind::Header { key, label, level: 1, collapsed }, HEADER_H);
                if !collapsed {
                    for i in 0..t.derived.series.len() {
                        push(&mut rows, &mut y, RowKind::Series { trace: ti, series: i }, COUNTER_H);
                    }
                }
            }
        }
        self.content_h = y;
        self.rows = rows;
    }

    /// The view as trace `t`'s own clock sees it: its alignment offset moves its times.
    pub fn tview(&self, t: &Trace) -> View {
        View { origin: self.view.origin - t.offset_ns, ..self.view }
    }

    /// Whether a group is folded. Groups that start folded ("+" keys; CPU process groups while
    /// `fold_cpu_groups`) are open when in `collapsed`, the others folded: a click on a header
    /// toggles its key either way.
    pub fn is_collapsed(&self, key: &str) -> bool {
        let cpu_group = key
            .split_once('/')
            .and_then(|(_, g)| g.strip_prefix('p'))
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
        let starts_folded = key.starts_with('+') || (self.fold_cpu_groups && cpu_group);
        self.collapsed.contains(key) != starts_folded
    }

    /// Expands trace `ti` and scrolls its header to the top (on the next layout).
    pub fn show_trace(&mut self, ti: usize) {
        self.collapsed.remove(&format!("t{ti}"));
        self.scroll_to_trace = Some(ti);
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
        let Some(s) = ws.store(r.trace) else { return };
        let off = ws.traces[r.trace].offset_ns;
        let (a, b) = (s.span_start(r.span) + off, s.span_end(r.span) + off);
        let d = (b - a).max(1);
        let (w0, w1) = self.view.window(self.plot_width);
        let px = d as f64 / self.view.npp;
        if a < w0 || b > w1 || px < 20.0 || px > self.plot_width as f64 * 0.9 {
            let pad = d.max(2_000);
            self.view.fit(a - pad, b + pad, self.plot_width);
        }
        self.reveal_lane = Some((r.trace, s.span_meta(r.span).lane));
    }

    /// Where a span's start row is on screen in the last frame (its middle, at the start
    /// when the span is wider than the plot): what a click on it would hit. None when its
    /// lane is not laid out (collapsed) or it lies outside the plot.
    pub fn span_pos(&self, ws: &Workspace, r: SpanRef) -> Option<Pos2> {
        let st = ws.store(r.trace)?;
        let m = st.span_meta(r.span);
        let y = self.lane_y.get(&(r.trace, m.lane))?;
        let plot = self.last_plot;
        let tv = self.tview(&ws.traces[r.trace]);
        let (x0, x1) = (tv.x_of(st.span_start(r.span), plot.min.x), tv.x_of(st.span_end(r.span), plot.min.x));
        let x = ((x0 + x1) / 2.0).clamp(x0.max(plot.min.x) + 1.0, x1.min(plot.max.x) - 1.0);
        let p = pos2(x, plot.min.y - self.scroll_y + y + m.depth as f32 * ROW_H + ROW_H / 2.0);
        plot.contains(p).then_some(p)
    }

    pub fn ui(&mut self, ui: &mut Ui, ws: &Workspace, sel: &Selection, hl: &Highlight, cmds: &mut Vec<Command>) {
        let full = ui.available_rect_before_wrap();
        let ruler_rect = Rect::from_min_max(full.min, pos2(full.max.x, full.min.y + RULER_H));
        let body = Rect::from_min_max(pos2(full.min.x, ruler_rect.max.y), full.max);
        let plot = Rect::from_min_max(pos2(body.min.x + LABEL_W, body.min.y), body.max);
        self.plot_width = plot.width().max(10.0);
        self.last_plot = plot;
        if self.fit_pending && !ws.traces.is_empty() {
            self.fit_all(ws);
            self.fit_pending = false;
        }
        self.layout(ws);
        if let Some(ti) = self.scroll_to_trace.take() {
            let key = format!("t{ti}");
            if let Some(r) = self.rows.iter().find(|r| matches!(&r.kind, RowKind::Header { key: k, .. } if *k == key)) {
                self.scroll_y = r.y;
            }
        }
        if let Some(key) = self.reveal_lane.take() {
            if let Some(&y) = self.lane_y.get(&key) {
                if y < self.scroll_y || y + ROW_H > self.scroll_y + body.height() {
                    self.scroll_y = (y - body.height() * 0.3).max(0.0);
                }
            }
        }
        let resp = ui.interact(body, ui.scope_id().with("timeline_body"), Sense::click_and_drag());
        let ruler_resp = ui.interact(ruler_rect, ui.scope_id().with("timeline_ruler"), Sense::click_and_drag());
        self.handle_input(ui, &resp, &ruler_resp, plot, ws, sel, cmds);
        let max_scroll = (self.content_h - body.height() + 40.0).max(0.0);
        self.scroll_y = self.scroll_y.clamp(0.0, max_scroll);

        let painter = ui.painter_at(full);
        let bg = ui.visuals().extreme_bg_color;
        painter.rect_filled(body, 0.0, bg);
        let pointer = ui.input(|i| i.pointer.hover_pos()).filter(|p| body.contains(*p));
        let mut hover: Option<Hover> = None;
        let mut stats = FrameStats::default();

        // grid lines under everything
        let ticks = ruler::ticks(&self.view, plot);
        for (x, _, major) in &ticks {
            if *major {
                painter.vline(*x, body.y_range(), Stroke::new(1.0, ui.visuals().faint_bg_color.gamma_multiply(1.6)));
            }
        }

        let plot_painter = ui.painter_at(plot);
        let mut mesh = Mesh::default();
        let mut labels: Vec<(Pos2, String, Color32)> = Vec::new();
        let mut outlines: Vec<(Rect, Color32, f32)> = Vec::new();
        let char_w = ui
            .fonts_mut(|f| {
                f.layout_no_wrap("0000000000".into(), FontId::monospace(10.0), Color32::WHITE).size().x / 10.0
            })
            .max(1.0);
        let top = body.min.y - self.scroll_y;

        // device-wide idle tint behind the stream lanes
        if self.show_bands {
            let mut dev_ranges: HashMap<(usize, i64), (f32, f32)> = HashMap::new();
            for r in &self.rows {
                if let RowKind::Lane { trace, lane, .. } = r.kind {
                    if let LaneKind::GpuStream { device, .. } = ws.traces[trace].store.lanes[lane as usize].kind {
                        let e = dev_ranges.entry((trace, device)).or_insert((f32::MAX, f32::MIN));
                        e.0 = e.0.min(top + r.y);
                        e.1 = e.1.max(top + r.y + r.h);
                    }
                }
            }
            for ((ti, dev), (y0, y1)) in dev_ranges {
                if y1 < body.min.y || y0 > body.max.y {
                    continue;
                }
                let t = &ws.traces[ti];
                let tv = self.tview(t);
                if let Some(gaps) = t.long_gaps(dev) {
                    draw_gaps(&mut mesh, gaps, &tv, plot, y0, y1, IDLE_TINT);
                    if let Some(p) = pointer {
                        if p.y >= y0 && p.y < y1 && plot.contains(p) {
                            let tp = tv.t_of(p.x, plot.min.x);
                            if let Some(g) =
                                find_containing(gaps.len(), |i| (gaps[i].start, gaps[i].end), tp, self.view.npp * 2.0)
                            {
                                hover = Some(Hover::Gap { trace: ti, gap: gaps[g] });
                            }
                        }
                    }
                }
            }
        }

        for r in &self.rows {
            let y0 = top + r.y;
            let y1 = y0 + r.h;
            if y1 < body.min.y || y0 > body.max.y {
                continue;
            }
            match &r.kind {
                RowKind::Header { label, level, collapsed, .. } => {
                    let rr = Rect::from_min_max(pos2(body.min.x, y0), pos2(body.max.x, y1));
                    painter.rect_filled(
                        rr,
                        0.0,
                        if *level == 0 { ui.visuals().widgets.inactive.bg_fill } else { ui.visuals().faint_bg_color },
                    );
                    // disclosure triangle, painted (the default fonts have no ▶/▼)
                    let cx = body.min.x + 9.0 + 12.0 * *level as f32;
                    let cy = (y0 + y1) / 2.0;
                    let tri = if *collapsed {
                        vec![pos2(cx - 3.0, cy - 5.0), pos2(cx + 4.0, cy), pos2(cx - 3.0, cy + 5.0)]
                    } else {
                        vec![pos2(cx - 5.0, cy - 3.0), pos2(cx + 5.0, cy - 3.0), pos2(cx, cy + 4.0)]
                    };
                    painter.add(Shape::convex_polygon(tri, ui.visuals().text_color(), Stroke::NONE));
                    painter.text(
                        pos2(cx + 9.0, cy),
                        Align2::LEFT_CENTER,
                        label,
                        FontId::proportional(if *level == 0 { 13.0 } else { 12.0 }),
                        ui.visuals().strong_text_color(),
                    );
                }
                RowKind::Lane { trace, lane, depths } => {
                    stats.lanes_drawn += 1;
                    let t = &ws.traces[*trace];
                    let name = &t.store.lanes[*lane as usize].name;
                    let lab = truncate(name, ((LABEL_W - 28.0) / (char_w * 1.05)) as usize);
                    painter.text(
                        pos2(body.min.x + 28.0, y0 + ROW_H / 2.0),
                        Align2::LEFT_CENTER,
                        lab,
                        FontId::monospace(10.0),
                        ui.visuals().text_color(),
                    );
                    painter.hline(body.x_range(), y1 - 0.5, Stroke::new(0.5, ui.visuals().faint_bg_color));
                    let _ = depths;
                    draw_lane(
                        &mut mesh,
                        &mut labels,
                        &mut outlines,
                        &mut stats,
                        t,
                        *trace,
                        *lane,
                        y0,
                        plot,
                        &self.tview(t),
                        self.tview(t).window(plot.width()),
                        hl,
                        sel,
                        pointer,
                        &mut hover,
                        char_w,
                        bg,
                    );
                }
                RowKind::Bands { trace, device } => {
                    let t = &ws.traces[*trace];
                    let tv = self.tview(t);
                    painter.text(
                        pos2(body.min.x + 28.0, y0 + 5.0),
                        Align2::LEFT_CENTER,
                        "comm: overlapped / exposed",
                        FontId::proportional(9.5),
                        ui.visuals().weak_text_color(),
                    );
                    painter.text(
                        pos2(body.min.x + 28.0, y1 - 5.5),
                        Align2::LEFT_CENTER,
                        "idle gaps >= threshold",
                        FontId::proportional(9.5),
                        ui.visuals().weak_text_color(),
                    );
                    let mid = (y0 + y1) / 2.0;
                    if let Some(b) = t.derived.bands.iter().find(|b| b.device == *device) {
                        draw_intervals_iter(
                            &mut mesh,
                            b.overlapped.len(),
                            |i| b.overlapped[i],
                            &tv,
                            plot,
                            y0 + 1.0,
                            mid,
                            OVERLAPPED,
                        );
                        draw_intervals_iter(
                            &mut mesh,
                            b.exposed_comm.len(),
                            |i| b.exposed_comm[i],
                            &tv,
                            plot,
                            y0 + 1.0,
                            mid,
                            EXPOSED_COMM,
                        );
                        if let Some(p) = pointer.filter(|p| p.y >= y0 && p.y < mid && plot.contains(*p)) {
                            let tp = tv.t_of(p.x, plot.min.x);
                            if let Some(i) =
                                find_containing(b.overlapped.len(), |i| b.overlapped[i], tp, self.view.npp * 2.0)
                            {
                                hover = Some(Hover::Band { device: *device, overlapped: true, iv: b.overlapped[i] });
                            } else if let Some(i) =
                                find_containing(b.exposed_comm.len(), |i| b.exposed_comm[i], tp, self.view.npp * 2.0)
                            {
                                hover = Some(Hover::Band { device: *device, overlapped: false, iv: b.exposed_comm[i] });
                            }
                        }
                    }
                    if let Some(gaps) = t.long_gaps(*device) {
                        draw_gaps(&mut mesh, gaps, &tv, plot, mid, y1 - 1.0, IDLE);
                        if let Some(p) = pointer.filter(|p| p.y >= mid && p.y < y1 && plot.contains(*p)) {
                            let tp = tv.t_of(p.x, plot.min.x);
                            if let Some(g) =
                                find_containing(gaps.len(), |i| (gaps[i].start, gaps[i].end), tp, self.view.npp * 2.0)
                            {
                                hover = Some(Hover::Gap { trace: *trace, gap: gaps[g] });
                            }
                        }
                    }
                }
                RowKind::RankSummary { trace } => {
                    let t = &ws.traces[*trace];
                    let tv = self.tview(t);
                    painter.text(
                        pos2(body.min.x + 28.0, (y0 + y1) / 2.0),
                        Align2::LEFT_CENTER,
                        "GPU: compute / comm / memory / idle",
                        FontId::proportional(9.5),
                        ui.visuals().weak_text_color(),
                    );
                    let strip = (y1 - y0 - 2.0) / 4.0;
                    for u in &t.derived.unions {
                        for (k, (iv, c)) in
                            [(&u.compute, OVERLAPPED), (&u.comm, EXPOSED_COMM), (&u.memory, MEMORY_BUSY)]
                                .into_iter()
                                .enumerate()
                        {
                            let a = y0 + 1.0 + strip * k as f32;
                            draw_intervals_iter(&mut mesh, iv.len(), |i| iv[i], &tv, plot, a, a + strip - 0.5, c);
                        }
                        if let Some(gaps) = t.long_gaps(u.device) {
                            let a = y0 + 1.0 + strip * 3.0;
                            draw_gaps(&mut mesh, gaps, &tv, plot, a, a + strip - 0.5, IDLE);
                        }
                    }
                    painter.hline(body.x_range(), y1 - 0.5, Stroke::new(0.5, ui.visuals().faint_bg_color));
                }
                RowKind::MemoryLevel { trace, device } => {
                    let t = &ws.traces[*trace];
                    let tv = self.tview(t);
                    let args = (&painter, &plot_painter, body, plot, (y0, y1));
                    if let Some(c) = memory_level::draw(
                        ui,
                        args.0,
                        args.1,
                        args.2,
                        args.3,
                        args.4,
                        (t, *trace),
                        *device,
                        &tv,
                        pointer,
                    ) {
                        cmds.push(c);
                    }
                    painter.hline(body.x_range(), y1 - 0.5, Stroke::new(0.5, ui.visuals().faint_bg_color));
                }
                RowKind::Counter { trace, series } | RowKind::Series { trace, series } => {
                    let t = &ws.traces[*trace];
                    // a store counter, or a series derived from the trace: drawn alike
                    let (name, ts, vals) = if matches!(r.kind, RowKind::Counter { .. }) {
                        let c = &t.store.counters[*series];
                        let (ts, vals) = t.store.counter_points(c);
                        (format!("{} {}", c.name, c.series), ts, vals)
                    } else {
                        let d = &t.derived.series[*series];
                        (d.name.clone(), d.ts.as_slice(), d.vals.as_slice())
                    };
                    painter.text(
                        pos2(body.min.x + 28.0, y0 + 10.0),
                        Align2::LEFT_CENTER,
                        truncate(&name, ((LABEL_W - 28.0) / char_w) as usize),
                        FontId::monospace(10.0),
                        ui.visuals().text_color(),
                    );
                    draw_counter(&plot_painter, ts, vals, &self.tview(t), plot, y0 + 2.0, y1 - 2.0);
                }
            }
        }
        stats.labels = labels.len();
        plot_painter.add(Shape::mesh(mesh));
        for (r, c, w) in outlines {
            plot_painter.rect_stroke(r, 0.0, Stroke::new(w, c), egui::StrokeKind::Inside);
        }
        for (p, s, c) in labels {
            plot_painter.text(p, Align2::LEFT_CENTER, s, FontId::monospace(10.0), c);
        }
        self.draw_flows(&plot_painter, ws, sel, plot, top);

        // marks and area preview
        for (i, m) in self.marks.iter().enumerate() {
            let x = self.view.x_of(*m, plot.min.x);
            if x >= plot.min.x && x <= plot.max.x {
                painter.vline(x, body.y_range(), Stroke::new(1.0, MARK));
                painter.text(
                    pos2(x + 2.0, body.min.y + 2.0),
                    Align2::LEFT_TOP,
                    format!("M{}", i + 1),
                    FontId::proportional(10.0),
                    MARK,
                );
            }
        }
        if let Some((a, b)) = sel.range {
            let (xa, xb) =
                (self.view.x_of(a, plot.min.x).max(plot.min.x), self.view.x_of(b, plot.min.x).min(plot.max.x));
            if xb > xa {
                painter.rect_filled(
                    Rect::from_x_y_ranges(xa..=xb, body.y_range()),
                    0.0,
                    Color32::from_rgba_unmultiplied(120, 160, 255, 18),
                );
            }
        }
        if let (Some((p0, _)), Some(p1)) = (self.area_drag, ui.input(|i| i.pointer.hover_pos())) {
            painter.rect(
                Rect::from_two_pos(p0, p1),
                0.0,
                Color32::from_rgba_unmultiplied(120, 160, 255, 40),
                Stroke::new(1.0, Color32::LIGHT_BLUE),
                egui::StrokeKind::Inside,
            );
        }

        ruler::draw(&painter, ui, ruler_rect, plot, &self.view, &ticks);
        // label gutter separator
        painter.vline(
            plot.min.x,
            body.y_range(),
            Stroke::new(1.0, ui.visuals().widgets.noninteractive.bg_stroke.color),
        );
        if ws.traces.is_empty() {
            painter.text(
                body.center(),
                Align2::CENTER_CENTER,
                "Open a trace: File > Open…, or drop files here",
                FontId::proportional(16.0),
                ui.visuals().weak_text_color(),
            );
        }

        // hover tooltip and click
        if let Some(h) = hover {
            if resp.hovered() && self.area_drag.is_none() {
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
                Some(Hover::Item { trace, span, .. }) => cmds.push(Command::SelectSpan(SpanRef { trace, span })),
                Some(Hover::Gap { gap, trace }) => {
                    let off = ws.traces[trace].offset_ns;
                    cmds.push(Command::ZoomTo {
                        t0: gap.start - (gap.end - gap.start) / 2 + off,
                        t1: gap.end + (gap.end - gap.start) / 2 + off,
                    })
                }
                _ => {
                    // header rows toggle collapse
                    if let Some(p) = resp.interact_pointer_pos() {
                        let yy = p.y - top;
                        if let Some(r) = self.rows.iter().find(|r| yy >= r.y && yy < r.y + r.h) {
                            if let RowKind::Header { key, .. } = &r.kind {
                                if !self.collapsed.remove(key) {
                                    self.collapsed.insert(key.clone());
                                }
                            } else {
                                cmds.push(Command::ClearSelection);
                            }
                        }
                    }
                }
            }
        }
        if resp.double_clicked() {
            if let Some(Hover::Item { item, trace, .. }) = hover {
                let pad = (item.end - item.start) / 10;
                let off = ws.traces[trace].offset_ns;
                cmds.push(Command::ZoomTo { t0: item.start - pad + off, t1: item.end + pad + off });
            }
        }
        self.stats = stats;
    }

    #[allow(clippy::too_many_arguments)]
    fn handle_input(
        &mut self,
        ui: &Ui,
        resp: &egui::Response,
        ruler_resp: &egui::Response,
        plot: Rect,
        ws: &Workspace,
        sel: &Selection,
        cmds: &mut Vec<Command>,
    ) {
        let (shift, pointer) = ui.input(|i| (i.modifiers.shift, i.pointer.hover_pos()));
        // dragging: pan, or shift-drag to select an area
        if resp.drag_started() && shift {
            if let Some(p) = resp.interact_pointer_pos() {
                self.area_drag = Some((p, self.view.t_of(p.x.max(plot.min.x), plot.min.x)));
            }
        }
        if resp.dragged() || ruler_resp.dragged() {
            let d = if resp.dragged() { resp.drag_delta() } else { ruler_resp.drag_delta() };
            if self.area_drag.is_none() {
                self.view.t0 -= d.x as f64 * self.view.npp;
                if resp.dragged() {
                    self.scroll_y -= d.y;
                }
            }
        }
        if resp.drag_stopped() {
            if let Some((p0, ta)) = self.area_drag.take() {
                if let Some(p1) = resp.interact_pointer_pos().or(pointer) {
                    let tb = self.view.t_of(p1.x.max(plot.min.x), plot.min.x);
                    let (t0, t1) = (ta.min(tb), ta.max(tb));
                    let top = plot.min.y - self.scroll_y;
                    let (ya, yb) = (p0.y.min(p1.y) - top, p0.y.max(p1.y) - top);
                    let lanes: Vec<(usize, u32)> = self
                        .rows
                        .iter()
                        .filter(|r| r.y + r.h > ya && r.y < yb)
                        .filter_map(|r| {
                            if let RowKind::Lane { trace, lane, .. } = r.kind {
                                Some((trace, lane))
                            } else {
                                None
                            }
                        })
                        .collect();
                    if t1 > t0 {
                        cmds.push(Command::AreaSelected { t0, t1, lanes });
                    }
                }
            }
        }
        let hovered = resp.hovered() || ruler_resp.hovered();
        let anchor = pointer
            .filter(|_| hovered)
            .map(|p| (p.x - plot.min.x).clamp(0.0, plot.width()))
            .unwrap_or(plot.width() / 2.0);
        if hovered {
            let (zoom, scroll) = ui.input(|i| (i.zoom_delta(), i.smooth_scroll_delta));
            if zoom != 1.0 {
                self.view.zoom_at(1.0 / zoom as f64, anchor);
            } else {
                self.scroll_y -= scroll.y;
                self.view.t0 -= scroll.x as f64 * self.view.npp;
            }
        }
        if ui.ctx().egui_wants_keyboard_input() {
            return;
        }
        let (w, s, a, d, f, m, esc) = ui.input(|i| {
            let n = |k: Key| i.events.iter().filter(|e| matches!(e, egui::Event::Key { key, pressed: true, modifiers, .. } if *key == k && !modifiers.command)).count() as i32;
            (n(Key::W), n(Key::S), n(Key::A), n(Key::D), n(Key::F), n(Key::M), n(Key::Escape))
        });
        for _ in 0..w {
            self.view.zoom_at(0.8, anchor);
        }
        for _ in 0..s {
            self.view.zoom_at(1.25, anchor);
        }
        self.view.t0 += (d - a) as f64 * 0.15 * plot.width() as f64 * self.view.npp;
        if f > 0 {
            if let Some(r) = sel.span {
                if let Some(st) = ws.store(r.trace) {
                    let (a, b) = (st.span_start(r.span), st.span_end(r.span));
                    let pad = ((b - a) / 10).max(100);
                    cmds.push(Command::ZoomTo { t0: a - pad, t1: b + pad });
                }
            } else if let Some((a, b)) = sel.range {
                cmds.push(Command::ZoomTo { t0: a, t1: b });
            } else {
                cmds.push(Command::FitAll);
            }
        }
        if m > 0 {
            let t = self.view.t_of(plot.min.x + anchor, plot.min.x);
            self.marks.push(t);
        }
        if esc > 0 {
            cmds.push(Command::ClearSelection);
        }
        let slash = ui.input(|i| {
            i.events.iter().any(|e| matches!(e, egui::Event::Text(t) if t == "/"))
                || i.modifiers.command && i.key_pressed(Key::F)
        });
        if slash {
            cmds.push(Command::FocusSearch);
        }
    }

    fn draw_flows(&self, painter: &egui::Painter, ws: &Workspace, sel: &Selection, plot: Rect, top: f32) {
        let Some(r) = sel.span else { return };
        let Some(st) = ws.store(r.trace) else { return };
        let tv = self.tview(&ws.traces[r.trace]);
        let pos = |span: u32| -> Option<Pos2> {
            let m = st.span_meta(span);
            let y = self.lane_y.get(&(r.trace, m.lane))?;
            Some(pos2(tv.x_of(st.span_start(span), plot.min.x), top + y + m.depth as f32 * ROW_H + ROW_H / 2.0))
        };
        let stroke = Stroke::new(1.6, Color32::from_rgb(255, 255, 255));
        let mut flows: Vec<(u32, u32)> = st.flows_to(r.span).map(|f| (f.from, f.to)).collect();
        flows.extend(st.flows_from(r.span).map(|f| (f.from, f.to)));
        for (a, b) in flows.into_iter().take(64) {
            let (Some(p), Some(q)) = (pos(a), pos(b)) else { continue };
            painter.line_segment([p, q], stroke);
            painter.circle_filled(p, 3.0, Color32::WHITE);
            let dir = (q - p).normalized();
            let n = vec2(-dir.y, dir.x);
            painter.add(Shape::convex_polygon(
                vec![q, q - dir * 9.0 + n * 4.5, q - dir * 9.0 - n * 4.5],
                Color32::WHITE,
                Stroke::NONE,
            ));
        }
    }
}

impl Trace {
    /// Idle gaps of `device` at least the threshold long.
    pub fn long_gaps(&self, device: i64) -> Option<&[IdleGap]> {
        self.long_gaps.iter().find(|(d, _)| *d == device).map(|(_, g)| g.as_slice())
    }

    pub fn color(&self, name: u32, kind: SpanKind) -> Color32 {
        let mut cache = self.name_colors.borrow_mut();
        if let Some(c) = cache.get(name as usize) {
            if *c != 0 {
                let [r, g, b, _] = c.to_le_bytes();
                return Color32::from_rgb(r, g, b);
            }
        }
        let c = span_color(kind, self.store.string(name));
        if let Some(slot) = cache.get_mut(name as usize) {
            *slot = u32::from_le_bytes([c.r(), c.g(), c.b(), 255]);
        }
        c
    }
}

pub fn truncate(s: &str, max_chars: usize) -> String {
    if max_chars == 0 {
        return String::new();
    }
    let mut it = s.char_indices();
    match it.nth(max_chars) {
        None => s.to_string(),
        Some(_) => {
            let cut = s.char_indices().nth(max_chars.saturating_sub(1)).map(|(i, _)| i).unwrap_or(s.len());
            format!("{}…", &s[..cut])
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn draw_lane(
    mesh: &mut Mesh,
    labels: &mut Vec<(Pos2, String, Color32)>,
    outlines: &mut Vec<(Rect, Color32, f32)>,
    stats: &mut FrameStats,
    t: &Trace,
    ti: usize,
    lane: u32,
    y0: f32,
    plot: Rect,
    view: &View,
    (w0, w1): (i64, i64),
    hl: &Highlight,
    sel: &Selection,
    pointer: Option<Pos2>,
    hover: &mut Option<Hover>,
    char_w: f32,
    bg: Color32,
) {
    let st = &*t.store;
    let lv = st.lane_view(lane);
    let npp = view.npp;
    let npp_i = (npp.floor() as i64).max(1);
    let (l, r) = (plot.min.x - 2.0, plot.max.x + 2.0);
    let sel_span = sel.span.filter(|s| s.trace == ti).map(|s| s.span);
    st.lod_query(lane, w0 - npp_i, w1 + npp_i, npp_i, |depth, it| {
        let x0 = view.x_of(it.start, plot.min.x).max(l);
        let mut x1 = view.x_of(it.end, plot.min.x).min(r);
        if x1 - x0 < 1.0 {
            x1 = x0 + 1.0;
        }
        let y = y0 + depth as f32 * ROW_H + 1.0;
        let rect = Rect::from_min_max(pos2(x0, y), pos2(x1, y + ROW_H - 2.0));
        let Some(&span) = lv.span.get(it.member as usize) else { return };
        let m = st.span_meta(span);
        let kind = SpanKind::from_u8(m.kind);
        let mut c = t.color(m.name, kind);
        stats.items += 1;
        let matched = hl.active && hl.matches(ti, m.name);
        if it.count > 1 {
            stats.folded += 1;
            let dens = it.busy as f32 / (it.end - it.start).max(1) as f32;
            c = folded_color(c, dens, bg);
            if hl.active && !matched {
                c = lerp(bg, c, 0.3);
            }
            mesh.add_colored_rect(rect, c);
            // hatch: "many small things here"
            if rect.width() >= 6.0 {
                let dark = lerp(c, bg, 0.55);
                let mut x = (rect.min.x / 4.0).ceil() * 4.0;
                while x < rect.max.x - 1.0 {
                    mesh.add_colored_rect(Rect::from_min_max(pos2(x, rect.min.y), pos2(x + 1.0, rect.max.y)), dark);
                    x += 4.0;
                }
            }
        } else {
            if hl.active && !matched {
                c = lerp(bg, c, 0.3);
            }
            mesh.add_colored_rect(rect, c);
            if rect.width() > 3.0 * char_w + 6.0 {
                let n = ((rect.width() - 4.0) / char_w) as usize;
                let txt = truncate(st.string(m.name), n);
                if !txt.is_empty() {
                    labels.push((pos2(rect.min.x.max(plot.min.x) + 2.0, rect.center().y), txt, Color32::BLACK));
                }
            }
        }
        if matched {
            outlines.push((rect.expand(0.5), MATCH, 1.5));
        }
        if sel_span == Some(span) && it.count == 1 {
            outlines.push((rect.expand(1.0), SELECTED, 2.0));
        }
        if let Some(p) = pointer {
            if rect.expand2(vec2(0.5, 0.0)).contains(p) {
                *hover = Some(Hover::Item { trace: ti, item: it, span });
            }
        }
    });
}

/// Draws sorted disjoint intervals in O(pixels · log n): runs narrower than a pixel are
/// merged by jumping to the next pixel boundary with a binary search.
fn draw_gaps(mesh: &mut Mesh, gaps: &[IdleGap], view: &View, plot: Rect, y0: f32, y1: f32, c: Color32) {
    draw_intervals_iter(mesh, gaps.len(), |i| (gaps[i].start, gaps[i].end), view, plot, y0, y1, c);
}

#[allow(clippy::too_many_arguments)]
fn draw_intervals_iter(
    mesh: &mut Mesh,
    n: usize,
    get: impl Fn(usize) -> (i64, i64),
    view: &View,
    plot: Rect,
    y0: f32,
    y1: f32,
    c: Color32,
) {
    if n == 0 || y1 <= y0 {
        return;
    }
    let (w0, w1) = view.window(plot.width());
    let pp = |pred: &dyn Fn(usize) -> bool| -> usize {
        let (mut lo, mut hi) = (0usize, n);
        while lo < hi {
            let mid = (lo + hi) / 2;
            if pred(mid) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    };
    let mut i = pp(&|k| get(k).1 <= w0);
    while i < n {
        let (s, e) = get(i);
        if s >= w1 {
            break;
        }
        let x0 = view.x_of(s, plot.min.x).max(plot.min.x - 1.0);
        let mut xe = view.x_of(e, plot.min.x).max(x0 + 1.0);
        // one rect for a run of intervals whose gaps are under a pixel: dense busy stretches
        // (a GPU's union of kernels) cost one rect, not one per pixel
        let mut j = i + 1;
        while xe <= plot.max.x + 1.0 {
            let boundary = view.t_of(xe.floor() + 1.0, plot.min.x);
            // gallop from j: the next pixel's intervals are near, a search of the whole list
            // per pixel would cost log n each (64 ranks' summary lanes felt it)
            let mut hi = 1usize;
            while j + hi < n && get(j + hi - 1).0 < boundary {
                hi *= 2;
            }
            let (mut lo, mut hi) = (j, (j + hi).min(n));
            while lo < hi {
                let mid = (lo + hi) / 2;
                if get(mid).0 < boundary {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            let k = lo.max(j);
            if k == j {
                break;
            }
            xe = xe.max(view.x_of(get(k - 1).1, plot.min.x));
            j = k;
        }
        mesh.add_colored_rect(Rect::from_min_max(pos2(x0, y0), pos2(xe.min(plot.max.x + 1.0), y1)), c);
        i = j;
    }
}

/// Index of the interval containing t (or within `slack` ns of it).
fn find_containing(n: usize, get: impl Fn(usize) -> (i64, i64), t: i64, slack: f64) -> Option<usize> {
    let (mut lo, mut hi) = (0usize, n);
    while lo < hi {
        let mid = (lo + hi) / 2;
        if get(mid).1 <= t {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    let s = slack as i64;
    for k in [lo.wrapping_sub(1), lo] {
        if k < n {
            let (a, b) = get(k);
            if a - s <= t && t < b + s {
                return Some(k);
            }
        }
    }
    None
}

/// A step-function series' (x, min, max) per pixel column of the visible window.
fn counter_columns(ts: &[i64], vals: &[f64], view: &View, plot: Rect) -> Vec<(f32, f64, f64)> {
    let mut pts: Vec<(f32, f64, f64)> = Vec::new();
    if ts.is_empty() {
        return pts;
    }
    let (w0, w1) = view.window(plot.width());
    let a = ts.partition_point(|&x| x < w0).saturating_sub(1);
    let b = (ts.partition_point(|&x| x < w1) + 1).min(ts.len());
    let mut i = a;
    while i < b {
        let x = view.x_of(ts[i], plot.min.x).floor();
        let boundary = view.t_of(x + 1.0, plot.min.x);
        let j = (i + ts[i..b].partition_point(|&q| q < boundary)).max(i + 1);
        let (mut mn, mut mx) = (f64::MAX, f64::MIN);
        // cap work per column: sample at most 64 points of a dense column
        let step = ((j - i) / 64).max(1);
        let mut k = i;
        while k < j {
            mn = mn.min(vals[k]);
            mx = mx.max(vals[k]);
            k += step;
        }
        mn = mn.min(vals[j - 1]);
        mx = mx.max(vals[j - 1]);
        pts.push((x, mn, mx));
        i = j;
    }
    pts
}

/// A step-function series as a line, min..max per pixel column, scaled to what is visible.
fn draw_counter(painter: &egui::Painter, ts: &[i64], vals: &[f64], view: &View, plot: Rect, y0: f32, y1: f32) {
    let pts = counter_columns(ts, vals, view, plot);
    if pts.is_empty() {
        return;
    }
    let lo = pts.iter().map(|p| p.1).fold(f64::MAX, f64::min);
    let mut hi = pts.iter().map(|p| p.2).fold(f64::MIN, f64::max);
    if hi <= lo {
        hi = lo + 1.0;
    }
    let yv = |v: f64| y1 - ((v - lo) / (hi - lo)) as f32 * (y1 - y0);
    let mut line = Vec::with_capacity(pts.len() * 2);
    for (x, mn, mx) in &pts {
        line.push(pos2(x.clamp(plot.min.x, plot.max.x), yv(*mn)));
        if mx != mn {
            line.push(pos2(x.clamp(plot.min.x, plot.max.x), yv(*mx)));
        }
    }
    painter.add(Shape::line(line, Stroke::new(1.2, Color32::from_rgb(120, 200, 255))));
    painter.text(
        pos2(plot.max.x - 4.0, y0),
        Align2::RIGHT_TOP,
        format!("{hi:.3}"),
        FontId::monospace(9.0),
        Color32::GRAY,
    );
}

fn hover_text(ws: &Workspace, h: &Hover) -> String {
    match *h {
        Hover::Item { trace, item, span, .. } => {
            let st = &*ws.traces[trace].store;
            let m = st.span_meta(span);
            if item.count > 1 {
                format!(
                    "{} spans folded here\nbusy {} of {}\nlongest: {} ({})\ndouble-click to zoom in",
                    item.count,
                    fmt_ns(item.busy),
                    fmt_ns(item.end - item.start),
                    st.span_name(span),
                    fmt_ns(item.longest)
                )
            } else {
                format!("{}\n{:?} · {}", st.span_name(span), SpanKind::from_u8(m.kind), fmt_ns(item.end - item.start))
            }
        }
        Hover::Gap { trace, gap } => {
            let st = &*ws.traces[trace].store;
            let mut s =
                format!("GPU idle {} — {}\n{}", fmt_ns(gap.end - gap.start), gap.cause.label(), gap.cause.explain());
            s.push_str(&format!("\nbefore: {}\nafter: {}", st.span_name(gap.prev_span), st.span_name(gap.next_span)));
            if let Some(l) = gap.next_launch {
                let dt = st.span_start(l) - gap.start;
                s.push_str(&format!(
                    "\nlaunch: {} at {}{} from the gap's start",
                    st.span_name(l),
                    if dt >= 0 { "+" } else { "-" },
                    fmt_ns(dt.abs())
                ));
            }
            s
        }
        Hover::Band { device, overlapped, iv, .. } => {
            if overlapped {
                format!("GPU {device}: comm under compute for {}", fmt_ns(iv.1 - iv.0))
            } else {
                format!("GPU {device}: exposed comm (nothing computes under it) for {}", fmt_ns(iv.1 - iv.0))
            }
        }
    }
}
