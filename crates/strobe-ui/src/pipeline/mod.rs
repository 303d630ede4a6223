//! Pipeline parallelism in the viewer (docs/pipeline.md): with several ranks open, the rank
//! comparison (`ranks`) runs `strobe_analysis::pipeline::analyze` with the rest of the ranks'
//! figures, once per set of traces, step rule and alignment, on a worker thread; its result
//! goes to the workspace (`Command::SetPipeline`), where the timeline reads the stage order,
//! the microbatches, the bubbles and the P2P pairs, and the Pipeline tab (`table`) the stage ×
//! step figures.

pub mod table;

use crate::view_ctx::ViewCtx;
use crate::workspace::{TraceId, Workspace};
use std::sync::Arc;
use strobe_analysis::pipeline::{Pipeline, PipelineRank};

/// The pipeline of the open traces, with the trace each of its ranks is.
#[derive(Debug, PartialEq)]
pub struct PipelineView {
    pub pipeline: Pipeline,
    /// The trace of each `pipeline.ranks` entry (stage order).
    pub traces: Vec<TraceId>,
    /// Per rank entry, its work in every step, in order (the strip draws it solid).
    pub work: Vec<Vec<(i64, i64)>>,
}

impl PipelineView {
    /// Index into `pipeline.ranks` of trace `id`.
    pub fn index_of(&self, id: TraceId) -> Option<usize> {
        self.traces.iter().position(|&t| t == id)
    }

    pub fn rank_of(&self, id: TraceId) -> Option<&PipelineRank> {
        self.index_of(id).map(|i| &self.pipeline.ranks[i])
    }

    /// The index into `pipeline.ranks` of global rank `rank`.
    pub fn index_of_rank(&self, rank: i64) -> Option<usize> {
        self.pipeline.ranks.iter().position(|r| r.rank == rank)
    }
}

impl PipelineView {
    /// The view of `pipeline` whose ranks are the traces `trace_of(rank)` gives (None: a rank
    /// with no open trace).
    pub fn of(mut pipeline: Pipeline, trace_of: impl Fn(i64) -> Option<TraceId>) -> Option<PipelineView> {
        // the timeline looks microbatches up by time
        for r in &mut pipeline.ranks {
            r.microbatches.sort_by_key(|m| (m.start_ns, m.end_ns));
        }
        let traces = pipeline.ranks.iter().map(|r| trace_of(r.rank)).collect::<Option<Vec<TraceId>>>()?;
        let work =
            pipeline.ranks.iter().map(|r| r.bubbles.iter().flat_map(|b| b.work.iter().copied()).collect()).collect();
        Some(PipelineView { pipeline, traces, work })
    }
}

/// The Pipeline tab: the stage × step table of the workspace's pipeline, which the rank
/// comparison finds (`ranks::RanksPane`) with the rest of the ranks' figures.
#[derive(Default)]
pub struct PipelinePane {
    pub metric: table::Metric,
}

impl PipelinePane {
    /// Several traces: they may be the stages of a pipeline.
    pub fn applies(ws: &Workspace) -> bool {
        ws.traces.len() >= 2
    }

    pub fn ui(&mut self, ui: &mut egui::Ui, cx: &mut ViewCtx) {
        match &cx.ws.pipeline {
            Some(pv) => {
                let pv = Arc::clone(pv);
                // the tab has the bottom panel's height: the table and the links below it scroll
                egui::ScrollArea::vertical()
                    .id_salt("pipeline_pane")
                    .auto_shrink([false, false])
                    .show(ui, |ui| table::ui(ui, &pv, &mut self.metric, cx));
            }
            None if !cx.ws.pipeline_settled => {
                crate::jobs::busy_indicator(ui, "finding the pipeline…");
            }
            None => {
                ui.weak("No pipeline: no rank sends to another before it receives from it (data parallel, or no point-to-point transfers).");
            }
        }
    }
}
