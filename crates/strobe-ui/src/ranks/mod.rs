//! Ranks side by side (issue #7): with two or more traces open, they are ranks of one job.
//! This pane picks the clock alignment (the offsets go to the timeline, which stacks the ranks
//! on one axis), shows the rank–step heat map (click a cell: the timeline shows that rank's
//! step), the stragglers with their evidence, per-rank distributions, the HTA-parity tables,
//! and with exactly two traces a diff of kernels and ops. The figures are
//! `strobe_analysis::ranks`' and `strobe_analysis::diff`'s, computed on a worker thread.

pub mod heat_map;
mod tables;

pub use heat_map::Metric;

use crate::commands::Command;
use crate::jobs::{take_ready, Pending};
use crate::view_ctx::ViewCtx;
use crate::workspace::{TraceId, Workspace};
use std::path::PathBuf;
use std::sync::Arc;
use strobe_analysis::diff::{diff, TraceDiff};
use strobe_analysis::ranks::align::Alignment;
use strobe_analysis::ranks::report::{multi_rank_report_with, MultiRankReport};
use strobe_store::Store;

/// What the figures were computed for: the traces (in workspace order) and the alignment.
/// Not the workspace's generation: applying the alignment moves that.
#[derive(Clone, PartialEq, Debug)]
struct Key {
    traces: Vec<TraceId>,
    alignment: Alignment,
    /// The step pattern (`--steps`), as text.
    steps: Option<String>,
}

pub struct Computed {
    pub report: MultiRankReport,
    /// The trace of each rank of `report.ranks`.
    pub trace_of_rank: Vec<TraceId>,
    /// A against B (ranks 0 and 1 of the report) when exactly two traces are open.
    pub diff: Option<TraceDiff>,
}

pub struct RanksPane {
    pub alignment: Alignment,
    /// How each rank's steps are found (View ▸ Steps).
    pub step_rule: strobe_analysis::steps::StepRule,
    pub metric: Metric,
    pub computed: Option<Computed>,
    key: Option<Key>,
    pending: Option<(Key, Pending<Computed>)>,
    pub section: Section,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Section {
    Steps,
    Stragglers,
    Hta,
    Diff,
}

impl Default for RanksPane {
    fn default() -> Self {
        RanksPane {
            alignment: Alignment::CollectiveEnd,
            step_rule: Default::default(),
            metric: Metric::StepTime,
            computed: None,
            key: None,
            pending: None,
            section: Section::Steps,
        }
    }
}

fn compute(
    traces: Vec<(TraceId, PathBuf, Arc<Store>)>,
    how: Alignment,
    rule: strobe_analysis::steps::StepRule,
) -> Computed {
    let names: Vec<String> = traces.iter().map(|t| t.1.display().to_string()).collect();
    let pairs: Vec<(&str, &Store)> = names.iter().map(String::as_str).zip(traces.iter().map(|t| &*t.2)).collect();
    let opts = strobe_analysis::ranks::report::RankOptions { steps: rule, ..Default::default() };
    let report = multi_rank_report_with(&pairs, how, 20, &opts);
    let index_of_rank: Vec<usize> =
        report.ranks.iter().map(|r| names.iter().position(|n| *n == r.source).unwrap_or(0)).collect();
    let diff = (traces.len() == 2).then(|| {
        let (a, b) = (index_of_rank[0], index_of_rank[1]);
        diff(&traces[a].2, &traces[b].2)
    });
    let trace_of_rank = index_of_rank.iter().map(|&i| traces[i].0).collect();
    Computed { report, trace_of_rank, diff }
}

fn inputs(ws: &Workspace) -> Vec<(TraceId, PathBuf, Arc<Store>)> {
    ws.traces.iter().map(|t| (t.id, t.path.clone(), Arc::clone(&t.store))).collect()
}

impl RanksPane {
    /// Whether the workspace has several traces (the pane applies).
    pub fn applies(ws: &Workspace) -> bool {
        ws.traces.len() >= 2
    }

    /// What the figures should be computed for now.
    fn wanted(&self, ws: &Workspace) -> Key {
        Key {
            traces: ws.traces.iter().map(|t| t.id).collect(),
            alignment: self.alignment,
            steps: self.step_rule.pattern.as_ref().map(|r| r.as_str().to_string()),
        }
    }

    /// Starts (or picks up) the computation for the open traces; call every frame. A
    /// finished one emits its alignment (`Command::ApplyAlignment`).
    pub fn update(&mut self, cx: &mut ViewCtx, ctx: &egui::Context) {
        let ws = cx.ws;
        if let Some((k, c)) = take_ready(&mut self.pending) {
            self.install(k, c, &mut |c| cx.emit(c));
        }
        if !Self::applies(ws) {
            self.computed = None;
            self.key = None;
            return;
        }
        let want = self.wanted(ws);
        if self.key.as_ref() != Some(&want) && self.pending.is_none() {
            let (traces, how, rule) = (inputs(ws), want.alignment, self.step_rule.clone());
            self.pending = Some((want, Pending::spawn_ui(ctx, move || compute(traces, how, rule))));
        }
    }

    /// Whether figures are being computed.
    pub fn busy(&self) -> bool {
        self.pending.is_some()
    }

    /// Computes on this thread (tests); the alignment goes to `cmds`.
    pub fn update_blocking(&mut self, ws: &Workspace, cmds: &mut Vec<Command>) {
        if !Self::applies(ws) {
            return;
        }
        let want = self.wanted(ws);
        if self.key.as_ref() == Some(&want) {
            return;
        }
        let c = compute(inputs(ws), want.alignment, self.step_rule.clone());
        self.install(want, c, &mut |c| cmds.push(c));
    }

    fn install(&mut self, key: Key, c: Computed, emit: &mut dyn FnMut(Command)) {
        let ranks = c.trace_of_rank.iter().zip(&c.report.alignment.offsets_ns).zip(&c.report.ranks);
        emit(Command::ApplyAlignment(ranks.map(|((&t, &o), r)| (t, o, r.rank)).collect()));
        self.key = Some(key);
        self.computed = Some(c);
    }

    pub fn ui(&mut self, ui: &mut egui::Ui, cx: &mut ViewCtx) {
        if !Self::applies(cx.ws) {
            ui.weak("Open two or more traces (one per rank: `strobe DIR` or `strobe rank*.json.gz`) to compare ranks.");
            return;
        }
        ui.horizontal(|ui| {
            ui.label("Align clocks:");
            for (a, name, tip) in [
                (Alignment::Recorded, "as recorded", "the times each trace recorded"),
                (Alignment::StepStart, "step start", "the first ProfilerStep every rank has starts together"),
                (
                    Alignment::CollectiveEnd,
                    "collective end",
                    "the k-th NCCL collective of a kind ends together on every rank (removes host clock skew)",
                ),
            ] {
                ui.selectable_value(&mut self.alignment, a, name).on_hover_text(tip);
            }
            if self.pending.is_some() {
                ui.spinner();
                ui.weak("computing…");
            }
            ui.separator();
            for (s, name) in [
                (Section::Steps, "Rank × step"),
                (Section::Stragglers, "Stragglers"),
                (Section::Hta, "HTA tables"),
                (Section::Diff, "Diff A/B"),
            ] {
                ui.selectable_value(&mut self.section, s, name);
            }
        });
        let Some(c) = &self.computed else {
            ui.weak("Comparing ranks…");
            return;
        };
        let al = &c.report.alignment;
        ui.horizontal_wrapped(|ui| {
            ui.weak(format!("alignment used: {}", al.used.as_str()));
            if let Some(r) = &al.fallback_reason {
                ui.weak(format!("({r})"));
            }
            for (r, o) in c.report.ranks.iter().zip(&al.offsets_ns) {
                ui.monospace(format!("rank {}: {:+.3} ms", r.rank, *o as f64 / 1e6));
            }
        });
        ui.separator();
        match self.section {
            Section::Steps => heat_map::ui(ui, c, &mut self.metric, cx),
            Section::Stragglers => tables::stragglers(ui, c),
            Section::Hta => tables::hta(ui, c),
            Section::Diff => {
                if let Some(offs) = tables::diff(ui, c) {
                    cx.emit(Command::ApplyAlignment(offs));
                }
            }
        }
    }
}
