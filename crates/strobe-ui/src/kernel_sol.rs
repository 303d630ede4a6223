//! Kernel pane (Nsight Compute): per launch Speed-of-Light bars (compute = SM %, memory %)
//! with the verdict, sortable by duration or verdict, and a log-log roofline plot
//! (`egui_plot`) with the device's DRAM and FP32 ceilings, each launch a point sized by its
//! duration. Clicking a row or a point selects the launch in both. The figures come from
//! `strobe_analysis::roofline`; this module only draws them. With a timeline open, each
//! launch is linked to its timeline kernel span (`strobe_analysis::ncu_match`: by name and
//! launch order), so a launch picked here selects its span and a span picked on the
//! timeline selects its launch (the app applies both as commands), and each kernel's
//! possible gain is weighed against the trace's step ("Where a faster kernel pays most",
//! `kernel_gains`). Under them, the selected launch's verdict paragraph and its Occupancy,
//! Stalls, Memory and Rules sections (`kernel_detail`).

use crate::commands::Command;
use crate::roofline_plot::{axis_formatter, decades, legend_row, LegendEntry};
use crate::view_ctx::ViewCtx;
use crate::workspace::{SpanRef, Workspace};
use egui::{Color32, RichText};
use egui_plot::{Line, MarkerShape, Plot, PlotPoints, Points};
use strobe_analysis::ncu_match;
use strobe_analysis::roofline::{KernelSol, RooflineReport, Verdict, TENSOR_COUNTED_NOTE, TENSOR_NOTE};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SolSort {
    /// Export order (launch id).
    Id,
    /// Longest first.
    Duration,
    /// under_saturated, memory_bound, compute_bound, balanced, none; longest first within.
    Verdict,
}

/// The kernel pane's view state; the report is the workspace's `NcuDoc`, handed to each call.
pub struct KernelSolPane {
    pub sort: SolSort,
    /// Index into `report.kernels`.
    pub selected: Option<usize>,
    /// Kernels drawn in the roofline in the last frame (those with FLOP/s > 0 and AI > 0).
    pub plotted: usize,
    /// Kernels drawn on the bandwidth-only strip left of the roofline (no FLOPs or no AI).
    pub strip: usize,
    /// A launch the user picked in this pane this frame (emitted as `SelectNcuLaunch`).
    picked: Option<usize>,
    /// Per launch: its timeline kernel span, when a timeline is open and it matched.
    pub links: Vec<Option<SpanRef>>,
    /// How many traces `links` was computed over (0: not linked, no timeline open).
    linked_traces: usize,
    /// Each profiled kernel's possible gain per step of the linked trace
    /// (`strobe_analysis::ncu_gain`); None without a linked trace with steps.
    pub gains: Option<strobe_analysis::ncu_gain::StepGains>,
    /// Open the gains list on the next frame (the Step view's link asks for it).
    pub reveal_gains: bool,
    reveal_gains_scroll: bool,
}

/// Verdict colours: none of them is a ceiling's colour (`CEILING_*`), so a point never reads
/// as part of a ceiling line.
pub fn verdict_color(v: Option<Verdict>) -> Color32 {
    match v {
        Some(Verdict::UnderSaturated) => Color32::from_rgb(150, 150, 150),
        Some(Verdict::MemoryBound) => Color32::from_rgb(0, 172, 193),
        Some(Verdict::ComputeBound) => Color32::from_rgb(255, 127, 14),
        Some(Verdict::Balanced) => Color32::from_rgb(188, 189, 34),
        None => Color32::DARK_GRAY,
    }
}

const CEILING_DRAM: Color32 = Color32::from_rgb(66, 133, 244);
const CEILING_FP32: Color32 = Color32::from_rgb(219, 68, 55);
const CEILING_FP64: Color32 = Color32::from_rgb(150, 90, 200);
const CEILING_TENSOR: Color32 = Color32::from_rgb(46, 160, 67);
/// log10 x of the bandwidth-only strip, left of where the ceilings start (1e-4 FLOP/B).
const STRIP_X: f64 = -5.0;

fn verdict_rank(v: Option<Verdict>) -> u8 {
    match v {
        Some(Verdict::UnderSaturated) => 0,
        Some(Verdict::MemoryBound) => 1,
        Some(Verdict::ComputeBound) => 2,
        Some(Verdict::Balanced) => 3,
        None => 4,
    }
}

fn fmt_si(v: f64, unit: &str) -> String {
    let (d, p) = [(1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "K")]
        .into_iter()
        .find(|(d, _)| v.abs() >= *d)
        .unwrap_or((1.0, ""));
    format!("{:.2} {p}{unit}", v / d)
}

/// The figures shown on hover and in the selection line.
pub fn describe(k: &KernelSol) -> String {
    let o = |v: Option<f64>, f: &dyn Fn(f64) -> String| v.map(f).unwrap_or_else(|| "-".into());
    format!(
        "#{} {}\nduration {}  SM {}  memory {}  DRAM {}  tensor {}\n{}  DRAM {}  AI {}  verdict {}",
        k.id,
        k.name,
        o(k.duration_ns.map(|d| d as f64), &|v| format!("{:.3} µs", v / 1e3)),
        o(k.sm_pct, &|v| format!("{v:.1}%")),
        o(k.memory_pct, &|v| format!("{v:.1}%")),
        o(k.dram_pct, &|v| format!("{v:.1}%")),
        o(k.tensor_pipe_pct, &|v| format!("{v:.1}%")),
        o(k.flops_per_s, &|v| fmt_si(v, "FLOP/s")),
        o(k.dram_bytes, &|v| fmt_si(v, "B")),
        o(k.arithmetic_intensity, &|v| format!("{v:.3} FLOP/B")),
        k.verdict.map(|v| v.as_str()).unwrap_or("-"),
    )
}

impl KernelSolPane {
    pub fn new(report: &RooflineReport) -> Self {
        let n = report.kernels.len();
        KernelSolPane {
            sort: SolSort::Duration,
            selected: None,
            plotted: 0,
            strip: 0,
            picked: None,
            links: vec![None; n],
            linked_traces: 0,
            gains: None,
            reveal_gains: false,
            reveal_gains_scroll: false,
        }
    }

    /// Links every launch to its timeline kernel span (`ncu_match::match_stores`: by name
    /// and launch order, over every device of every open trace). The app calls it when the
    /// workspace's generation moved.
    pub fn link(&mut self, report: &RooflineReport, ws: &Workspace) {
        let names: Vec<&str> = report.kernels.iter().map(|k| k.name.as_str()).collect();
        let stores: Vec<&strobe_store::Store> = ws.traces.iter().map(|t| &*t.store).collect();
        self.links = strobe_analysis::ncu_match::match_stores(&names, &stores)
            .into_iter()
            .map(|m| m.map(|(ti, span)| SpanRef { trace: ws.traces[ti].id, span }))
            .collect();
        self.linked_traces = ws.traces.len();
        // The gains over the trace the launches linked to.
        self.gains = self.links.iter().flatten().next().and_then(|first| {
            let t = ws.trace(first.trace)?;
            let spans: Vec<Option<u32>> =
                self.links.iter().map(|l| l.filter(|r| r.trace == first.trace).map(|r| r.span)).collect();
            strobe_analysis::ncu_gain::weigh(report, &spans, &t.store)
        });
    }

    /// The gain line of launch `i` ("+30 % on this kernel = 1.2 ms of a 77.0 ms step, 1.6 %").
    pub fn gain_line(&self, i: usize) -> Option<String> {
        let g = self.gains.as_ref()?;
        let k = g.kernels.iter().find(|k| k.launches.contains(&i))?;
        Some(format!(
            "{} (its time per step in the trace: {})",
            k.sentence(g.step_ns),
            strobe_analysis::ncu_gain::duration(k.ns_per_step)
        ))
    }

    /// The launch linked to a timeline span.
    pub fn launch_of_span(&self, r: SpanRef) -> Option<usize> {
        self.links.iter().position(|l| *l == Some(r))
    }

    /// Selects the launch linked to a timeline span; false (selection unchanged) when none is.
    pub fn select_span(&mut self, r: SpanRef) -> bool {
        match self.launch_of_span(r) {
            Some(i) => {
                self.selected = Some(i);
                true
            }
            None => false,
        }
    }

    /// Selects the first launch of a kernel name (a kernel picked on the timeline or in the
    /// kernel table): `ncu_match::launch_for_name`, the exact (demangled) name, else the same key (ncu and
    /// the CUDA/Kineto demanglers spell templates and namespaces differently).
    /// A selected launch that already matches stays selected.
    pub fn select_name(&mut self, report: &RooflineReport, name: &str) -> bool {
        if let Some(k) = self.selected.and_then(|i| report.kernels.get(i)) {
            if ncu_match::same_kernel(&k.name, name) {
                return true;
            }
        }
        match ncu_match::launch_for_name(report, name) {
            Some(i) => {
                self.selected = Some(i);
                true
            }
            None => false,
        }
    }

    fn pick(&mut self, i: usize) {
        self.selected = Some(i);
        self.picked = Some(i);
    }

    /// Row order of the table.
    pub fn order(&self, report: &RooflineReport) -> Vec<usize> {
        let k = &report.kernels;
        let mut idx: Vec<usize> = (0..k.len()).collect();
        let dur = |i: usize| k[i].duration_ns.unwrap_or(0);
        match self.sort {
            SolSort::Id => idx.sort_by_key(|&i| k[i].id),
            SolSort::Duration => idx.sort_by(|&a, &b| dur(b).cmp(&dur(a)).then(a.cmp(&b))),
            SolSort::Verdict => idx.sort_by(|&a, &b| {
                verdict_rank(k[a].verdict).cmp(&verdict_rank(k[b].verdict)).then(dur(b).cmp(&dur(a)))
            }),
        }
        idx
    }

    /// The pane for the workspace's ncu report; a launch picked here is emitted as
    /// `SelectNcuLaunch` (the app selects its timeline span too).
    pub fn ui(&mut self, ui: &mut egui::Ui, cx: &mut ViewCtx) {
        let Some(doc) = &cx.ws.ncu else {
            ui.weak("No Nsight Compute report is open.");
            return;
        };
        self.report_ui(ui, &doc.report);
        if let Some(i) = self.picked.take().filter(|&i| i < doc.report.kernels.len()) {
            cx.emit(Command::SelectNcuLaunch(i));
        }
    }

    /// The pane over a report alone (a launch picked is kept for `ui` to emit).
    pub fn report_ui(&mut self, ui: &mut egui::Ui, report: &RooflineReport) {
        let d = &report.device;
        ui.horizontal_wrapped(|ui| {
            ui.strong("Kernels (Nsight Compute)");
            ui.label(format!(
                "{} launches · device {} cc {} · ceilings ({}) FP32 {} · DRAM {}",
                report.kernels.len(),
                d.name.as_deref().unwrap_or("?"),
                if d.cc.is_empty() { "?" } else { &d.cc },
                d.peaks_source,
                d.peak_flops_per_s.map(|v| fmt_si(v, "FLOP/s")).unwrap_or_else(|| "-".into()),
                d.peak_dram_bytes_per_s.map(|v| fmt_si(v, "B/s")).unwrap_or_else(|| "-".into()),
            ));
        });
        ui.horizontal(|ui| {
            ui.label("Sort:");
            ui.selectable_value(&mut self.sort, SolSort::Duration, "by duration");
            ui.selectable_value(&mut self.sort, SolSort::Verdict, "by verdict");
            ui.selectable_value(&mut self.sort, SolSort::Id, "by launch id");
        });
        if let Some(k) = self.selected.and_then(|i| report.kernels.get(i)) {
            ui.label(RichText::new(describe(k)).monospace());
        }
        if self.linked_traces > 0 {
            let n = self.links.iter().filter(|l| l.is_some()).count();
            let sel = match self.selected.map(|i| self.links.get(i).copied().flatten()) {
                Some(Some(_)) => " · selected launch: linked to its timeline span",
                Some(None) => " · selected launch: no timeline span (not in the matched window)",
                None => "",
            };
            ui.weak(format!(
                "{n} of {} launches matched to timeline kernels by name and launch order{sel}",
                self.links.len()
            ));
        }
        let avail = ui.available_size();
        let table_w = (avail.x * 0.5).max(300.0);
        let selected = self.selected.and_then(|i| report.kernels.get(i).map(|k| (i, k)));
        // With a launch or the gains to show, the table and roofline take the upper part and
        // the sections scroll below them.
        let below = selected.is_some() || self.gains.is_some();
        let top_h = if below { (avail.y * 0.4).max(240.0) } else { avail.y };
        ui.allocate_ui(egui::vec2(avail.x, top_h), |ui| {
            ui.set_max_height(top_h);
            ui.horizontal_top(|ui| {
                ui.vertical(|ui| {
                    ui.set_width(table_w);
                    ui.set_max_height(top_h);
                    self.table(ui, report);
                });
                ui.separator();
                ui.vertical(|ui| {
                    ui.set_max_height(top_h);
                    self.roofline(ui, report)
                });
            });
        });
        if !below {
            return;
        }
        ui.separator();
        egui::ScrollArea::vertical().id_salt("kernel_detail_scroll").auto_shrink([false, false]).animated(false).show(
            ui,
            |ui| {
                if let Some((i, k)) = selected {
                    ui.label(RichText::new(format!("#{} {}", k.id, k.name)).strong());
                    crate::kernel_detail::sections(ui, k, self.gain_line(i));
                    ui.separator();
                }
                if let Some(g) = &self.gains {
                    let mut header =
                        egui::CollapsingHeader::new(RichText::new("Where a faster kernel pays most").strong())
                            .id_salt("kernel_gains")
                            .default_open(true);
                    if std::mem::take(&mut self.reveal_gains) {
                        header = header.open(Some(true));
                        self.reveal_gains_scroll = true;
                    }
                    let r = header.show(ui, |ui| crate::kernel_gains::list(ui, g, report));
                    if let Some(i) = r.body_returned.flatten() {
                        self.pick(i);
                    }
                    if std::mem::take(&mut self.reveal_gains_scroll) {
                        r.header_response.scroll_to_me(Some(egui::Align::TOP));
                        // the scroll lands on the next frame, which an idle window would not draw
                        ui.ctx().request_repaint();
                    }
                }
            },
        );
    }

    /// The launches, one row each; a click anywhere on a row picks its launch.
    fn table(&mut self, ui: &mut egui::Ui, report: &RooflineReport) {
        use egui_extras::{Column, TableBuilder};
        let order = self.order(report);
        let mut clicked = None;
        TableBuilder::new(ui)
            .id_salt("kernel_sol_table")
            .striped(true)
            .sense(egui::Sense::click())
            .column(Column::auto().at_least(50.0))
            .column(Column::auto().at_least(80.0))
            .column(Column::auto().at_least(130.0))
            .column(Column::auto().at_least(110.0))
            .column(Column::remainder().at_least(120.0).clip(true))
            .header(20.0, |mut h| {
                for s in ["launch", "duration", "SOL: SM / memory", "verdict", "name"] {
                    h.col(|ui| {
                        ui.strong(s);
                    });
                }
            })
            .body(|body| {
                body.rows(20.0, order.len(), |mut row| {
                    let i = order[row.index()];
                    let k = &report.kernels[i];
                    row.set_selected(self.selected == Some(i));
                    row.col(|ui| {
                        ui.add(egui::Label::new(format!("#{}", k.id)).selectable(false));
                    });
                    row.col(|ui| {
                        let d =
                            k.duration_ns.map(|d| format!("{:.2} µs", d as f64 / 1e3)).unwrap_or_else(|| "-".into());
                        ui.add(egui::Label::new(d).selectable(false));
                    });
                    row.col(|ui| sol_bars(ui, k.sm_pct, k.memory_pct));
                    row.col(|ui| {
                        let v =
                            RichText::new(k.verdict.map(|v| v.as_str()).unwrap_or("-")).color(verdict_color(k.verdict));
                        ui.add(egui::Label::new(v).selectable(false));
                    });
                    row.col(|ui| {
                        ui.add(egui::Label::new(k.name.as_str()).truncate().selectable(false))
                            .on_hover_text(describe(k));
                    });
                    if row.response().clicked() {
                        clicked = Some(i);
                    }
                });
            });
        if let Some(i) = clicked {
            self.pick(i);
        }
    }

    fn roofline(&mut self, ui: &mut egui::Ui, report: &RooflineReport) {
        let d = &report.device;
        let kernels = &report.kernels;
        let pts = plot_points(kernels);
        self.plotted = pts.iter().filter(|p| p.1 != STRIP_X).count();
        self.strip = pts.len() - self.plotted;
        // Hover text by point position (points are named by verdict, so the legend has one
        // entry per verdict).
        let hover: Vec<(f64, f64, String)> = pts.iter().map(|&(i, x, y)| (x, y, describe(&kernels[i]))).collect();
        let selected = self.selected;
        let ring = ui.visuals().strong_text_color();
        legend_row(ui, &legend(d, kernels));
        let resp = Plot::new("kernel_sol_roofline")
            .x_axis_label("arithmetic intensity (FLOP / DRAM byte, log)")
            .y_axis_label("FLOP/s (log)")
            .x_grid_spacer(decades)
            .y_grid_spacer(decades)
            .x_axis_formatter(axis_formatter("FLOP/B"))
            .y_axis_formatter(axis_formatter("FLOP/s"))
            .include_x(if self.strip > 0 { STRIP_X - 0.5 } else { -3.0 })
            .include_x(3.0)
            .include_y(8.0)
            .include_y(d.peak_tensor_flops_per_s.or(d.peak_flops_per_s).map(|p| p.log10() + 0.3).unwrap_or(14.0))
            .height((ui.available_height() - 40.0).max(200.0))
            .label_formatter(move |hp| match hp {
                egui_plot::HoverPosition::NearDataPoint { position, .. } => {
                    hover.iter().find(|(x, y, _)| *x == position.x && *y == position.y).map(|(_, _, t)| t.clone())
                }
                egui_plot::HoverPosition::Elsewhere { position } => Some(format!(
                    "AI {}\n{}",
                    crate::units::si(10f64.powf(position.x), "FLOP/B"),
                    crate::units::si(10f64.powf(position.y), "FLOP/s")
                )),
            })
            .show(ui, |p| {
                ceilings(p, d);
                if pts.iter().any(|p| p.1 == STRIP_X) {
                    strip_marker(p);
                }
                kernel_points(p, kernels, &pts, selected, ring);
            });
        if resp.response.clicked() {
            if let Some(h) = resp.hovered_plot_item {
                if let Some(&(i, _, _)) =
                    pts.iter().find(|(i, _, _)| egui_plot::ItemId::new(("kernel_sol_point", *i)) == h)
                {
                    self.pick(i);
                }
            }
        }
        let counted = kernels.iter().any(|k| k.tensor_flops.is_some());
        ui.label(RichText::new(if counted { TENSOR_COUNTED_NOTE } else { TENSOR_NOTE }).weak());
    }
}

/// Each launch's point `(index, x, y)` in log10 space: on the roofline where FLOP/s and AI are
/// known and > 0; every other launch on the bandwidth-only strip at x = STRIP_X, its height
/// its DRAM bytes/s (1e8 when unknown), so no launch is left off the plot.
fn plot_points(kernels: &[KernelSol]) -> Vec<(usize, f64, f64)> {
    let on_roof = |k: &KernelSol| {
        let (f, ai) = (k.flops_per_s?, k.arithmetic_intensity?);
        (f > 0.0 && ai > 0.0).then(|| (ai.log10(), f.log10()))
    };
    kernels
        .iter()
        .enumerate()
        .map(|(i, k)| match on_roof(k) {
            Some((x, y)) => (i, x, y),
            None => (i, STRIP_X, k.dram_bytes_per_s.filter(|b| *b > 0.0).map_or(8.0, f64::log10)),
        })
        .collect()
}

/// The legend above the plot: the ceilings drawn, then the verdicts the launches have.
fn legend(d: &strobe_analysis::roofline::Device, kernels: &[KernelSol]) -> Vec<LegendEntry> {
    let mut out = Vec::new();
    let si = crate::units::si;
    let line = |label: String, color, value: String| LegendEntry { label, color, line: true, value: Some(value) };
    if let (Some(peak), Some(bw)) = (d.peak_flops_per_s, d.peak_dram_bytes_per_s) {
        out.push(line("DRAM ceiling".into(), CEILING_DRAM, si(bw, "B/s")));
        out.push(line("FP32 FMA ceiling".into(), CEILING_FP32, si(peak, "FLOP/s")));
        if let Some(t) = d.peak_tensor_flops_per_s.filter(|t| *t > peak) {
            let family = d.tensor_family.as_deref().unwrap_or("tensor");
            out.push(line(format!("tensor ceiling ({family})"), CEILING_TENSOR, si(t, "FLOP/s")));
        }
        if let Some(p64) = d.peak_fp64_flops_per_s {
            out.push(line("FP64 FMA ceiling".into(), CEILING_FP64, si(p64, "FLOP/s")));
        }
    }
    let mut verdicts: Vec<Option<Verdict>> = Vec::new();
    for k in kernels {
        if !verdicts.contains(&k.verdict) {
            verdicts.push(k.verdict);
        }
    }
    for v in verdicts {
        let label = v.map(|v| v.as_str()).unwrap_or("no verdict").to_string();
        out.push(LegendEntry { label, color: verdict_color(v), line: false, value: None });
    }
    out
}

/// The device's ceilings: the DRAM slope up to the highest ridge, FP32, tensor and FP64 roofs.
fn ceilings(p: &mut egui_plot::PlotUi, d: &strobe_analysis::roofline::Device) {
    let (Some(peak), Some(bw)) = (d.peak_flops_per_s, d.peak_dram_bytes_per_s) else { return };
    let ridge = (peak / bw).log10();
    let tensor = d.peak_tensor_flops_per_s.filter(|t| *t > peak);
    // The DRAM slope runs up to the highest ceiling's ridge.
    let top = tensor.unwrap_or(peak);
    let top_ridge = (top / bw).log10();
    let (x0, x1) = (-4.0, top_ridge.max(-4.0) + 4.0);
    p.line(
        Line::new("DRAM ceiling", PlotPoints::from(vec![[x0, x0 + bw.log10()], [top_ridge, top.log10()]]))
            .color(CEILING_DRAM),
    );
    p.line(
        Line::new("FP32 FMA ceiling", PlotPoints::from(vec![[ridge, peak.log10()], [x1, peak.log10()]]))
            .color(CEILING_FP32),
    );
    if let Some(t) = tensor {
        let name = format!("tensor ceiling ({})", d.tensor_family.as_deref().unwrap_or("tensor"));
        p.line(Line::new(name, PlotPoints::from(vec![[top_ridge, t.log10()], [x1, t.log10()]])).color(CEILING_TENSOR));
    }
    if let Some(p64) = d.peak_fp64_flops_per_s {
        let r64 = (p64 / bw).log10();
        p.line(
            Line::new("FP64 FMA ceiling", PlotPoints::from(vec![[r64, p64.log10()], [x1, p64.log10()]]))
                .color(CEILING_FP64),
        );
    }
}

/// The dashed edge of the bandwidth-only strip and its caption.
fn strip_marker(p: &mut egui_plot::PlotUi) {
    p.vline(egui_plot::VLine::new("", STRIP_X + 0.5).color(Color32::GRAY).style(egui_plot::LineStyle::dashed_dense()));
    p.text(egui_plot::Text::new(
        "bandwidth-only strip",
        egui_plot::PlotPoint::new(STRIP_X, 7.6),
        RichText::new("0 FLOP / no AI:\nheight = DRAM B/s"),
    ));
}

/// A point per launch, sized by its duration and coloured by its verdict; the selected one
/// highlighted and ringed in `ring`.
fn kernel_points(
    p: &mut egui_plot::PlotUi,
    kernels: &[KernelSol],
    pts: &[(usize, f64, f64)],
    selected: Option<usize>,
    ring: Color32,
) {
    let max_dur = kernels.iter().filter_map(|k| k.duration_ns).max().unwrap_or(1).max(1) as f64;
    for &(i, x, y) in pts {
        let k = &kernels[i];
        let r = 3.0 + 9.0 * ((k.duration_ns.unwrap_or(0) as f64 / max_dur).sqrt() as f32);
        let mut item =
            Points::new(k.verdict.map(|v| v.as_str()).unwrap_or("no verdict"), PlotPoints::from(vec![[x, y]]))
                .radius(r)
                .shape(MarkerShape::Circle)
                .filled(true)
                .color(verdict_color(k.verdict))
                .id(("kernel_sol_point", i));
        if selected == Some(i) {
            item = item.highlight(true).radius(r + 3.0);
        }
        p.points(item);
    }
    // The selected launch: a ring around its point, in the text colour.
    if let Some(&(_, x, y)) = selected.and_then(|s| pts.iter().find(|p| p.0 == s)) {
        p.points(
            Points::new("selected", PlotPoints::from(vec![[x, y]]))
                .radius(16.0)
                .shape(MarkerShape::Circle)
                .filled(false)
                .color(ring),
        );
    }
}

/// Two thin horizontal bars: SM % (red) over memory % (blue), 0–100.
fn sol_bars(ui: &mut egui::Ui, sm: Option<f64>, mem: Option<f64>) {
    let (rect, resp) = ui.allocate_exact_size(egui::vec2(140.0, 16.0), egui::Sense::hover());
    let painter = ui.painter();
    painter.rect_filled(rect, 2.0, ui.visuals().extreme_bg_color);
    let half = rect.height() / 2.0;
    for (row, v, c) in [(0.0, sm, Color32::from_rgb(219, 68, 55)), (1.0, mem, Color32::from_rgb(66, 133, 244))] {
        if let Some(v) = v {
            let w = rect.width() * (v.clamp(0.0, 100.0) / 100.0) as f32;
            let r = egui::Rect::from_min_size(rect.min + egui::vec2(0.0, row * half + 1.0), egui::vec2(w, half - 2.0));
            painter.rect_filled(r, 1.0, c);
        }
    }
    let txt = |v: Option<f64>| v.map(|v| format!("{v:.1}%")).unwrap_or_else(|| "-".into());
    resp.on_hover_text(format!("SM {}  memory {}", txt(sm), txt(mem)));
}
