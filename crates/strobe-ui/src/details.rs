//! Details of the selection: name, category, lane, start, duration, args (shapes, grid/block,
//! bytes, bandwidth), the launch ↔ kernel link, and the CPU stack (ops and python frames)
//! above the launch.

use crate::commands::Command;
use crate::view_ctx::ViewCtx;
use crate::workspace::{SpanRef, TraceId};
use strobe_analysis::report::fmt_ns;
use strobe_analysis::span_durations::NameDurations;
use strobe_model::{flags, SpanKind};
use strobe_store::Store;

#[derive(Default)]
pub struct DetailsPane {
    /// The durations of every span with the selected span's name (trace, name id).
    histogram: Option<((TraceId, u32), NameDurations)>,
}

impl DetailsPane {
    pub fn ui(&mut self, ui: &mut egui::Ui, cx: &mut ViewCtx) {
        let (ws, sel) = (cx.ws, cx.sel);
        egui::ScrollArea::vertical().id_salt("details_scroll").auto_shrink([false, false]).show(ui, |ui| {
            ui.heading("Details");
            if let Some(r) = sel.span {
                if let Some(t) = ws.trace(r.trace) {
                    span_details(ui, t, r, ws.origin(), cx);
                    self.histogram_ui(ui, t, r);
                }
            } else {
                ui.weak("Click a span on the timeline, a kernel in the table, or search (/).");
            }
            if let Some(k) = selected_kernel(cx) {
                ui.separator();
                ui.strong("Kernel (all occurrences)");
                crate::name_line::name_line(ui, &k.name, false);
                egui::Grid::new("kernel_stats_grid").num_columns(2).show(ui, |ui| {
                    for (a, b) in [
                        ("count", k.count.to_string()),
                        ("total", fmt_ns(k.total_ns)),
                        ("mean", fmt_ns(k.mean_ns)),
                        ("min", fmt_ns(k.min_ns)),
                        ("max", fmt_ns(k.max_ns)),
                        ("% of GPU kernel time", format!("{:.1}%", k.pct_kernel_time)),
                    ] {
                        ui.label(a);
                        ui.label(b);
                        ui.end_row();
                    }
                });
            }
        });
    }
}

/// The kernel selected from the table, when the selection is that kernel: no span selected,
/// or one of its occurrences. Its figures never stay under a span of another name.
fn selected_kernel<'a>(cx: &ViewCtx<'a>) -> Option<&'a strobe_analysis::kernels::KernelStat> {
    let (ti, name) = cx.sel.kernel.as_ref()?;
    let t = cx.ws.trace(*ti)?;
    if let Some(r) = cx.sel.span {
        if r.trace != *ti || t.store.span_name(r.span) != name {
            return None;
        }
    }
    t.kernels().iter().find(|k| &k.name == name)
}

fn span_link(ui: &mut egui::Ui, st: &Store, trace: TraceId, span: u32, cx: &mut ViewCtx) {
    let kind = SpanKind::from_u8(st.span_meta(span).kind);
    let txt = format!(
        "{} · {:?} · {}",
        crate::timeline::truncate(st.span_name(span), 70),
        kind,
        fmt_ns(st.span_end(span) - st.span_start(span))
    );
    if ui.link(txt).on_hover_text(st.span_name(span)).clicked() {
        cx.emit(Command::RevealSpan(SpanRef { trace, span }));
    }
}

impl DetailsPane {
    /// Every span of the selected span's name: how this one sits among them.
    fn histogram_ui(&mut self, ui: &mut egui::Ui, t: &crate::workspace::Trace, r: SpanRef) {
        let st = &*t.store;
        let key = (r.trace, st.span_meta(r.span).name);
        if self.histogram.as_ref().map(|h| h.0) != Some(key) {
            self.histogram = Some((key, NameDurations::of(st, key.1)));
        }
        let Some((_, d)) = &self.histogram else { return };
        if d.durs.len() < 2 {
            return;
        }
        let this = st.span_end(r.span) - st.span_start(r.span);
        ui.separator();
        ui.strong(format!("All {} spans of this name", d.durs.len()));
        ui.label(format!(
            "median {} · p90 {} · max {} · this one is longer than {:.0} % of them",
            fmt_ns(d.quantile(0.5).unwrap_or(0)),
            fmt_ns(d.quantile(0.9).unwrap_or(0)),
            fmt_ns(*d.durs.last().unwrap_or(&0)),
            100.0 * d.durs.partition_point(|&x| x < this) as f64 / d.durs.len() as f64
        ));
        let bins = d.bins(30);
        let log = d.log_bins();
        // x in µs; log bins are drawn on a log10 axis
        let xf = |ns: f64| if log { (ns / 1e3).max(1e-9).log10() } else { ns / 1e3 };
        let bars: Vec<egui_plot::Bar> = bins
            .iter()
            .enumerate()
            .map(|(i, &(lo, c))| {
                let hi = bins.get(i + 1).map(|b| b.0).unwrap_or(*d.durs.last().unwrap() as f64);
                let (a, b) = (xf(lo), xf(hi.max(lo)));
                egui_plot::Bar::new((a + b) / 2.0, c as f64).width((b - a).max(1e-9) * 0.95)
            })
            .collect();
        let marker = xf(this as f64);
        egui_plot::Plot::new(("span_duration_hist", key.0 .0, key.1))
            .height(110.0)
            .allow_drag(false)
            .allow_zoom(false)
            .allow_scroll(false)
            .show_y(false)
            .x_axis_label(if log { "duration (log10 µs)" } else { "duration (µs)" })
            .show(ui, |p| {
                p.bar_chart(egui_plot::BarChart::new("durations", bars).color(egui::Color32::from_rgb(110, 150, 200)));
                p.vline(
                    egui_plot::VLine::new("this span", marker).color(egui::Color32::from_rgb(250, 200, 60)).width(2.0),
                );
            });
    }
}

fn span_details(ui: &mut egui::Ui, t: &crate::workspace::Trace, r: SpanRef, origin: i64, cx: &mut ViewCtx) {
    let st = &*t.store;
    let m = st.span_meta(r.span);
    let kind = SpanKind::from_u8(m.kind);
    let (s, e) = (st.span_start(r.span), st.span_end(r.span));
    crate::name_line::name_line(ui, st.span_name(r.span), true);
    egui::Grid::new("span_grid").num_columns(2).striped(true).show(ui, |ui| {
        let mut kv = |a: &str, b: String| {
            ui.label(a);
            ui.label(b);
            ui.end_row();
        };
        kv("category", st.string(m.cat).to_string());
        kv("kind", format!("{kind:?}"));
        kv("lane", st.lanes.get(m.lane as usize).map(|l| l.name.clone()).unwrap_or_default());
        kv("trace", t.label.clone());
        // the ruler's time base: the shared axis from the workspace's start
        kv("start", fmt_ns(t.to_shared(s) - origin));
        let unclosed = m.flags as u16 & flags::UNCLOSED != 0;
        kv("duration", if unclosed { format!("{} (never closed)", fmt_ns(e - s)) } else { fmt_ns(e - s) });
        kv("depth", m.depth.to_string());
    });
    // a collective's bytes and bandwidth first: its args follow
    if let Some(ti) = cx.ws.traces.iter().position(|x| x.id == r.trace) {
        crate::collective_bandwidth::details(ui, cx.ws, ti, r.span);
    }
    // a graph launch or a kernel a graph ran: its graph, replay and node first
    crate::graph_details::ui(ui, t, r, cx);
    let args = st.span_args(r.span);
    if !args.is_empty() {
        ui.separator();
        ui.strong("Args");
        let parsed: Option<serde_json::Map<String, serde_json::Value>> = serde_json::from_str(&args).ok();
        match parsed {
            Some(map) => {
                egui::Grid::new("args_grid").num_columns(2).striped(true).show(ui, |ui| {
                    for (k, v) in &map {
                        ui.label(k);
                        let txt = match v {
                            serde_json::Value::String(s) => s.clone(),
                            other => other.to_string(),
                        };
                        ui.add(egui::Label::new(egui::RichText::new(txt).monospace()).wrap());
                        ui.end_row();
                    }
                    if let Some(b) = map.get("bytes").and_then(|b| b.as_f64()) {
                        if e > s {
                            ui.label("bandwidth");
                            ui.label(format!("{:.2} GB/s", b / (e - s) as f64));
                            ui.end_row();
                        }
                    }
                });
            }
            None => {
                ui.monospace(args);
            }
        }
    }
    // launch ↔ kernel
    if kind.is_gpu_activity() {
        ui.separator();
        match st.launch_of(r.span) {
            Some(l) => {
                ui.strong("Launched by");
                span_link(ui, st, r.trace, l, cx);
                ui.label(format!("launch to start: {}", fmt_ns(s - st.span_start(l))));
                let stack = st.enclosing_stack(l);
                if !stack.is_empty() {
                    ui.strong("CPU stack (outermost first)");
                    for sp in stack {
                        span_link(ui, st, r.trace, sp, cx);
                    }
                }
            }
            None => {
                ui.weak("No launch linked in this trace.");
            }
        }
    } else {
        let ks: Vec<u32> = st.launched_by(r.span).collect();
        if !ks.is_empty() {
            ui.separator();
            ui.strong(if ks.len() == 1 { "Launches" } else { "Flows to" });
            for k in ks.into_iter().take(50) {
                span_link(ui, st, r.trace, k, cx);
            }
        }
        let incoming: Vec<u32> = st.flows_to(r.span).map(|f| f.from).collect();
        if !incoming.is_empty() {
            ui.strong("Flows from");
            for k in incoming.into_iter().take(50) {
                span_link(ui, st, r.trace, k, cx);
            }
        }
        let stack = st.enclosing_stack(r.span);
        if !stack.is_empty() {
            ui.separator();
            ui.strong("Stack (outermost first)");
            for sp in stack {
                span_link(ui, st, r.trace, sp, cx);
            }
        }
    }
}
