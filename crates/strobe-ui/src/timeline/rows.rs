//! What every timeline row is drawn with, and where a row's kind picks its module. Each kind
//! of `RowKind` has a module of its own holding what is particular to it (its height, its
//! drawer, its tooltip text): `header`, `lanes`, `bands`, `rank_summary`, `step_strip`,
//! `pipeline_strip`, `nvtx_gpu`, `memory_level`, `counters`, `gpu_metrics` and `series`. Which rows a trace
//! has, and in what order, is the layout's (`layout`).

use super::frame::{Clip, FrameDraw};
use super::lanes::{LaneCtx, LanePainter};
use super::layout::RowKind;
use super::View;
use crate::workspace::{Trace, Workspace};
use egui::Stroke;

/// One row being drawn, like Perfetto's `TrackRenderContext`: the frame, the painter the spans'
/// quads, labels and hover are collected in, what every row of the frame is drawn against,
/// the row's trace and its position `ti` in `ws.traces`, the view on the trace's own clock
/// (alignment applied), the row's screen y range `[y.0, y.1)` and the screen y above which it
/// is hidden (`top`: the body's top, or under the pinned rows for a row that scrolls).
pub struct RowCtx<'a> {
    pub fd: &'a mut FrameDraw,
    pub lp: &'a mut LanePainter,
    pub cx: &'a LaneCtx<'a>,
    pub ws: &'a Workspace,
    pub trace: &'a Trace,
    pub ti: usize,
    pub view: View,
    pub y: (f32, f32),
    pub top: f32,
}

impl RowCtx<'_> {
    /// The faint line under the row.
    pub fn separator(&mut self) {
        let stroke = Stroke::new(0.5, self.cx.pal.faint);
        self.fd.hline(Clip::Pane, self.cx.body.x_range(), self.y.1 - 0.5, stroke);
    }
}

/// Draws a row of kind `kind` with its kind's drawer.
pub fn draw(rc: &mut RowCtx, kind: &RowKind) {
    match *kind {
        RowKind::Header { ref label, level, collapsed, .. } => super::header::draw(rc, label, level, collapsed),
        RowKind::Lane { lane, pinned, .. } => super::lanes::draw_row(rc, lane, pinned),
        RowKind::Bands { device, .. } => super::bands::draw(rc, device),
        RowKind::NvtxGpu { device, .. } => super::nvtx_gpu::draw(rc, device),
        RowKind::Steps { .. } => super::step_strip::draw(rc),
        RowKind::Pipeline { .. } => super::pipeline_strip::draw(rc),
        RowKind::RankSummary { .. } => super::rank_summary::draw(rc),
        RowKind::MemoryLevel { device, .. } => super::memory_level::draw(rc, device),
        RowKind::Counter { series, .. } => super::counters::draw(rc, series),
        RowKind::GpuMetric { series, .. } => super::gpu_metrics::draw(rc, series),
        RowKind::Series { series, .. } => super::series::draw(rc, series),
    }
}

/// The gutter label of a row the overview fills (`Layout` holds it open until then), or none
/// for a row drawn from the store alone.
pub fn pending_label(kind: &RowKind) -> Option<&'static str> {
    match kind {
        RowKind::Steps { .. } => Some(super::step_strip::PENDING_LABEL),
        RowKind::Bands { .. } => Some(super::bands::PENDING_LABEL),
        RowKind::NvtxGpu { .. } => Some(super::nvtx_gpu::PENDING_LABEL),
        RowKind::MemoryLevel { .. } => Some(super::memory_level::PENDING_LABEL),
        RowKind::RankSummary { .. } => Some(super::rank_summary::PENDING_LABEL),
        RowKind::Header { .. }
        | RowKind::Lane { .. }
        | RowKind::Pipeline { .. }
        | RowKind::Counter { .. }
        | RowKind::GpuMetric { .. }
        | RowKind::Series { .. } => None,
    }
}
