//! The summary strip: the three questions per device — does the GPU stall (idle % and its
//! breakdown), what is it running (top kernel), does comm overlap (overlap %) — with the
//! numbers of `strobe report`.

use crate::commands::Command;
use crate::view_ctx::ViewCtx;
use strobe_analysis::report::fmt_ns;

pub fn ui(ui: &mut egui::Ui, cx: &mut ViewCtx) {
    for t in &cx.ws.traces {
        ui.horizontal_wrapped(|ui| {
            ui.strong(&t.label);
            if !t.derived.overview_ready() {
                // the first frames after a load: the figures follow within a second
                ui.spinner();
                ui.weak("measuring GPU time, idle, kernels…");
                return;
            }
            if t.gpu().is_empty() {
                ui.weak("no GPU activity");
            }
            for g in t.gpu() {
                ui.separator();
                ui.label(format!("GPU {}:", g.device));
                let idle = t.idle().iter().find(|d| d.device == g.device);
                let r = ui.label(egui::RichText::new(format!("idle {:.1}%", g.idle_pct)).color(if g.idle_pct > 20.0 { egui::Color32::from_rgb(235, 120, 90) } else { ui.visuals().text_color() }));
                if let Some(d) = idle {
                    r.on_hover_text(format!(
                        "idle {} of {} window\nhost wait {} ({:.1}%)\nkernel wait {} ({:.1}%)\nother {} ({:.1}%)\nthreshold {} · {} gaps ≥ threshold",
                        fmt_ns(g.idle_ns),
                        fmt_ns(g.window_ns),
                        fmt_ns(d.host_wait_ns),
                        d.pct_of_idle(d.host_wait_ns),
                        fmt_ns(d.kernel_wait_ns),
                        d.pct_of_idle(d.kernel_wait_ns),
                        fmt_ns(d.other_ns),
                        d.pct_of_idle(d.other_ns),
                        fmt_ns(d.threshold_ns),
                        d.long_gaps
                    ));
                    ui.weak(format!("(host {:.0}% · kernel {:.0}% · other {:.0}%)", d.pct_of_idle(d.host_wait_ns), d.pct_of_idle(d.kernel_wait_ns), d.pct_of_idle(d.other_ns)));
                    // the idle threshold the split is at (View ▸ Idle threshold)
                    ui.weak(format!("gaps ≥ {}", crate::units::threshold_us(d.threshold_ns)))
                        .on_hover_text("host wait: idle gaps at least this long; kernel wait: shorter ones (View ▸ Idle threshold)");
                }
                ui.label(format!("· comm overlap {:.1}%", g.overlap_pct));
            }
            // none while the per-op figures are computed (the app repaints while figures are due)
            let mfu: Vec<f64> = t.ops().map(|o| o.efficiency.steps.iter().filter_map(|s| s.mfu).collect()).unwrap_or_default();
            if !mfu.is_empty() {
                ui.separator();
                let m = strobe_analysis::stats::median(&mfu).unwrap_or(0.0);
                ui.label(format!("MFU {:.1}%", m * 100.0)).on_hover_text(
                    "median over the steps of model FLOPs (from the ops' recorded shapes) ÷ (step time × the device's peak); the Efficiency tab has each op",
                );
            }
            if let Some(k) = t.kernels().first() {
                ui.separator();
                let name = crate::timeline::truncate(&k.name, 48);
                if ui.link(format!("top kernel: {name} ({:.1}%)", k.pct_kernel_time)).on_hover_text(&k.name).clicked() {
                    cx.emit(Command::SelectKernel { trace: t.id, name: k.name.clone() });
                }
            }
        });
    }
}
