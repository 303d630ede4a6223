//! `--screenshot`: wait for the loads and analyses, lay out, grab a frame, write the PNG, close.

use super::StrobeApp;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

pub struct ScreenshotState {
    pub path: PathBuf,
    /// Optional window to show, in ms from the start of the workspace.
    pub view_ms: Option<(f64, f64)>,
    /// Optional kernel (name substring) to select: highlights it and shows its longest.
    pub select: Option<String>,
    frames: u32,
    requested: bool,
    pub done: Arc<Mutex<Option<Result<(), String>>>>,
}

impl ScreenshotState {
    pub fn new(path: PathBuf, view_ms: Option<(f64, f64)>, select: Option<String>) -> Self {
        ScreenshotState { path, view_ms, select, frames: 0, requested: false, done: Arc::new(Mutex::new(None)) }
    }
}

impl StrobeApp {
    pub(super) fn screenshot_step(&mut self, ctx: &egui::Context) {
        let Some(s) = &mut self.screenshot else { return };
        ctx.request_repaint();
        if s.requested {
            if s.done.lock().map(|d| d.is_some()).unwrap_or(true) {
                ctx.send_viewport_cmd(egui::ViewportCommand::Close);
            }
            return;
        }
        if self.loader.busy()
            || self.ws.traces.iter().any(|t| t.derived.pending())
            || self.ranks.busy()
            || (crate::pipeline::PipelinePane::applies(&self.ws) && !self.ws.pipeline_settled)
            || (self.ws.traces.is_empty()
                && self.ws.summaries.is_none()
                && self.errors.is_empty()
                && self.kernel_sol.is_none()
                && self.memory.is_none())
        {
            return;
        }
        s.frames += 1;
        if s.frames == 2 {
            let view = s.view_ms;
            let select = s.select.clone();
            if let (Some(name), Some(p), Some(doc)) = (&select, self.kernel_sol.as_mut(), &self.ws.ncu) {
                p.selected = doc.report.kernels.iter().position(|k| k.name.contains(name.as_str())).or(p.selected);
            }
            if let Some(name) = select {
                let found =
                    self.ws.traces.iter().find_map(|t| {
                        t.kernels().iter().find(|k| k.name.contains(&name)).map(|k| (t.id, k.name.clone()))
                    });
                if let Some((id, n)) = found {
                    self.select_kernel(id, &n);
                }
            }
            if let (Some((a, b)), Some((t0, _))) = (view, self.ws.extent()) {
                let w = self.timeline.plot_width;
                self.timeline_state.view.fit(t0 + (a * 1e6) as i64, t0 + (b * 1e6) as i64, w);
            }
            return;
        }
        if s.frames >= 6 {
            let path = s.path.clone();
            let done = s.done.clone();
            let errors = self.errors.clone();
            s.requested = true;
            ctx.send_viewport_cmd(egui::ViewportCommand::Screenshot(egui::ScreenshotCallback::new(move |img| {
                let r = save_png(&img, &path).and_then(|()| {
                    if errors.is_empty() {
                        Ok(())
                    } else {
                        Err(format!("written, but loading failed: {}", errors.join("; ")))
                    }
                });
                if let Ok(mut d) = done.lock() {
                    *d = Some(r);
                }
            })));
        }
    }
}

pub fn save_png(img: &egui::ColorImage, path: &std::path::Path) -> Result<(), String> {
    let [w, h] = img.size;
    let mut bytes = Vec::with_capacity(w * h * 4);
    for p in &img.pixels {
        bytes.extend_from_slice(&p.to_srgba_unmultiplied());
    }
    let buf = image::RgbaImage::from_raw(w as u32, h as u32, bytes).ok_or("screenshot has the wrong size")?;
    buf.save_with_format(path, image::ImageFormat::Png).map_err(|e| format!("{}: {e}", path.display()))
}
