//! Span colours: the kind picks a family (compute green-teal, comm orange, memory purple,
//! CPU op blue, python yellow, runtime grey, annotations pink); a hash of the name picks a
//! stable hue inside it, so a kernel keeps its colour across zooms, runs and files.

use egui::ecolor::Hsva;
use egui::Color32;
use strobe_model::{is_comm_kernel, SpanKind};

fn name_hash(s: &str) -> u64 {
    // FNV-1a: stable across builds and platforms (std's hasher is not).
    let mut h: u64 = 0xcbf29ce484222325;
    for b in s.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    h
}

pub fn span_color(kind: SpanKind, name: &str) -> Color32 {
    let h = name_hash(name);
    let j = ((h % 1009) as f32 / 1009.0) - 0.5; // [-0.5, 0.5)
    let k = (((h >> 20) % 997) as f32 / 997.0) - 0.5;
    let (hue, sat, val) = match kind {
        SpanKind::Kernel if is_comm_kernel(name) => (24.0 + 16.0 * j, 0.80 + 0.1 * k, 0.95),
        SpanKind::Kernel => (160.0 + 70.0 * j, 0.55 + 0.2 * k, 0.80 + 0.1 * k),
        SpanKind::Memcpy | SpanKind::Memset => (285.0 + 24.0 * j, 0.50 + 0.1 * k, 0.85),
        SpanKind::CpuOp => (215.0 + 30.0 * j, 0.45 + 0.15 * k, 0.88),
        SpanKind::PythonFunction => (52.0 + 14.0 * j, 0.45 + 0.1 * k, 0.85),
        SpanKind::CudaRuntime | SpanKind::CudaDriver | SpanKind::OsRuntime => (200.0, 0.08, 0.62 + 0.2 * j),
        SpanKind::UserAnnotation | SpanKind::GpuAnnotation | SpanKind::Nvtx => (330.0 + 20.0 * j, 0.35, 0.85),
        _ => (360.0 * (j + 0.5), 0.30, 0.75),
    };
    let hue = hue.rem_euclid(360.0) / 360.0;
    Hsva::new(hue, sat.clamp(0.0, 1.0), val.clamp(0.0, 1.0), 1.0).into()
}

/// A folded run: the colour of its longest span, washed towards the background by how much
/// of the run's extent is actually busy.
pub fn folded_color(c: Color32, density: f32, bg: Color32) -> Color32 {
    let a = 0.35 + 0.5 * density.clamp(0.0, 1.0);
    lerp(bg, c, a)
}

pub fn lerp(a: Color32, b: Color32, t: f32) -> Color32 {
    let f = |x: u8, y: u8| (x as f32 + (y as f32 - x as f32) * t).round().clamp(0.0, 255.0) as u8;
    Color32::from_rgb(f(a.r(), b.r()), f(a.g(), b.g()), f(a.b(), b.b()))
}

pub const OVERLAPPED: Color32 = Color32::from_rgb(60, 140, 255);
pub const EXPOSED_COMM: Color32 = Color32::from_rgb(235, 90, 50);
pub const MEMORY_BUSY: Color32 = Color32::from_rgb(80, 190, 120);
pub const IDLE: Color32 = Color32::from_rgb(175, 175, 190);
pub const IDLE_TINT: Color32 = Color32::from_rgba_premultiplied(70, 70, 80, 110);
pub const SELECTED: Color32 = Color32::from_rgb(255, 255, 255);
pub const SELECTED_ON_LIGHT: Color32 = Color32::from_rgb(0, 0, 0);
pub const MATCH: Color32 = Color32::from_rgb(255, 220, 0);
pub const MARK: Color32 = Color32::from_rgb(250, 200, 60);
pub const MARK_ON_LIGHT: Color32 = Color32::from_rgb(180, 110, 0);
/// The measure tool's bracket and duration.
pub const MEASURE: Color32 = Color32::from_rgb(120, 230, 255);
pub const MEASURE_ON_LIGHT: Color32 = Color32::from_rgb(0, 110, 160);
/// The critical path's outline.
pub const CRITICAL: Color32 = Color32::from_rgb(255, 70, 200);
pub const CRITICAL_ON_LIGHT: Color32 = Color32::from_rgb(190, 0, 130);
/// Counter lines and the allocated memory level.
pub const LINE: Color32 = Color32::from_rgb(120, 200, 255);
pub const LINE_ON_LIGHT: Color32 = Color32::from_rgb(20, 100, 200);

impl crate::workspace::Trace {
    pub fn color(&self, name: u32, kind: SpanKind) -> Color32 {
        let mut cache = self.name_colors.borrow_mut();
        if let Some(c) = cache.get(name as usize) {
            if *c != 0 {
                let [r, g, b, _] = c.to_le_bytes();
                return Color32::from_rgb(r, g, b);
            }
        }
        let c = span_color(kind, self.store.string(name));
        if let Some(slot) = cache.get_mut(name as usize) {
            *slot = u32::from_le_bytes([c.r(), c.g(), c.b(), 255]);
        }
        c
    }
}
