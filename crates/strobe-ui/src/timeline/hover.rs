//! What the pointer is over (found while the frame is prepared) and what its tooltip says.
//! `ti` is the trace's position in `ws.traces`.

use crate::workspace::Workspace;
use strobe_analysis::idle::IdleGap;
use strobe_store::LodItem;

#[derive(Clone, Copy, Debug)]
pub enum Hover {
    /// A span or a run of folded spans; `span` is the drawn one (the longest when folded).
    Item { ti: usize, item: LodItem, span: u32 },
    /// A long GPU idle gap (trace-local times).
    Gap { ti: usize, gap: IdleGap },
    /// Communication overlapped by compute, or exposed (trace-local times).
    Band { device: i64, overlapped: bool, iv: (i64, i64) },
    /// An iteration in the step strip (index into `Derived::steps`).
    Step { ti: usize, step: usize },
    /// A CPU range projected onto the GPU (index into `Derived::nvtx_gpu`).
    Projected { ti: usize, index: usize },
    /// A pipeline stage's microbatch (index into its `PipelineRank::microbatches`).
    Microbatch { ti: usize, index: usize },
    /// A part of a pipeline stage's bubble in a step (index into `PipelineRank::bubbles`).
    Bubble { ti: usize, step: usize, kind: super::pipeline_strip::BubbleKind, iv: (i64, i64) },
    /// A sample of a GPU metric (`series` into the store's counters, `sample` into its points).
    Metric { ti: usize, series: usize, sample: usize },
}

/// Index of the interval of `ivs` (sorted, disjoint) containing `t`, or within `slack` ns of it.
pub fn find_containing<T>(ivs: &[T], iv: impl Fn(&T) -> (i64, i64), t: i64, slack: f64) -> Option<usize> {
    let lo = ivs.partition_point(|x| iv(x).1 <= t);
    let s = slack as i64;
    [lo.wrapping_sub(1), lo].into_iter().find(|&k| {
        ivs.get(k).is_some_and(|x| {
            let (a, b) = iv(x);
            a - s <= t && t < b + s
        })
    })
}

/// The tooltip of what the pointer is over, from the module of the row it was found in.
pub fn hover_text(ws: &Workspace, h: &Hover) -> String {
    match *h {
        Hover::Item { ti, item, span } => super::lanes::item_text(ws, ti, item, span),
        Hover::Gap { ti, gap } => super::bands::gap_text(ws, ti, &gap),
        Hover::Band { device, overlapped, iv } => super::bands::band_text(device, overlapped, iv),
        Hover::Projected { ti, index } => super::nvtx_gpu::projected_text(ws, ti, index),
        Hover::Step { ti, step } => super::step_strip::step_text(ws, ti, step),
        Hover::Microbatch { ti, index } => super::pipeline_strip::microbatch_text(ws, ti, index),
        Hover::Bubble { ti, step, kind, iv } => super::pipeline_strip::bubble_text(ws, ti, step, kind, iv),
        Hover::Metric { ti, series, sample } => super::gpu_metrics::sample_text(ws, ti, series, sample),
    }
}
