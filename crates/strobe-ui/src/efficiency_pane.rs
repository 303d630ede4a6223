//! The Efficiency tab: how far each op is from what it should take, from the trace alone —
//! the roofline of the trace's ops (log-log: arithmetic intensity × achieved FLOP/s under the
//! device's compute and bandwidth ceilings, each op a point sized by its GPU time, coloured by
//! what bounds it) beside the ops ranked by the time they lose, and MFU per step. The figures
//! are `strobe_analysis::efficiency`'s (the numbers of `strobe report`); a point or a row
//! selects the op's longest instance on the timeline, and a span selected there marks its op.

use crate::commands::Command;
use crate::roofline_plot::{axis_formatter, decades, legend_row, LegendEntry};
use crate::view_ctx::ViewCtx;
use crate::workspace::{SpanRef, Trace};
use egui::Color32;
use egui_plot::{Line, MarkerShape, Plot, PlotPoints, Points};
use strobe_analysis::efficiency::{Bound, OpEfficiency};
use strobe_analysis::report::fmt_ns;

/// Bound colours: not the ceilings' (white / grey), not each other's.
const COMPUTE: Color32 = Color32::from_rgb(240, 140, 40);
const MEMORY: Color32 = Color32::from_rgb(80, 170, 255);
/// The bandwidth slope; each compute roof takes a colour of `ROOF_COLORS`, highest first.
const HBM_CEILING: Color32 = Color32::from_rgb(150, 150, 150);
const ROOF_COLORS: [Color32; 4] = [
    Color32::from_rgb(235, 235, 235),
    Color32::from_rgb(46, 160, 67),
    Color32::from_rgb(190, 110, 230),
    Color32::from_rgb(219, 68, 55),
];

#[derive(Default)]
pub struct EfficiencyPane {
    /// The op name selected here or through its span.
    pub selected: Option<String>,
    /// Where each plotted op's point was drawn in the last frame (screen position).
    pub points: Vec<(String, egui::Pos2)>,
    /// The trace asked for (the Steps tab's), shown while no span is selected.
    pub trace: Option<crate::workspace::TraceId>,
    /// Only the ops of this class (`OpClass`'s name: gemm, attention, norm, …).
    pub class: Option<String>,
}

/// An op class's name as the figures write it (`gemm`, `attention`, …).
pub fn class_name(c: strobe_analysis::efficiency::formulas::OpClass) -> String {
    serde_json::to_value(c).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default()
}

/// Whether class name `a` names `b`, whatever the case or separators (`GEMM`, `gemm`).
pub fn same_class(a: &str, b: &str) -> bool {
    let key = |s: &str| s.chars().filter(|c| c.is_ascii_alphanumeric()).collect::<String>().to_ascii_lowercase();
    key(a) == key(b)
}

fn bound_color(b: Option<Bound>) -> Color32 {
    match b {
        Some(Bound::Compute) => COMPUTE,
        Some(Bound::Memory) => MEMORY,
        None => Color32::GRAY,
    }
}

impl EfficiencyPane {
    /// The trace shown: the selected span's, else the one asked for, else the first.
    fn trace<'w>(&self, cx: &ViewCtx<'w>) -> Option<&'w Trace> {
        cx.sel
            .span
            .and_then(|r| cx.ws.trace(r.trace))
            .or_else(|| self.trace.and_then(|id| cx.ws.trace(id)))
            .or_else(|| cx.ws.traces.first())
    }

    /// Shows `trace`'s ops, only those of `class` where given.
    pub fn show(&mut self, trace: crate::workspace::TraceId, class: Option<String>) {
        self.trace = Some(trace);
        self.class = class;
    }

    pub fn ui(&mut self, ui: &mut egui::Ui, cx: &mut ViewCtx) {
        let Some(t) = self.trace(cx) else {
            ui.weak("Open a trace recorded with record_shapes=True to see its ops' efficiency.");
            return;
        };
        let Some(ops) = t.ops() else {
            // the app repaints while figures are due (`poll_loads`)
            crate::jobs::busy_indicator(ui, "computing the ops' efficiency figures…");
            return;
        };
        if let Some(name) = cx.sel.span.and_then(|r| ops.op_of_span.get(&r.span)) {
            self.selected = Some(name.clone());
        }
        let e = &ops.efficiency;
        let d = &e.device;
        ui.horizontal_wrapped(|ui| {
            ui.strong(format!("{} · device {}", t.label, if d.name.is_empty() { "?" } else { &d.name }));
            let peak = |k: &str, scale: f64, unit: &str| {
                d.peaks.get(k).map(|v| format!("{k} {:.0} {unit}", v / scale)).unwrap_or_default()
            };
            ui.label(format!(
                "peaks ({}): {} · {} · {}",
                d.source,
                peak("tensor_bf16", 1e12, "TFLOP/s"),
                peak("fp32", 1e12, "TFLOP/s"),
                peak(strobe_analysis::efficiency::peaks::HBM, 1e9, "GB/s")
            ));
            for s in &e.steps {
                if let Some(m) = s.mfu {
                    ui.label(format!("{} MFU {:.1}%", s.name, m * 100.0));
                }
            }
        });
        for n in &e.notes {
            ui.colored_label(Color32::from_rgb(230, 180, 60), n);
        }
        if e.ops.is_empty() {
            return;
        }
        let shown: Vec<OpEfficiency>;
        let listed: &[OpEfficiency] = match &self.class {
            Some(c) => {
                shown = e.ops.iter().filter(|o| same_class(&class_name(o.class), c)).cloned().collect();
                let label = crate::step_view::words::class_label(c);
                let mut clear = false;
                ui.horizontal(|ui| {
                    ui.label(format!("op class: {label} · {} of {} ops", shown.len(), e.ops.len()));
                    clear = ui.button("Show every class").clicked();
                });
                if clear {
                    self.class = None;
                }
                if shown.is_empty() {
                    ui.weak(format!("No op of class {label} in this trace."));
                    return;
                }
                &shown
            }
            None => &e.ops,
        };
        let mut pick: Option<String> = None;
        ui.columns(2, |cols| {
            pick = self.roofline(&mut cols[0], listed, d).or(pick.take());
            pick = self.table(&mut cols[1], listed).or(pick.take());
        });
        if let Some(name) = pick {
            if let Some(&span) = ops.op_spans.get(&name).and_then(|v| v.first()) {
                cx.emit(Command::RevealSpan(SpanRef { trace: t.id, span }));
            }
            self.selected = Some(name);
        }
    }

    /// The ops on the roofline; returns an op picked by a click. The legend is a row above
    /// the plot; hovering a point names its op with its figures.
    fn roofline(
        &mut self,
        ui: &mut egui::Ui,
        ops: &[OpEfficiency],
        d: &strobe_analysis::efficiency::peaks::DevicePeaks,
    ) -> Option<String> {
        let pts: Vec<(&OpEfficiency, f64, f64)> = ops
            .iter()
            .filter_map(|o| {
                let ai = o.figures.arithmetic_intensity.filter(|v| *v > 0.0)?;
                let fl = o.figures.tflops_per_s.filter(|v| *v > 0.0)? * 1e12;
                Some((o, ai.log10(), fl.log10()))
            })
            .collect();
        let max_gpu = ops.iter().map(|o| o.gpu_ns).max().unwrap_or(1).max(1) as f64;
        let roofs = roofs(ops, d);
        let (x0, x1) = (-2.0f64, 4.0f64);
        legend_row(ui, &legend(&roofs, d, &pts));
        let resp = Plot::new("trace_roofline")
            .height((ui.available_height() - 4.0).max(180.0))
            .x_axis_label("arithmetic intensity (FLOP/byte, log)")
            .y_axis_label("achieved FLOP/s (log)")
            .x_grid_spacer(decades)
            .y_grid_spacer(decades)
            .x_axis_formatter(axis_formatter("FLOP/B"))
            .y_axis_formatter(axis_formatter("FLOP/s"))
            .include_x(x0)
            .include_x(x1)
            // the label is this pane's tooltip (`hover_text`), not the plot's coordinates
            .label_formatter(|_| None)
            .allow_scroll(false)
            .show(ui, |p| {
                if let Some(bw) = d.bandwidth() {
                    let top = roofs.first().map(|r| r.peak).unwrap_or(bw);
                    let ridge = (top / bw).log10();
                    let slope = PlotPoints::from(vec![[x0, x0 + bw.log10()], [ridge, top.log10()]]);
                    p.line(Line::new("HBM", slope).color(HBM_CEILING).width(1.5));
                    for r in &roofs {
                        let ridge = (r.peak / bw).log10();
                        let flat = PlotPoints::from(vec![[ridge, r.peak.log10()], [x1, r.peak.log10()]]);
                        p.line(Line::new(r.label.clone(), flat).color(r.color).width(1.5));
                    }
                }
                for (o, x, y) in &pts {
                    let r = 2.0 + 10.0 * (o.gpu_ns as f64 / max_gpu).sqrt() as f32;
                    let bound = o.figures.bound;
                    p.points(
                        Points::new(o.name.clone(), vec![[*x, *y]]).radius(r).color(bound_color(bound)).filled(true),
                    );
                    if self.selected.as_deref() == Some(o.name.as_str()) {
                        let ring = p.ctx().global_style().visuals.strong_text_color();
                        p.points(
                            Points::new("selected", vec![[*x, *y]])
                                .radius(r + 4.0)
                                .shape(MarkerShape::Circle)
                                .filled(false)
                                // the theme's strongest text colour: white on dark, black on light
                                .color(ring),
                        );
                    }
                }
                p.pointer_coordinate()
            });
        self.points = pts
            .iter()
            .map(|(o, x, y)| (o.name.clone(), resp.transform.position_from_point(&egui_plot::PlotPoint::new(*x, *y))))
            .collect();
        // the point under the pointer (within 8 px of its centre, the nearest): its tooltip,
        // and a click picks it
        let hovered = resp.response.hover_pos().and_then(|pos| {
            pts.iter()
                .map(|(o, x, y)| {
                    (*o, resp.transform.position_from_point(&egui_plot::PlotPoint::new(*x, *y)).distance(pos))
                })
                .filter(|(_, dist)| *dist < 8.0)
                .min_by(|a, b| a.1.total_cmp(&b.1))
                .map(|(o, _)| o)
        });
        let clicked = resp.response.clicked();
        if let Some(o) = hovered {
            resp.response.on_hover_text_at_pointer(hover_text(o, d));
        }
        if clicked {
            return hovered.map(|o| o.name.clone());
        }
        None
    }

    /// The ops ranked by time lost; returns an op whose row was clicked.
    fn table(&self, ui: &mut egui::Ui, ops: &[OpEfficiency]) -> Option<String> {
        use egui_extras::{Column, TableBuilder};
        let mut picked = None;
        // a figure is one line, whatever the width: a narrow pane scrolls sideways (the op
        // name is the column that gives way, cut with its full name on hover)
        ui.style_mut().wrap_mode = Some(egui::TextWrapMode::Extend);
        egui::ScrollArea::horizontal().id_salt("efficiency_ops_hscroll").show(ui, |ui| {
            TableBuilder::new(ui)
                .id_salt("efficiency_ops")
                .striped(true)
                .sense(egui::Sense::click())
                .column(Column::initial(200.0).at_least(120.0).clip(true).resizable(true))
                .columns(Column::auto().at_least(48.0), 6)
                .header(20.0, |mut h| {
                    for s in ["Op", "Count", "GPU", "TFLOP/s", "Efficiency", "Time lost", "Bound"] {
                        h.col(|ui| {
                            ui.strong(s);
                        });
                    }
                })
                .body(|body| {
                    body.rows(18.0, ops.len(), |mut row| {
                        let o = &ops[row.index()];
                        row.set_selected(self.selected.as_deref() == Some(o.name.as_str()));
                        let f = &o.figures;
                        row.col(|ui| {
                            ui.add(egui::Label::new(&o.name).truncate().selectable(false))
                                .on_hover_text(format!("{} · FLOPs from {}", o.name, o.source));
                        });
                        row.col(|ui| {
                            ui.label(o.count.to_string());
                        });
                        row.col(|ui| {
                            ui.label(fmt_ns(o.gpu_ns));
                        });
                        row.col(|ui| {
                            ui.label(f.tflops_per_s.map(|v| format!("{v:.1}")).unwrap_or_default());
                        });
                        row.col(|ui| {
                            ui.label(f.efficiency.map(|v| format!("{:.0}%", v * 100.0)).unwrap_or_default());
                        });
                        row.col(|ui| {
                            ui.label(f.lost_ns.map(|v| fmt_ns(v as i64)).unwrap_or_default());
                        });
                        row.col(|ui| {
                            ui.colored_label(bound_color(f.bound), f.bound.map(|b| b.as_str()).unwrap_or(""));
                        });
                        if row.response().clicked() {
                            picked = Some(o.name.clone());
                        }
                    });
                });
        });
        picked
    }
}

/// A compute roof: the peak of one or more units (units with the same peak share one line,
/// named by all of them, so no two lines lie on top of each other).
pub struct Roof {
    pub label: String,
    pub peak: f64,
    pub color: Color32,
}

/// The roofs of the units the ops run on, highest first.
pub fn roofs(ops: &[OpEfficiency], d: &strobe_analysis::efficiency::peaks::DevicePeaks) -> Vec<Roof> {
    let mut units: Vec<strobe_analysis::efficiency::Unit> = ops.iter().map(|o| o.unit).collect();
    units.sort_by_key(|u| u.as_str());
    units.dedup();
    let mut by_peak: Vec<(f64, Vec<&str>)> = Vec::new();
    for u in units {
        let Some(peak) = d.flops(u).filter(|p| *p > 0.0) else { continue };
        match by_peak.iter_mut().find(|(p, _)| *p == peak) {
            Some((_, names)) => names.push(u.as_str()),
            None => by_peak.push((peak, vec![u.as_str()])),
        }
    }
    by_peak.sort_by(|a, b| b.0.total_cmp(&a.0));
    by_peak
        .into_iter()
        .enumerate()
        .map(|(i, (peak, names))| Roof {
            label: format!("{} {}", names.join(" = "), crate::units::si(peak, "FLOP/s")),
            peak,
            color: ROOF_COLORS[i % ROOF_COLORS.len()],
        })
        .collect()
}

/// The legend above the plot: the bandwidth slope, each roof, the bounds the points have.
fn legend(
    roofs: &[Roof],
    d: &strobe_analysis::efficiency::peaks::DevicePeaks,
    pts: &[(&OpEfficiency, f64, f64)],
) -> Vec<LegendEntry> {
    let mut out = Vec::new();
    if let Some(bw) = d.bandwidth() {
        out.push(LegendEntry {
            label: format!("HBM {}", crate::units::si(bw, "B/s")),
            color: HBM_CEILING,
            line: true,
            value: None,
        });
        out.extend(roofs.iter().map(|r| LegendEntry {
            label: r.label.clone(),
            color: r.color,
            line: true,
            value: None,
        }));
    }
    for bound in [Some(Bound::Compute), Some(Bound::Memory), None] {
        if pts.iter().any(|(o, _, _)| o.figures.bound == bound) {
            let label = bound.map(|b| format!("{}-bound", b.as_str())).unwrap_or_else(|| "no bound".into());
            out.push(LegendEntry { label, color: bound_color(bound), line: false, value: None });
        }
    }
    out
}

/// The roof over arithmetic intensity `ai` for `o`'s unit: min(ai × bandwidth, peak).
pub fn roof_at(o: &OpEfficiency, ai: f64, d: &strobe_analysis::efficiency::peaks::DevicePeaks) -> Option<f64> {
    let peak = d.flops(o.unit)?;
    Some(d.bandwidth().map_or(peak, |bw| (ai * bw).min(peak)))
}

/// A point's tooltip: the op, its arithmetic intensity, achieved FLOP/s and how much of the
/// roof above it that is.
pub fn hover_text(o: &OpEfficiency, d: &strobe_analysis::efficiency::peaks::DevicePeaks) -> String {
    let f = &o.figures;
    let ai = f.arithmetic_intensity.unwrap_or(0.0);
    let achieved = f.tflops_per_s.unwrap_or(0.0) * 1e12;
    let mut s =
        format!("{}\nAI {}\nachieved {}", o.name, crate::units::si(ai, "FLOP/B"), crate::units::si(achieved, "FLOP/s"));
    if let Some(roof) = roof_at(o, ai, d).filter(|r| *r > 0.0) {
        s += &format!(
            "\n{:.1} % of the roof ({} on {})",
            achieved / roof * 100.0,
            crate::units::si(roof, "FLOP/s"),
            o.unit.as_str()
        );
    }
    s += &format!("\n{} × · GPU {}", o.count, fmt_ns(o.gpu_ns));
    s
}
