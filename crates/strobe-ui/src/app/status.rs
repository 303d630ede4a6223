//! Status lines under the menu: loads in flight (progress, cancel), errors, notices (a saved
//! session, a missing file dialog), and a warning for every open file that was cut short.

use super::StrobeApp;

/// A line the status area shows until dismissed; the detail shows on hover.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Notice {
    pub text: String,
    pub detail: Option<String>,
}
use crate::loader::LoadEvent;
use std::sync::atomic::Ordering::Relaxed;

impl StrobeApp {
    /// Takes the finished loads into the workspace.
    pub(super) fn poll_loads(&mut self, ctx: &egui::Context) {
        for ev in self.loader.poll() {
            match ev {
                LoadEvent::Loaded { doc, batch } => {
                    if self.replacing == Some(batch) {
                        // Open… replaces what is open, once something of the new batch is here
                        self.replacing = None;
                        self.close_all();
                    }
                    self.add_document(doc);
                }
                LoadEvent::Failed { path, error } => {
                    let msg = naming_the_file(&path, error);
                    eprintln!("strobe: {msg}");
                    self.errors.push(msg);
                }
            }
        }
        if !self.loader.jobs.iter().any(|j| Some(j.batch) == self.replacing) {
            // every file of the replacing batch failed: what was open stays
            self.replacing = None;
        }
        if self.loader.busy() || self.ws.traces.iter().any(|t| !t.derived.overview_ready()) {
            // the overview follows the first frame within a second: drawn as soon as it is there
            ctx.request_repaint_after(std::time::Duration::from_millis(50));
        } else if self.ws.traces.iter().any(|t| t.derived.pending()) {
            // figures still coming from the analyses thread (every pane's): drawn when they arrive
            ctx.request_repaint_after(std::time::Duration::from_millis(200));
        }
    }

    pub(super) fn status_lines(&mut self, ui: &mut egui::Ui) {
        let jobs = &self.loader.jobs;
        if jobs.len() > 4 {
            // many ranks: one bar for all of them
            ui.horizontal(|ui| {
                let done: f32 = jobs.iter().map(|j| j.fraction()).sum();
                let opened = self.ws.traces.len();
                ui.label(format!("Loading {} traces ({opened} open)", jobs.len()));
                ui.add(egui::ProgressBar::new(done / jobs.len() as f32).desired_width(300.0).text(format!(
                    "{:.0} of {} files' bytes",
                    done,
                    jobs.len()
                )));
                if ui.button("Cancel all").clicked() {
                    jobs.iter().for_each(|j| j.cancel());
                }
            });
        }
        for j in jobs.iter().filter(|_| jobs.len() <= 4) {
            ui.horizontal(|ui| {
                let p = &j.progress;
                let (d, t, e) = (p.bytes_done.load(Relaxed), p.bytes_total.load(Relaxed), p.events.load(Relaxed));
                ui.label(format!("Loading {}", j.path.display()));
                // read to the end: the analyses its pane shows run next, on the same thread
                let stage = if t > 0 && d >= t { " · analysing" } else { "" };
                ui.add(egui::ProgressBar::new(j.fraction()).desired_width(300.0).text(format!(
                    "{:.1} / {:.1} MiB · {} events · {:.1} s{stage}",
                    d as f64 / 1048576.0,
                    t as f64 / 1048576.0,
                    e,
                    j.started.elapsed().as_secs_f32()
                )));
                if j.cancelled() {
                    ui.weak("cancelling…");
                } else if ui.button("Cancel").clicked() {
                    j.cancel();
                }
            });
        }
        let mut dismiss = None;
        for (i, e) in self.errors.iter().enumerate() {
            ui.horizontal(|ui| {
                ui.colored_label(egui::Color32::from_rgb(240, 100, 80), format!("Error: {e}"));
                if ui.small_button("x").clicked() {
                    dismiss = Some(i);
                }
            });
        }
        if let Some(i) = dismiss {
            self.errors.remove(i);
        }
        let mut dismiss = None;
        for (i, n) in self.notices.iter().enumerate() {
            ui.horizontal(|ui| {
                let r = ui.label(&n.text);
                if let Some(d) = &n.detail {
                    r.on_hover_text(d);
                }
                if ui.small_button("x").clicked() {
                    dismiss = Some(i);
                }
            });
        }
        if let Some(i) = dismiss {
            self.notices.remove(i);
        }
        // a cut file stays marked while it is open: its figures cover only what was read
        for t in &self.ws.traces {
            if let Some(cut) = &t.store.meta.load.truncated {
                ui.colored_label(
                    egui::Color32::from_rgb(230, 180, 60),
                    format!("Warning: {}: {}", t.label, cut.message()),
                );
            }
        }
    }
}

/// A failed load's message, naming its file once: the importers' errors name it already, a
/// few of the loader's own do not.
fn naming_the_file(path: &std::path::Path, error: String) -> String {
    let shown = path.display().to_string();
    if error.contains(&shown) {
        error
    } else {
        format!("{shown}: {error}")
    }
}

/// "Drop to open" over the window while files hover over it.
pub(super) fn drop_overlay(ctx: &egui::Context) {
    if ctx.input(|i| i.raw.hovered_files.is_empty()) {
        return;
    }
    let painter = ctx.layer_painter(egui::LayerId::new(egui::Order::Foreground, egui::Id::unique("strobe_drop")));
    let r = ctx.content_rect();
    painter.rect_filled(r, 0.0, egui::Color32::from_black_alpha(160));
    painter.text(
        r.center(),
        egui::Align2::CENTER_CENTER,
        "Drop to open",
        egui::FontId::proportional(28.0),
        egui::Color32::WHITE,
    );
}
