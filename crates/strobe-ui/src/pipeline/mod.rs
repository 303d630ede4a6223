//! Pipeline parallelism in the viewer (issue 16, docs/pipeline.md): with several ranks open,
//! `strobe_analysis::pipeline::analyze` runs once per set of traces and step rule on a worker
//! thread; its result goes to the workspace (`Command::SetPipeline`), where the timeline reads
//! the stage order, the microbatches, the bubbles and the P2P pairs, and the Pipeline tab
//! (`table`) the stage × step figures.

pub mod table;

use crate::commands::Command;
use crate::jobs::{take_ready, Pending};
use crate::view_ctx::ViewCtx;
use crate::workspace::{TraceId, Workspace};
use std::path::PathBuf;
use std::sync::Arc;
use strobe_analysis::pipeline::microbatch::MicrobatchRule;
use strobe_analysis::pipeline::{analyze, Pipeline, PipelineRank};
use strobe_analysis::ranks::identity::identify_ranks;
use strobe_analysis::ranks::{rank_steps, sorted_ranks, RankTrace};
use strobe_analysis::steps::StepRule;
use strobe_store::Store;

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

/// What the pipeline was computed for.
#[derive(Clone, PartialEq, Debug)]
struct Key {
    traces: Vec<TraceId>,
    steps: Option<String>,
}

#[derive(Default)]
pub struct PipelinePane {
    key: Option<Key>,
    pending: Option<(Key, Pending<Option<PipelineView>>)>,
    pub metric: table::Metric,
}

/// The ranks of `traces` as the several-rank report identifies them, their steps by `rule`,
/// and the pipeline they form (None: no pipeline).
fn compute(traces: Vec<(TraceId, PathBuf, Arc<Store>)>, rule: StepRule) -> Option<PipelineView> {
    let names: Vec<String> = traces.iter().map(|t| t.1.display().to_string()).collect();
    let sources: Vec<&str> = names.iter().map(String::as_str).collect();
    let stores: Vec<&Store> = traces.iter().map(|t| &*t.2).collect();
    let ids = identify_ranks(&stores, &sources);
    let steps: Vec<_> = stores.iter().map(|s| rank_steps(s, &rule)).collect();
    let ranks: Vec<RankTrace> = (0..traces.len())
        .map(|i| RankTrace { rank: ids[i].rank, source: sources[i], store: stores[i], steps: &steps[i] })
        .collect();
    let mut pipeline = analyze(&sorted_ranks(&ranks), &MicrobatchRule::default())?;
    // the timeline looks microbatches up by time
    for r in &mut pipeline.ranks {
        r.microbatches.sort_by_key(|m| (m.start_ns, m.end_ns));
    }
    let traces = pipeline
        .ranks
        .iter()
        .map(|r| ids.iter().position(|x| x.rank == r.rank).map(|i| traces[i].0))
        .collect::<Option<Vec<TraceId>>>()?;
    let work = pipeline.ranks.iter().map(|r| r.bubbles.iter().flat_map(|b| b.work.iter().copied()).collect()).collect();
    Some(PipelineView { pipeline, traces, work })
}

fn inputs(ws: &Workspace) -> Vec<(TraceId, PathBuf, Arc<Store>)> {
    ws.traces.iter().map(|t| (t.id, t.path.clone(), Arc::clone(&t.store))).collect()
}

impl PipelinePane {
    /// Several traces: they may be the stages of a pipeline.
    pub fn applies(ws: &Workspace) -> bool {
        ws.traces.len() >= 2
    }

    fn wanted(ws: &Workspace, rule: &StepRule) -> Key {
        Key {
            traces: ws.traces.iter().map(|t| t.id).collect(),
            steps: rule.pattern.as_ref().map(|r| r.as_str().to_string()),
        }
    }

    /// Starts (or picks up) the analysis of the open traces; call every frame. A finished
    /// one goes to the workspace (`Command::SetPipeline`). Not tied to the workspace's
    /// generation: the clock alignment moves that, and every figure here is in each rank's
    /// own clock.
    pub fn update(&mut self, cx: &mut ViewCtx, ctx: &egui::Context, rule: &StepRule) {
        if let Some((k, v)) = take_ready(&mut self.pending) {
            self.key = Some(k);
            cx.emit(Command::SetPipeline(v.map(Arc::new)));
        }
        if !Self::applies(cx.ws) {
            if self.key.take().is_some() || cx.ws.pipeline.is_some() {
                cx.emit(Command::SetPipeline(None));
            }
            return;
        }
        let want = Self::wanted(cx.ws, rule);
        if self.key.as_ref() != Some(&want) && self.pending.is_none() {
            let (traces, rule) = (inputs(cx.ws), rule.clone());
            self.pending = Some((want, Pending::spawn_ui(ctx, move || compute(traces, rule))));
        }
    }

    pub fn busy(&self) -> bool {
        self.pending.is_some()
    }

    /// Computes on this thread (tests); the result goes to `cmds`.
    pub fn update_blocking(&mut self, ws: &Workspace, rule: &StepRule, cmds: &mut Vec<Command>) {
        if !Self::applies(ws) {
            return;
        }
        let want = Self::wanted(ws, rule);
        if self.key.as_ref() == Some(&want) {
            return;
        }
        let v = compute(inputs(ws), rule.clone());
        self.key = Some(want);
        cmds.push(Command::SetPipeline(v.map(Arc::new)));
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
            None if self.busy() => {
                crate::jobs::busy_indicator(ui, "finding the pipeline…");
            }
            None => {
                ui.weak("No pipeline: no rank sends to another before it receives from it (data parallel, or no point-to-point transfers).");
            }
        }
    }
}
