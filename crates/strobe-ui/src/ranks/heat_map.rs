//! The rank × step heat map: one row per rank, one column per step, the chosen figure in each
//! cell, coloured by how far it is from the typical cell, measured in steps. Step time is
//! compared with the whole table (its median cell, as a share of the median step), so a slow
//! step is a red column and a fast one green. Every other figure (compute, comm, idle, wait) is
//! compared within its step (the median over the step's ranks, as a share of that step's median
//! time), so each column shows who stands out in that step: a rank whose wait is high in every
//! step but level with the others in one is grey in that one, not red throughout. Two ranks
//! 0.1 % apart are both grey. A cell can also show any part of the step-time attribution
//! (`MultiRankReport::step_breakdown`), compared within its step like the other figures. * marks a step's straggler; a
//! click shows that rank's step in the timeline. Only the visible rows and columns are drawn
//! (one mesh), so a thousand ranks × a hundred steps scroll at the speed of ten.

use super::Computed;
use egui::{Color32, Sense, Vec2};
use strobe_analysis::attribution::PART_NAMES;
use strobe_analysis::ranks::report::MultiRankReport;
use strobe_analysis::ranks::step_table::RankStep;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Metric {
    StepTime,
    Compute,
    Comm,
    ExposedComm,
    Idle,
    Wait,
    /// A part of the step-time attribution, by its index in `PART_NAMES`.
    Part(usize),
}

impl Metric {
    pub const ALL: [Metric; 6] =
        [Metric::StepTime, Metric::Compute, Metric::Comm, Metric::ExposedComm, Metric::Idle, Metric::Wait];
    pub fn name(self) -> &'static str {
        match self {
            Metric::StepTime => "step time",
            Metric::Compute => "compute",
            Metric::Comm => "comm",
            Metric::ExposedComm => "exposed comm",
            Metric::Idle => "idle",
            Metric::Wait => "wait",
            Metric::Part(i) => PART_NAMES.get(i).map_or("?", |p| p.1),
        }
    }
    /// The figure of the rank-step table (None for an attribution part: `HeatIndex::value`
    /// has those).
    pub fn of(self, s: &RankStep) -> Option<i64> {
        Some(match self {
            Metric::StepTime => s.dur_ns,
            Metric::Compute => s.compute_ns,
            Metric::Comm => s.comm_ns,
            Metric::ExposedComm => s.exposed_comm_ns,
            Metric::Idle => s.idle_ns,
            Metric::Wait => s.wait_ns,
            Metric::Part(_) => return None,
        })
    }
}

/// Differences within this share of the median step read as "the same" (grey).
pub const NEUTRAL: f64 = 0.02;
/// Differences of this share of the median step or more take the full colour.
pub const FULL: f64 = 0.25;

/// The colour of a cell `v` when the typical cell is `typical` and the median step `step_ns`.
pub fn heat(v: i64, typical: i64, step_ns: i64) -> Color32 {
    let d = (v - typical) as f64 / step_ns.max(1) as f64;
    let neutral = Color32::from_rgb(70, 70, 76);
    if d.abs() <= NEUTRAL {
        return neutral;
    }
    let f = ((d.abs() - NEUTRAL) / (FULL - NEUTRAL)).min(1.0) as f32;
    let to = if d > 0.0 { Color32::from_rgb(190, 45, 35) } else { Color32::from_rgb(35, 135, 60) };
    let mix = |a: u8, b: u8| (a as f32 + (b as f32 - a as f32) * (0.35 + 0.65 * f)) as u8;
    Color32::from_rgb(mix(neutral.r(), to.r()), mix(neutral.g(), to.g()), mix(neutral.b(), to.b()))
}

/// What the heat map draws from, computed once with the report (a thousand ranks × a hundred
/// steps is 100 000 cells: nothing per frame may look at all of them).
pub struct HeatIndex {
    /// Per (rank index, step index), `rank * steps + step`: the index into that step's
    /// `per_rank`, or `NONE` where the rank lacks the step.
    cells: Vec<u32>,
    ranks: usize,
    steps: usize,
    /// Per step: the typical cell of each metric (`Metric::ALL` order, the median over the
    /// step's ranks) and the step's median time across ranks.
    typical: Vec<[i64; 6]>,
    step_ns: Vec<i64>,
    /// The whole table's median step time: step time's typical cell and its unit.
    table_step_ns: i64,
    /// Per cell (as `cells`): the rank's step split into the attribution's parts, where the
    /// report has it.
    parts: Vec<Option<[i64; PART_NAMES.len()]>>,
    /// Per step: each part's typical cell (the median over the ranks that have it).
    part_typical: Vec<[i64; PART_NAMES.len()]>,
    /// Rank number → row.
    row_of_rank: std::collections::HashMap<i64, usize>,
}

const NONE: u32 = u32::MAX;

/// A cell with no figure for the chosen part (its rank's step has no breakdown).
const NO_FIGURE: Color32 = Color32::from_gray(45);

impl HeatIndex {
    pub fn new(r: &MultiRankReport) -> HeatIndex {
        let (ranks, steps) = (r.ranks.len(), r.steps.len());
        let at: std::collections::HashMap<i64, usize> = r.ranks.iter().enumerate().map(|(i, e)| (e.rank, i)).collect();
        let mut cells = vec![NONE; ranks * steps];
        for (si, row) in r.steps.iter().enumerate() {
            for (k, p) in row.per_rank.iter().enumerate() {
                if let Some(&ri) = at.get(&p.rank) {
                    cells[ri * steps + si] = k as u32;
                }
            }
        }
        let median = |v: Vec<i64>| strobe_analysis::stats::median(&v);
        let typical = r
            .steps
            .iter()
            .map(|row| Metric::ALL.map(|m| median(row.per_rank.iter().filter_map(|s| m.of(s)).collect()).unwrap_or(0)))
            .collect();
        // each rank's breakdown of a step, matched by rank and step name
        let step_of: std::collections::HashMap<&str, usize> =
            r.steps.iter().enumerate().map(|(i, s)| (s.name.as_str(), i)).collect();
        let mut parts = vec![None; ranks * steps];
        for b in &r.step_breakdown {
            let ri = b.rank.and_then(|k| at.get(&k)).copied().or((ranks == 1).then_some(0));
            if let (Some(ri), Some(&si)) = (ri, step_of.get(b.step.as_str())) {
                parts[ri * steps + si] = Some(b.parts.values());
            }
        }
        let part_typical = (0..steps)
            .map(|si| {
                std::array::from_fn(|k| {
                    median((0..ranks).filter_map(|ri| parts[ri * steps + si].map(|p: [i64; 10]| p[k])).collect())
                        .unwrap_or(0)
                })
            })
            .collect();
        let step_ns =
            r.steps.iter().map(|row| median(row.per_rank.iter().map(|s| s.dur_ns).collect()).unwrap_or(1)).collect();
        let all: Vec<i64> = r.steps.iter().flat_map(|row| row.per_rank.iter().map(|s| s.dur_ns)).collect();
        let table_step_ns = median(all).unwrap_or(1);
        HeatIndex { cells, ranks, steps, typical, step_ns, table_step_ns, parts, part_typical, row_of_rank: at }
    }

    /// Whether some cell has the attribution's parts.
    pub fn has_parts(&self) -> bool {
        self.parts.iter().any(|p| p.is_some())
    }

    /// Cell `s` of step index `si`'s figure `m` (None: an attribution part the report lacks
    /// for this rank and step).
    pub fn value(&self, m: Metric, si: usize, s: &RankStep) -> Option<i64> {
        match m {
            Metric::Part(k) => {
                let ri = *self.row_of_rank.get(&s.rank)?;
                self.parts.get(ri * self.steps + si)?.as_ref()?.get(k).copied()
            }
            _ => m.of(s),
        }
    }

    /// Rank index `ri`'s figures in step index `si`.
    pub fn cell<'a>(&self, r: &'a MultiRankReport, ri: usize, si: usize) -> Option<&'a RankStep> {
        let k = *self.cells.get(ri * self.steps + si)?;
        (k != NONE).then(|| &r.steps[si].per_rank[k as usize])
    }

    /// The colour of rank index `ri`'s cell `s` in step index `si`: against that step's
    /// median across ranks, as a share of that step's median time.
    pub fn colour(&self, m: Metric, si: usize, s: &RankStep) -> Color32 {
        let Some(v) = self.value(m, si, s) else { return NO_FIGURE };
        if m == Metric::StepTime {
            return heat(v, self.table_step_ns, self.table_step_ns);
        }
        let typical = match m {
            Metric::Part(k) => self.part_typical.get(si).and_then(|t| t.get(k)).copied().unwrap_or(0),
            _ => {
                let k = Metric::ALL.iter().position(|x| *x == m).unwrap_or(0);
                self.typical.get(si).map_or(0, |t| t[k])
            }
        };
        heat(v, typical, self.step_ns.get(si).copied().unwrap_or(1))
    }
}

/// What a click on the heat map asks for: a rank's step (`step`: its range in the rank's own
/// clock), or the rank itself (its label).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Click {
    pub rank_index: usize,
    pub step: Option<(i64, i64)>,
}

/// Up to this many ranks and steps the cells carry their figures as text, each a widget of
/// its own (hover, click, an accessibility label); beyond it they are colour only, painted as
/// one mesh, with one widget for the whole map.
const TEXT_RANKS: usize = 32;
const TEXT_STEPS: usize = 64;

struct Geometry {
    label_w: f32,
    header_h: f32,
    col_w: f32,
    row_h: f32,
    text: bool,
}

impl Geometry {
    fn of(ranks: usize, steps: usize, avail_w: f32) -> Geometry {
        let text = ranks <= TEXT_RANKS && steps <= TEXT_STEPS;
        if text {
            return Geometry { label_w: 64.0, header_h: 36.0, col_w: 100.0, row_h: 22.0, text };
        }
        let label_w = 76.0;
        // fill the width when it can, never narrower than a mouse can aim at
        let col_w = ((avail_w - label_w - 16.0) / steps.max(1) as f32).clamp(6.0, 40.0);
        Geometry { label_w, header_h: 20.0, col_w, row_h: 12.0, text }
    }
}

/// The heat map; `scroll_to`: bring this rank (index) to the top of the view.
pub fn ui(ui: &mut egui::Ui, c: &Computed, metric: &mut Metric, scroll_to: Option<usize>) -> Option<Click> {
    ui.horizontal(|ui| {
        ui.label("Cell:");
        for m in Metric::ALL {
            ui.selectable_value(metric, m, m.name());
        }
        part_picker(ui, metric, c.heat.has_parts());
    });
    let h = &c.heat;
    let metric = *metric;
    ui.weak(format!(
        "rows: ranks, columns: steps · ms · colour: step time against the whole table's median step, other figures against the step's median across ranks, as a share of a step; \
         grey within ±{:.0} %, full red / green from ±{:.0} % · * straggler · click a cell: show in the timeline · click a rank: open its trace",
        NEUTRAL * 100.0,
        FULL * 100.0
    ));
    let g = Geometry::of(h.ranks, h.steps, ui.available_width());
    let size = Vec2::new(g.label_w + h.steps as f32 * g.col_w, g.header_h + h.ranks as f32 * g.row_h);
    let mut click = None;
    let mut area = egui::ScrollArea::both().id_salt("rank_step_scroll").max_height(ui.available_height() * 0.6);
    if let Some(ri) = scroll_to {
        area = area.vertical_scroll_offset(ri.min(h.ranks) as f32 * g.row_h);
    }
    area.show_viewport(ui, |ui, vp| {
        let (rect, resp) = ui.allocate_exact_size(size, if g.text { Sense::hover() } else { Sense::click() });
        // the visible rows and columns only: a thousand ranks paint as cheaply as ten
        let m = MapFrame {
            c,
            metric,
            o: rect.min,
            rows: visible(vp.min.y - g.header_h, vp.max.y - g.header_h, g.row_h, h.ranks),
            cols: visible(vp.min.x - g.label_w, vp.max.x - g.label_w, g.col_w, h.steps),
            font: egui::FontId::monospace(if g.text { 11.0 } else { 9.0 }),
            text_col: ui.visuals().text_color(),
            g,
        };
        let painter = ui.painter_at(ui.clip_rect());
        m.paint_cells(&painter);
        if m.g.text {
            m.cell_widgets(ui, &painter, &mut click);
        } else {
            m.compact_cells(ui, &painter, &resp, &mut click);
        }
        // the rank labels and the step header stay in view while the cells scroll
        m.rank_labels(ui, &painter, &mut click);
        m.step_header(ui, &painter);
    });
    ui.separator();
    per_rank_summary(ui, &c.report);
    click
}

/// The attribution's parts as cell figures: a menu of `PART_NAMES`, off while the report has
/// no step breakdown.
fn part_picker(ui: &mut egui::Ui, metric: &mut Metric, has_parts: bool) {
    let shown = match *metric {
        Metric::Part(i) => format!("part: {}", Metric::Part(i).name()),
        _ => "attribution part…".to_string(),
    };
    ui.add_enabled_ui(has_parts, |ui| {
        let r = egui::ComboBox::from_id_salt("heat_part").selected_text(shown.as_str()).show_ui(ui, |ui| {
            for (i, (_, label)) in PART_NAMES.iter().enumerate() {
                ui.selectable_value(metric, Metric::Part(i), *label);
            }
        });
        // a name for screen readers (and kittest's accessibility check)
        r.response.widget_info(|| egui::WidgetInfo::labeled(egui::Role::ComboBox, true, &shown));
        r.response.on_disabled_hover_text("no step attribution for these ranks");
    });
}

/// The map as drawn in one frame of its scroll area: the origin of its cells and the rows and
/// columns in view.
struct MapFrame<'a> {
    c: &'a Computed,
    metric: Metric,
    g: Geometry,
    o: egui::Pos2,
    rows: std::ops::Range<usize>,
    cols: std::ops::Range<usize>,
    font: egui::FontId,
    text_col: Color32,
}

impl MapFrame<'_> {
    /// The chosen attribution part's line of a cell's tooltip (none for the table's figures).
    fn part_line(&self, si: usize, s: &RankStep) -> Option<String> {
        let Metric::Part(_) = self.metric else { return None };
        Some(match self.c.heat.value(self.metric, si, s) {
            Some(v) => format!(
                "{} {:.3} ms ({:.1} % of the step)",
                self.metric.name(),
                v as f64 / 1e6,
                v as f64 * 100.0 / s.dur_ns.max(1) as f64
            ),
            None => format!("{}: no step attribution for this rank and step", self.metric.name()),
        })
    }

    fn cell_rect(&self, ri: usize, si: usize) -> egui::Rect {
        let g = &self.g;
        egui::Rect::from_min_size(
            self.o + Vec2::new(g.label_w + si as f32 * g.col_w, g.header_h + ri as f32 * g.row_h),
            Vec2::new(g.col_w, g.row_h),
        )
        .shrink(if g.text { 1.5 } else { 0.0 })
    }

    /// The visible cells' colours, as one mesh.
    fn paint_cells(&self, painter: &egui::Painter) {
        let (r, h) = (&self.c.report, &self.c.heat);
        let mut mesh = egui::Mesh::default();
        for ri in self.rows.clone() {
            for si in self.cols.clone() {
                let col = match h.cell(r, ri, si) {
                    Some(s) => h.colour(self.metric, si, s),
                    None => Color32::from_gray(30),
                };
                mesh.add_colored_rect(self.cell_rect(ri, si), col);
            }
        }
        painter.add(egui::Shape::mesh(mesh));
    }

    /// Small maps: each cell its figure as text and a widget of its own (tooltip, click, label).
    fn cell_widgets(&self, ui: &egui::Ui, painter: &egui::Painter, click: &mut Option<Click>) {
        let (r, h) = (&self.c.report, &self.c.heat);
        for ri in self.rows.clone() {
            for si in self.cols.clone() {
                let Some(s) = h.cell(r, ri, si) else { continue };
                let (row, rk) = (&r.steps[si], &r.ranks[ri]);
                let star = if row.straggler == Some(rk.rank) { " *" } else { "" };
                let text = match h.value(self.metric, si, s) {
                    Some(v) => format!("{:.3}{star}", v as f64 / 1e6),
                    None => format!("–{star}"),
                };
                let cr = self.cell_rect(ri, si);
                painter.text(cr.center(), egui::Align2::CENTER_CENTER, &text, self.font.clone(), Color32::WHITE);
                let resp = ui.interact(cr, ui.make_persistent_id(("heat_cell", ri, si)), Sense::click());
                let resp = resp.on_hover_text(tooltip(rk.rank, &row.name, s, self.part_line(si, s)));
                if resp.clicked() {
                    *click = Some(Click { rank_index: ri, step: Some((s.start_ns, s.start_ns + s.dur_ns)) });
                }
                // a label the accessibility tree (and tests) can find
                resp.widget_info(|| {
                    egui::WidgetInfo::labeled(
                        egui::Role::Button,
                        true,
                        format!("{} rank {}: {text}", row.name, rk.rank),
                    )
                });
            }
        }
    }

    /// Large maps: stars on the visible stragglers, and the one widget of the whole map gives
    /// the tooltip and the click of the cell under the pointer.
    fn compact_cells(&self, ui: &egui::Ui, painter: &egui::Painter, resp: &egui::Response, click: &mut Option<Click>) {
        let (r, h, g) = (&self.c.report, &self.c.heat, &self.g);
        for si in self.cols.clone() {
            let Some(st) = r.steps[si].straggler else { continue };
            let Some(ri) = r.ranks.iter().position(|e| e.rank == st) else { continue };
            if self.rows.contains(&ri) {
                let at = self.cell_rect(ri, si).center();
                painter.text(at, egui::Align2::CENTER_CENTER, "*", self.font.clone(), Color32::WHITE);
            }
        }
        // not under the sticky labels or header
        let cells_on_screen =
            ui.clip_rect().with_min_x(ui.clip_rect().left() + g.label_w).with_min_y(ui.clip_rect().top() + g.header_h);
        if let Some(p) = resp.hover_pos().filter(|p| cells_on_screen.contains(*p)) {
            if let Some((ri, si)) = cell_at(p - self.o, g, h) {
                if let Some(s) = h.cell(r, ri, si) {
                    let row = &r.steps[si];
                    let tip = tooltip(r.ranks[ri].rank, &row.name, s, self.part_line(si, s));
                    let resp = resp.clone().on_hover_text_at_pointer(tip);
                    if resp.clicked() {
                        *click = Some(Click { rank_index: ri, step: Some((s.start_ns, s.start_ns + s.dur_ns)) });
                    }
                }
            }
        }
    }

    /// The rank labels, pinned to the left edge; a click opens the rank's trace.
    fn rank_labels(&self, ui: &egui::Ui, painter: &egui::Painter, click: &mut Option<Click>) {
        let (r, g) = (&self.c.report, &self.g);
        let clip = ui.clip_rect();
        let left = egui::Rect::from_min_max(
            egui::pos2(clip.left(), clip.top()),
            egui::pos2(clip.left() + g.label_w, clip.bottom()),
        );
        painter.rect_filled(left, 0.0, ui.visuals().panel_fill);
        // labels below the header only
        let label_painter = painter.with_clip_rect(left.intersect(clip.with_min_y(clip.top() + g.header_h)));
        for ri in self.rows.clone() {
            let y = self.o.y + g.header_h + ri as f32 * g.row_h;
            let lr = egui::Rect::from_min_size(egui::pos2(clip.left(), y), Vec2::new(g.label_w, g.row_h));
            let rk = &r.ranks[ri];
            let resp = ui.interact(lr, ui.make_persistent_id(("heat_rank", ri)), Sense::click());
            let strong = resp.hovered();
            label_painter.text(
                lr.left_center() + Vec2::new(4.0, 0.0),
                egui::Align2::LEFT_CENTER,
                format!("rank {}", rk.rank),
                self.font.clone(),
                if strong { ui.visuals().strong_text_color() } else { self.text_col },
            );
            let resp = resp.on_hover_text(format!("{}\nclick: open this rank's trace", rk.source));
            if resp.clicked() {
                *click = Some(Click { rank_index: ri, step: None });
            }
        }
    }

    /// The step names (with their collective skew) or, compact, a step number every few
    /// columns, pinned to the top edge right of the labels.
    fn step_header(&self, ui: &egui::Ui, painter: &egui::Painter) {
        let (r, g) = (&self.c.report, &self.g);
        let clip = ui.clip_rect();
        let top = egui::Rect::from_min_max(clip.min, egui::pos2(clip.right(), clip.top() + g.header_h));
        painter.rect_filled(top, 0.0, ui.visuals().panel_fill);
        // compact: a step number every few columns (the tooltip names the step)
        let every = if g.text { 1 } else { (40.0 / g.col_w).ceil().max(1.0) as usize };
        let header_painter = painter.with_clip_rect(top.with_min_x(clip.left() + g.label_w));
        let (font, text_col) = (&self.font, self.text_col);
        for si in self.cols.clone().filter(|si| si % every == 0) {
            let x = self.o.x + g.label_w + si as f32 * g.col_w;
            let row = &r.steps[si];
            let skew = row.collective_skew_ns.iter().copied().max().unwrap_or(0);
            let pos = egui::pos2(x + 2.0, clip.top() + 2.0);
            if g.text {
                let strong = ui.visuals().strong_text_color();
                header_painter.text(pos, egui::Align2::LEFT_TOP, &row.name, font.clone(), strong);
                let skew = format!("skew {:.3}", skew as f64 / 1e6);
                header_painter.text(pos + Vec2::new(0.0, 16.0), egui::Align2::LEFT_TOP, skew, font.clone(), text_col);
            } else {
                header_painter.text(pos, egui::Align2::LEFT_TOP, step_number(&row.name, si), font.clone(), text_col);
            }
        }
    }
}

/// Per rank, the median, p90 and max of its step time and wait; only the visible rows laid out.
fn per_rank_summary(ui: &mut egui::Ui, r: &MultiRankReport) {
    ui.strong("Per rank, across steps (median / p90 / max, ms)");
    let d = |x: &strobe_analysis::ranks::distribution::Distribution| {
        format!("{:9.3} / {:9.3} / {:9.3}", x.median_ns as f64 / 1e6, x.p90_ns as f64 / 1e6, x.max_ns as f64 / 1e6)
    };
    ui.monospace(format!("{:<10} {:<33}   {}", "rank", "step time", "wait"));
    let row_h = ui.text_style_height(&egui::TextStyle::Monospace);
    egui::ScrollArea::vertical().id_salt("rank_summary_scroll").show_rows(
        ui,
        row_h,
        r.rank_summary.len(),
        |ui, range| {
            for s in &r.rank_summary[range] {
                ui.monospace(format!("{:<10} {}   {}", format!("rank {}", s.rank), d(&s.step_time), d(&s.wait)));
            }
        },
    );
}

/// A step's short label: the number its name ends with (`ProfilerStep#42`: 42), else its index.
fn step_number(name: &str, index: usize) -> String {
    let digits = name.len() - name.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    if digits > 0 {
        name[name.len() - digits..].to_string()
    } else {
        index.to_string()
    }
}

fn tooltip(rank: i64, step: &str, s: &RankStep, part: Option<String>) -> String {
    let part = part.map(|p| format!("\n{p}")).unwrap_or_default();
    format!(
        "rank {rank} · {step}\nstep {:.3} ms · compute {:.3} · comm {:.3} · exposed comm {:.3} · idle {:.3} · wait {:.3}{part}",
        s.dur_ns as f64 / 1e6,
        s.compute_ns as f64 / 1e6,
        s.comm_ns as f64 / 1e6,
        s.exposed_comm_ns as f64 / 1e6,
        s.idle_ns as f64 / 1e6,
        s.wait_ns as f64 / 1e6
    )
}

/// The indices of `n` cells of size `w` from 0 that `[a, b)` shows.
fn visible(a: f32, b: f32, w: f32, n: usize) -> std::ops::Range<usize> {
    let lo = (a / w).floor().max(0.0) as usize;
    let hi = ((b / w).ceil().max(0.0) as usize).min(n);
    lo.min(hi)..hi
}

/// The cell under `p` (relative to the map's origin).
fn cell_at(p: Vec2, g: &Geometry, h: &HeatIndex) -> Option<(usize, usize)> {
    let (x, y) = (p.x - g.label_w, p.y - g.header_h);
    if x < 0.0 || y < 0.0 {
        return None;
    }
    let (ri, si) = ((y / g.row_h) as usize, (x / g.col_w) as usize);
    (ri < h.ranks && si < h.steps).then_some((ri, si))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_means_the_same_across_the_table() {
        let step = 50_000_000;
        // two ranks 0.1 % of a step apart: both the neutral grey
        assert_eq!(heat(50_050_000, 50_000_000, step), heat(49_950_000, 50_000_000, step));
        assert_eq!(heat(50_050_000, 50_000_000, step), heat(50_000_000, 50_000_000, step));
        // a fifth of a step slower is red, faster green, the full colour from a quarter
        let slow = heat(60_000_000, 50_000_000, step);
        assert!(slow.r() > slow.g() + 80, "{slow:?}");
        let fast = heat(40_000_000, 50_000_000, step);
        assert!(fast.g() > fast.r() + 50, "{fast:?}");
        assert_eq!(heat(70_000_000, 50_000_000, step), heat(90_000_000, 50_000_000, step));
        // a small figure (wait) is measured against the step, not against itself
        let wait = heat(2_000_000, 1_000_000, step);
        assert_eq!(wait, heat(0, 0, step), "1 ms more wait in a 50 ms step is 2 %: grey");
    }
}
