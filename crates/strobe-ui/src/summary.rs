//! The summary strip: the three questions per device — does the GPU stall (idle % and its
//! breakdown), what is it running (top kernel), does comm overlap (overlap %) — with the
//! numbers of `strobe report`'s headline: over the steps, else the capture range, else the
//! whole trace, and it says which.

use crate::commands::Command;
use crate::view_ctx::ViewCtx;
use strobe_analysis::headline::Covers;
use strobe_analysis::report::fmt_ns;

const SCOPE_HELP: &str =
    "The idle and overlap figures cover the steps (first step start to last step end) where there \
are steps, else the cudaProfilerStart/Stop capture range, else the whole trace: CUDA init and warm-up before the \
first step are left out. Hover a GPU's idle for the whole trace's figure.";

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
            let headline = t.headline();
            if let Some(h) = headline.filter(|h| !h.devices.is_empty()) {
                ui.separator();
                // what the figures after it cover: the steps, the capture range or the trace
                ui.weak(h.scope_text()).on_hover_text(SCOPE_HELP);
            }
            for g in t.gpu() {
                ui.separator();
                ui.label(format!("GPU {}:", g.device));
                let Some(d) = headline.and_then(|h| h.device(g.device)) else { continue };
                let hot = d.idle_pct > 20.0;
                let colour = if hot { egui::Color32::from_rgb(235, 120, 90) } else { ui.visuals().text_color() };
                let r = ui.label(egui::RichText::new(format!("idle {:.1}%", d.idle_pct)).color(colour));
                let whole = if headline.is_some_and(|h| h.covers != Covers::Trace) {
                    format!("\nwhole trace: idle {} of {} ({:.1}%)", fmt_ns(g.idle_ns), fmt_ns(g.window_ns), g.idle_pct)
                } else {
                    String::new()
                };
                r.on_hover_text(format!(
                    "idle {} of {} ({})\nhost wait {} ({:.1}%)\nkernel wait {} ({:.1}%)\nother {} ({:.1}%)\nthreshold {} · {} gaps ≥ threshold{whole}",
                    fmt_ns(d.idle_ns),
                    fmt_ns(d.window_ns),
                    headline.map(|h| h.scope_text()).unwrap_or_default(),
                    fmt_ns(d.host_wait_ns),
                    d.pct_of_idle(d.host_wait_ns),
                    fmt_ns(d.kernel_wait_ns),
                    d.pct_of_idle(d.kernel_wait_ns),
                    fmt_ns(d.other_ns),
                    d.pct_of_idle(d.other_ns),
                    fmt_ns(d.threshold_ns),
                    d.long_gaps
                ));
                ui.weak(format!(
                    "(host {:.0}% · kernel {:.0}% · other {:.0}%)",
                    d.pct_of_idle(d.host_wait_ns),
                    d.pct_of_idle(d.kernel_wait_ns),
                    d.pct_of_idle(d.other_ns)
                ));
                // the idle threshold the split is at (View ▸ Idle threshold)
                ui.weak(format!("gaps ≥ {}", crate::units::threshold_us(d.threshold_ns)))
                    .on_hover_text("host wait: idle gaps at least this long; kernel wait: shorter ones (View ▸ Idle threshold)");
                ui.label(format!("· comm overlap {:.1}%", d.overlap_pct));
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
            if step_losses(ui, t, cx.sel) {
                cx.emit(Command::ShowSteps(t.id));
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

/// The step's two largest losses in words (`step_view::words`): the step picked in the Steps
/// tab when it is this trace's, else the median step. Nothing before the attribution arrives
/// or where it has no step. True when clicked (a link to the Steps tab).
fn step_losses(ui: &mut egui::Ui, t: &crate::workspace::Trace, sel: &crate::commands::Selection) -> bool {
    let Some(figs) = t.step_figures() else { return false };
    let picked = sel.step.filter(|(id, _)| *id == t.id).map(|(_, i)| i);
    let Some(i) = picked.or(figs.median) else { return false };
    let Some(s) = figs.steps.get(i) else { return false };
    let Some(words) = crate::step_view::words::top_losses(s, 2) else { return false };
    ui.separator();
    let which = if picked.is_some() { "selected step" } else { "median step" };
    ui.link(format!("step: {words}"))
        .on_hover_text(format!(
            "the {which}'s two largest losses: {} ({}); click: the Steps tab, every step split",
            s.step,
            fmt_ns(s.dur_ns)
        ))
        .clicked()
}
