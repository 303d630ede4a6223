//! The memory pane's frame benchmark: whole pane frames (summary, active-memory timeline,
//! history bar, segment map) built headlessly on a 1920×1080 screen, in the situations a user
//! puts it in — still, re-rasterised, panned while zoomed, scrubbed one entry a frame.

use super::MemoryPane;
use crate::documents::MemoryDoc;
use std::time::Instant;
use strobe_analysis::stats;

#[derive(Clone, Debug)]
pub struct MemFrameTiming {
    pub situation: &'static str,
    pub median_ms: f64,
    pub p90_ms: f64,
    pub max_ms: f64,
    /// Rasters made over the frames (0 when the view never changed).
    pub rasters: usize,
    /// Bands painted by the last raster.
    pub bands: usize,
    /// Median time to make one raster (on a worker when it exceeds a frame's budget).
    pub raster_median_ms: f64,
    pub columns: usize,
}

pub fn memory_frame_bench(doc: &MemoryDoc, mut pane: MemoryPane, frames: usize) -> Vec<MemFrameTiming> {
    let ctx = egui::Context::default();
    let screen = egui::Rect::from_min_size(egui::Pos2::ZERO, egui::vec2(1920.0, 1080.0));
    let run = |pane: &mut MemoryPane| -> f64 {
        let input = egui::RawInput { screen_rect: Some(screen), ..Default::default() };
        let t0 = Instant::now();
        let mut o = ctx.run_ui(input, |ui| {
            egui::CentralPanel::default().show(ui, |ui| pane.snapshot_ui(ui, doc, None));
        });
        o.textures_delta.clear(); // no painter here to upload textures to
        std::hint::black_box(o.shapes.len());
        t0.elapsed().as_secs_f64() * 1e3
    };
    for _ in 0..3 {
        run(&mut pane);
    }
    let n = pane.state(doc).map_or(0, |s| s.timeline.len);
    let full = n as f64 + 1.0;
    let mut out = Vec::new();
    type Step = fn(&mut MemoryPane, &MemoryDoc, usize, f64);
    let situations: [(&'static str, Step); 5] = [
        ("still, whole trace", |_, _, _, _| {}),
        ("whole trace, re-rasterised every frame", |p, doc, _, _| {
            if let Some(s) = p.state(doc) {
                s.active.invalidate();
            }
        }),
        ("1/10 of the trace, panned 1 px a frame", |p, doc, i, full| {
            if let Some(s) = p.state(doc) {
                let span = full / 10.0;
                let k0 = full * 0.45 + span / 1460.0 * i as f64;
                s.active.view = (k0, k0 + span);
            }
        }),
        ("1/1000 of the trace, panned 1 px a frame", |p, doc, i, full| {
            if let Some(s) = p.state(doc) {
                let span = (full / 1000.0).max(8.0);
                let k0 = full * 0.45 + span / 1460.0 * i as f64;
                s.active.view = (k0, k0 + span);
            }
        }),
        ("history scrubbed one entry a frame", |p, doc, i, full| {
            if let Some(s) = p.state(doc) {
                s.active.view = (0.0, full);
                let k = (full as usize / 2 + i).min(full as usize - 1);
                s.seek(&doc.snapshot, k, false);
            }
        }),
    ];
    for (situation, step) in situations {
        step(&mut pane, doc, 0, full);
        run(&mut pane);
        let r0 = pane.state(doc).map_or(0, |s| s.active.rasters_made);
        let mut times = Vec::with_capacity(frames);
        let mut raster_ms = Vec::new();
        let mut made = r0;
        for i in 0..frames {
            step(&mut pane, doc, i + 1, full);
            let t = run(&mut pane);
            times.push(t);
            // paced like a 60 Hz display, so rasters on a worker can land between frames
            std::thread::sleep(std::time::Duration::from_secs_f64((1000.0 / 60.0 - t).max(0.0) / 1e3));
            if let Some(s) = pane.state(doc) {
                if s.active.rasters_made > made {
                    made = s.active.rasters_made;
                    raster_ms.push(s.active.last_raster_ms);
                }
            }
        }
        // let a raster still on a worker land, so the next situation starts clean
        while pane.state(doc).is_some_and(|s| s.active.raster_pending()) {
            std::thread::sleep(std::time::Duration::from_millis(5));
            run(&mut pane);
        }
        if let Some(s) = pane.state(doc) {
            if s.active.rasters_made > made {
                raster_ms.push(s.active.last_raster_ms);
            }
        }
        let st = pane.state(doc);
        let (rasters, bands, columns) =
            st.map_or((0, 0, 0), |s| (s.active.rasters_made - r0, s.active.bands_painted, s.active.columns_drawn));
        let max = times.iter().cloned().fold(0.0, f64::max);
        out.push(MemFrameTiming {
            situation,
            median_ms: stats::median(&times).unwrap_or(0.0),
            p90_ms: stats::percentile(&times, 90.0).unwrap_or(0.0),
            max_ms: max,
            rasters,
            bands,
            columns,
            raster_median_ms: stats::median(&raster_ms).unwrap_or(0.0),
        });
    }
    out
}
