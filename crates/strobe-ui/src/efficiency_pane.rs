//! The Efficiency tab: how far each op is from what it should take, from the trace alone —
//! the roofline of the trace's ops (log-log: arithmetic intensity × achieved FLOP/s under the
//! device's compute and bandwidth ceilings, each op a point sized by its GPU time, coloured by
//! what bounds it) beside the ops ranked by the time they lose, and MFU per step. The figures
//! are `strobe_analysis::efficiency`'s (the numbers of `strobe report`); a point or a row
//! selects the op's longest instance on the timeline, and a span selected there marks its op.

use crate::commands::Command;
use crate::view_ctx::ViewCtx;
use crate::workspace::{SpanRef, Trace};
use egui::Color32;
use egui_plot::{Legend, Line, MarkerShape, Plot, PlotPoints, Points};
use strobe_analysis::efficiency::{Bound, OpEfficiency};
use strobe_analysis::report::fmt_ns;

/// Bound colours: not the ceilings' (white / grey), not each other's.
const COMPUTE: Color32 = Color32::from_rgb(240, 140, 40);
const MEMORY: Color32 = Color32::from_rgb(80, 170, 255);
const CEILING: Color32 = Color32::from_rgb(200, 200, 200);

#[derive(Default)]
pub struct EfficiencyPane {
    /// The op name selected here or through its span.
    pub selected: Option<String>,
}

fn bound_color(b: Option<Bound>) -> Color32 {
    match b {
        Some(Bound::Compute) => COMPUTE,
        Some(Bound::Memory) => MEMORY,
        None => Color32::GRAY,
    }
}

impl EfficiencyPane {
    /// The trace shown: the selected span's, else the first.
    fn trace<'w>(cx: &ViewCtx<'w>) -> Option<&'w Trace> {
        cx.sel.span.and_then(|r| cx.ws.trace(r.trace)).or_else(|| cx.ws.traces.first())
    }

    pub fn ui(&mut self, ui: &mut egui::Ui, cx: &mut ViewCtx) {
        let Some(t) = Self::trace(cx) else {
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
        let mut pick: Option<String> = None;
        ui.columns(2, |cols| {
            pick = self.roofline(&mut cols[0], &e.ops, d).or(pick.take());
            pick = self.table(&mut cols[1], &e.ops).or(pick.take());
        });
        if let Some(name) = pick {
            if let Some(&span) = ops.op_spans.get(&name).and_then(|v| v.first()) {
                cx.emit(Command::RevealSpan(SpanRef { trace: t.id, span }));
            }
            self.selected = Some(name);
        }
    }

    /// The ops on the roofline; returns an op picked by a click.
    fn roofline(
        &self,
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
        let mut units: Vec<strobe_analysis::efficiency::Unit> = ops.iter().map(|o| o.unit).collect();
        units.sort_by_key(|u| u.as_str());
        units.dedup();
        let (x0, x1) = (-2.0f64, 4.0f64);
        let resp = Plot::new("trace_roofline")
            .legend(Legend::default())
            .height((ui.available_height() - 4.0).max(180.0))
            .x_axis_label("arithmetic intensity (log10 FLOP/byte)")
            .y_axis_label("achieved (log10 FLOP/s)")
            .allow_scroll(false)
            .show(ui, |p| {
                if let Some(bw) = d.bandwidth() {
                    for u in &units {
                        let Some(peak) = d.flops(*u) else { continue };
                        let line: PlotPoints = (0..=60)
                            .map(|i| {
                                let x = x0 + (x1 - x0) * i as f64 / 60.0;
                                [x, (10f64.powf(x) * bw).min(peak).log10()]
                            })
                            .collect();
                        p.line(Line::new(format!("ceiling {}", u.as_str()), line).color(CEILING).width(1.0));
                    }
                }
                for bound in [Some(Bound::Compute), Some(Bound::Memory), None] {
                    let of: Vec<_> = pts.iter().filter(|(o, _, _)| o.figures.bound == bound).collect();
                    for (o, x, y) in of {
                        let r = 2.0 + 10.0 * (o.gpu_ns as f64 / max_gpu).sqrt() as f32;
                        let name = match bound {
                            Some(b) => format!("{}-bound", b.as_str()),
                            None => "unbounded".into(),
                        };
                        p.points(Points::new(name, vec![[*x, *y]]).radius(r).color(bound_color(bound)).filled(true));
                        if self.selected.as_deref() == Some(o.name.as_str()) {
                            p.points(
                                Points::new("selected", vec![[*x, *y]])
                                    .radius(r + 4.0)
                                    .shape(MarkerShape::Circle)
                                    .filled(false)
                                    .color(Color32::WHITE),
                            );
                        }
                    }
                }
                p.pointer_coordinate()
            });
        // a click picks the nearest point (within 0.15 decades)
        if resp.response.clicked() {
            if let Some(c) = resp.inner {
                let near = pts
                    .iter()
                    .map(|(o, x, y)| (o, (x - c.x).hypot(y - c.y)))
                    .filter(|(_, dist)| *dist < 0.15)
                    .min_by(|a, b| a.1.total_cmp(&b.1));
                return near.map(|(o, _)| o.name.clone());
            }
        }
        None
    }

    /// The ops ranked by time lost; returns an op whose row was clicked.
    fn table(&self, ui: &mut egui::Ui, ops: &[OpEfficiency]) -> Option<String> {
        use egui_extras::{Column, TableBuilder};
        let mut picked = None;
        TableBuilder::new(ui)
            .id_salt("efficiency_ops")
            .striped(true)
            .sense(egui::Sense::click())
            .column(Column::remainder().at_least(160.0).clip(true))
            .columns(Column::auto().at_least(60.0), 6)
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
        picked
    }
}
