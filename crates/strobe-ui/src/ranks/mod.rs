//! Ranks side by side: with two or more traces open, they are ranks of one job.
//! This pane picks the clock alignment (the offsets go to the timeline, which stacks the ranks
//! on one axis), shows the rank–step heat map (click a cell: the timeline shows that rank's
//! step), the stragglers with their evidence, per-rank distributions, the HTA-parity tables,
//! and with exactly two traces a diff of kernels and ops. The figures are
//! `strobe_analysis::ranks`' and `strobe_analysis::diff`'s, computed on a worker thread.
//!
//! A folder of rank summaries (`strobe summarize`, docs/cluster.md) gives the same views from
//! the summaries alone (`strobe_cluster::merge_dir`), for a thousand ranks: clicking a rank
//! opens its full trace from the path its summary recorded, and once open it takes the
//! rank's clock offset and number like any rank.

mod bandwidth;
mod diff_breakdown;
pub mod heat_map;
pub mod stragglers;
mod tables;

pub use heat_map::Metric;

use crate::commands::Command;
use crate::jobs::{take_ready, Pending};
use crate::view_ctx::ViewCtx;
use crate::workspace::{TraceId, Workspace};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use strobe_analysis::diff::{diff, TraceDiff};
use strobe_analysis::figures::TraceFigures;
use strobe_analysis::ranks::align::Alignment;
use strobe_analysis::ranks::report::{multi_rank_analysis, MultiRankReport, RankOptions};
use strobe_store::Store;

/// What the figures were computed for: the traces (in workspace order) and the alignment.
/// Not the workspace's generation: applying the alignment moves that.
#[derive(Clone, PartialEq, Debug)]
struct Key {
    /// The summary folder the figures come from; None: from the open traces.
    summaries: Option<PathBuf>,
    traces: Vec<TraceId>,
    alignment: Alignment,
    /// The step pattern (`--steps`), as text.
    steps: Option<String>,
}

pub struct Computed {
    pub report: MultiRankReport,
    /// The open trace of each rank of `report.ranks` (from summaries: those opened so far).
    pub trace_of_rank: Vec<Option<TraceId>>,
    /// A against B (ranks 0 and 1 of the report) when exactly two traces are open.
    pub diff: Option<TraceDiff>,
    pub heat: heat_map::HeatIndex,
    /// Merged from a summary folder (the ranks' traces are not loaded).
    pub from_summaries: bool,
    /// The pipeline the open traces form (None: none, or from summaries); it goes to the
    /// workspace (`Command::SetPipeline`) once installed.
    pub pipeline: Option<Arc<crate::pipeline::PipelineView>>,
}

pub struct RanksPane {
    pub alignment: Alignment,
    pub metric: Metric,
    pub computed: Option<Computed>,
    key: Option<Key>,
    pending: Option<(Key, Pending<Result<Computed, String>>)>,
    pub section: Section,
    /// Why the summaries could not be merged, or a rank's trace could not be opened.
    pub note: Option<String>,
    /// A rank's step to show once its trace (being opened) has loaded: path, range.
    show_after_open: Option<(PathBuf, i64, i64)>,
    /// The traces linked to summary ranks so far (relinked when the open traces change).
    linked: Vec<TraceId>,
    /// A comparison is wanted but waits for the traces' overviews (`update`).
    after_overviews: bool,
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
            metric: Metric::StepTime,
            computed: None,
            key: None,
            pending: None,
            section: Section::Steps,
            note: None,
            show_after_open: None,
            linked: Vec::new(),
            after_overviews: false,
        }
    }
}

/// One open trace as the comparison reads it: its id, its path, its store and its figures.
type RankInput = (TraceId, PathBuf, Arc<Store>, TraceFigures);

/// The comparison of the open traces from their own figures (found once per trace, shared
/// with every pane), and the pipeline they form.
fn compute(traces: Vec<RankInput>, how: Alignment, rule: strobe_analysis::steps::StepRule) -> Computed {
    // each rank by its own name: a file of several ranks (an nsys export's processes) names
    // each by its rank, as `strobe report` does by its pid
    let names: Vec<String> = traces
        .iter()
        .map(|(_, path, store, _)| {
            let p = path.display().to_string();
            match store.meta.distributed.as_ref().and_then(|d| d.rank) {
                Some(r) if traces.iter().filter(|u| u.1 == *path).count() > 1 => format!("{p} (rank {r})"),
                _ => p,
            }
        })
        .collect();
    let inputs: Vec<(&str, &Store, &TraceFigures)> =
        names.iter().zip(&traces).map(|(n, t)| (n.as_str(), &*t.2, &t.3)).collect();
    let opts = RankOptions { steps: rule, ..Default::default() };
    let (report, pipeline) = multi_rank_analysis(&inputs, how, &opts);
    let index_of_rank: Vec<usize> =
        report.ranks.iter().map(|r| names.iter().position(|n| *n == r.source).unwrap_or(0)).collect();
    let diff = (traces.len() == 2).then(|| {
        let (a, b) = (index_of_rank[0], index_of_rank[1]);
        let mut d = diff(&traces[a].2, &traces[b].2);
        d.step_breakdown = strobe_analysis::attribution::compare::compare(
            traces[a].3.step_breakdown(&traces[a].2),
            traces[b].3.step_breakdown(&traces[b].2),
        );
        d
    });
    let trace_of_rank: Vec<Option<TraceId>> = index_of_rank.iter().map(|&i| Some(traces[i].0)).collect();
    let pipeline = pipeline.and_then(|p| {
        let trace_of = |rank: i64| {
            let i = report.ranks.iter().position(|e| e.rank == rank)?;
            trace_of_rank[i]
        };
        crate::pipeline::PipelineView::of(p, trace_of).map(Arc::new)
    });
    let heat = heat_map::HeatIndex::new(&report);
    Computed { report, trace_of_rank, diff, heat, from_summaries: false, pipeline }
}

/// The report merged from the summaries in `dir`.
fn compute_summaries(dir: PathBuf, how: Alignment, rule: strobe_analysis::steps::StepRule) -> Result<Computed, String> {
    let opts = strobe_analysis::ranks::report::RankOptions { steps: rule, ..Default::default() };
    let report = strobe_cluster::merge_dir(&dir, how, &opts).map_err(|e| format!("{e:#}"))?;
    let heat = heat_map::HeatIndex::new(&report);
    Ok(Computed {
        trace_of_rank: vec![None; report.ranks.len()],
        report,
        diff: None,
        heat,
        from_summaries: true,
        pipeline: None,
    })
}

/// Where rank `source` (the path its summary recorded) is on this machine: as recorded, else
/// beside the summary folder (a job's folder copied with its traces).
pub fn trace_path(summaries: &Path, source: &str) -> Option<PathBuf> {
    let p = PathBuf::from(source);
    let mut candidates = vec![p.clone()];
    if p.is_relative() {
        candidates.push(summaries.join(&p));
        if let Some(up) = summaries.parent() {
            candidates.push(up.join(&p));
        }
    }
    if let Some(name) = p.file_name() {
        candidates.push(summaries.join(name));
        if let Some(up) = summaries.parent() {
            candidates.push(up.join(name));
        }
    }
    candidates.into_iter().find(|c| c.is_file())
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}

fn inputs(ws: &Workspace) -> Vec<RankInput> {
    ws.traces.iter().map(|t| (t.id, t.path.clone(), Arc::clone(&t.store), t.derived.analysis.clone())).collect()
}

impl RanksPane {
    /// Whether the workspace has several traces (the pane applies).
    pub fn applies(ws: &Workspace) -> bool {
        ws.traces.len() >= 2 || ws.summaries.is_some()
    }

    /// What the figures should be computed for now.
    fn wanted(&self, ws: &Workspace) -> Key {
        let summaries = ws.summaries.clone();
        Key {
            // from summaries the open traces do not change the figures (they are linked)
            traces: if summaries.is_some() { Vec::new() } else { ws.traces.iter().map(|t| t.id).collect() },
            summaries,
            alignment: self.alignment,
            steps: ws.figure_settings().step_pattern().map(str::to_string),
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
            if ws.pipeline.is_some() {
                cx.emit(Command::SetPipeline(None));
            }
            if ws.collectives.is_some() {
                cx.emit(Command::SetCollectives(None));
            }
            return;
        }
        let want = self.wanted(ws);
        // the traces' overviews first: the comparison reads every rank whole, and on a
        // 2-core machine it would take the cores the overviews' pool runs on
        let stale = self.key.as_ref() != Some(&want);
        self.after_overviews =
            stale && want.summaries.is_none() && ws.traces.iter().any(|t| !t.derived.overview_ready());
        if stale && self.pending.is_none() && !self.after_overviews {
            let (how, rule) = (want.alignment, ws.figure_settings().step_rule.clone());
            let job = match want.summaries.clone() {
                Some(dir) => Pending::spawn_ui(ctx, move || compute_summaries(dir, how, rule)),
                None => {
                    let traces = inputs(ws);
                    Pending::spawn_ui(ctx, move || Ok(compute(traces, how, rule)))
                }
            };
            self.pending = Some((want, job));
        }
        self.link_traces(ws, &mut |c| cx.emit(c));
    }

    /// From summaries: the open traces that are ranks of the report (by path) take the rank's
    /// offset and number; a rank's step asked for before its trace had loaded is shown now.
    fn link_traces(&mut self, ws: &Workspace, emit: &mut dyn FnMut(Command)) {
        let (Some(dir), Some(c)) = (&ws.summaries, &mut self.computed) else { return };
        let open: Vec<TraceId> = ws.traces.iter().map(|t| t.id).collect();
        if !c.from_summaries || open == self.linked {
            return;
        }
        self.linked = open;
        let mut offsets = Vec::new();
        let mut show = None;
        for (i, e) in c.report.ranks.iter().enumerate() {
            let path = trace_path(dir, &e.source);
            let t = path.as_ref().and_then(|p| ws.traces.iter().find(|t| same_file(&t.path, p)));
            c.trace_of_rank[i] = t.map(|t| t.id);
            if let Some(t) = t {
                offsets.push((t.id, c.report.alignment.offsets_ns[i], e.rank));
                if let Some((want, t0, t1)) = &self.show_after_open {
                    if path.as_deref().is_some_and(|p| same_file(p, want)) {
                        show = Some(Command::ShowRankStep { trace: t.id, t0: *t0, t1: *t1 });
                        self.show_after_open = None;
                    }
                }
            }
        }
        if !offsets.is_empty() {
            emit(Command::ApplyAlignment(offsets));
        }
        // after the offset: the step is shown where the aligned trace draws it
        if let Some(c) = show {
            emit(c);
        }
    }

    /// A click on the heat map: the rank's step in the timeline when its trace is open, else
    /// (from summaries) its trace opened beside, the step shown once it has loaded.
    fn clicked(&mut self, click: heat_map::Click, dir: Option<&Path>, emit: &mut dyn FnMut(Command)) {
        let Some(c) = &self.computed else { return };
        let Some(e) = c.report.ranks.get(click.rank_index) else { return };
        if let Some(trace) = c.trace_of_rank[click.rank_index] {
            if let Some((t0, t1)) = click.step {
                emit(Command::ShowRankStep { trace, t0, t1 });
            }
            return;
        }
        let Some(dir) = dir else { return };
        match trace_path(dir, &e.source) {
            Some(p) => {
                self.note = Some(format!("opening rank {}'s trace {} …", e.rank, p.display()));
                if let Some((t0, t1)) = click.step {
                    self.show_after_open = Some((p.clone(), t0, t1));
                }
                emit(Command::AddFiles(vec![p]));
            }
            None => {
                self.note = Some(format!(
                    "rank {}'s trace {} (the path its summary recorded) is not on this machine, nor beside {}: \
                     copy it there to open it",
                    e.rank,
                    e.source,
                    dir.display()
                ))
            }
        }
    }

    /// Whether figures are being computed.
    pub fn busy(&self) -> bool {
        self.pending.is_some() || self.after_overviews
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
        let rule = ws.figure_settings().step_rule.clone();
        let c = match want.summaries.clone() {
            Some(dir) => compute_summaries(dir, want.alignment, rule),
            None => Ok(compute(inputs(ws), want.alignment, rule)),
        };
        self.install(want, c, &mut |c| cmds.push(c));
        self.link_traces(ws, &mut |c| cmds.push(c));
    }

    fn install(&mut self, key: Key, c: Result<Computed, String>, emit: &mut dyn FnMut(Command)) {
        self.key = Some(key);
        let c = match c {
            Ok(c) => c,
            Err(e) => {
                self.note = Some(e);
                self.computed = None;
                // no comparison, so no pipeline: settled all the same (nothing waits for one)
                emit(Command::SetPipeline(None));
                emit(Command::SetCollectives(None));
                return;
            }
        };
        let ranks = c.trace_of_rank.iter().zip(&c.report.alignment.offsets_ns).zip(&c.report.ranks);
        let offsets: Vec<(TraceId, i64, i64)> = ranks.filter_map(|((t, &o), r)| Some(((*t)?, o, r.rank))).collect();
        if !offsets.is_empty() {
            emit(Command::ApplyAlignment(offsets));
        }
        emit(Command::SetPipeline(c.pipeline.clone()));
        emit(Command::SetCollectives(crate::collective_index::CollectiveIndex::of(&c)));
        self.linked.clear();
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
            if self.busy() {
                crate::jobs::busy_indicator(ui, "computing…");
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
        if let Some(n) = &self.note {
            ui.colored_label(egui::Color32::from_rgb(235, 170, 60), n);
        }
        let Some(c) = &self.computed else {
            if self.pending.is_some() || self.note.is_none() {
                ui.weak("Comparing ranks…");
            }
            return;
        };
        let al = &c.report.alignment;
        ui.horizontal_wrapped(|ui| {
            if let Some(dir) = &cx.ws.summaries {
                ui.weak(format!("{} ranks from the summaries in {}", c.report.ranks.len(), dir.display()));
            }
            ui.weak(format!("alignment used: {}", al.used.as_str()));
            if let Some(r) = &al.fallback_reason {
                ui.weak(format!("({r})"));
            }
            // every offset for a few ranks; their range for many
            if c.report.ranks.len() <= 16 {
                for (r, o) in c.report.ranks.iter().zip(&al.offsets_ns) {
                    ui.monospace(format!("rank {}: {:+.3} ms", r.rank, *o as f64 / 1e6));
                }
            } else if let (Some(lo), Some(hi)) = (al.offsets_ns.iter().min(), al.offsets_ns.iter().max()) {
                ui.monospace(format!("offsets {:+.3} … {:+.3} ms", *lo as f64 / 1e6, *hi as f64 / 1e6));
            }
        });
        ui.separator();
        match self.section {
            Section::Steps => {
                // many ranks: the stragglers' rows are a click away, not a long scroll
                let mut scroll_to = None;
                if c.report.ranks.len() > 16 && !c.report.stragglers.is_empty() {
                    ui.horizontal_wrapped(|ui| {
                        ui.label("Go to:");
                        for s in c.report.stragglers.iter().take(8) {
                            let text = format!("rank {} (straggler, {} steps)", s.rank, s.steps.len());
                            if ui.small_button(text).clicked() {
                                scroll_to = c.report.ranks.iter().position(|e| e.rank == s.rank);
                            }
                        }
                    });
                }
                if let Some(click) = heat_map::ui(ui, c, &mut self.metric, scroll_to) {
                    let dir = cx.ws.summaries.clone();
                    self.clicked(click, dir.as_deref(), &mut |c| cx.emit(c));
                }
            }
            Section::Stragglers => {
                if let Some(click) = stragglers::ui(ui, c) {
                    let dir = cx.ws.summaries.clone();
                    self.clicked(click, dir.as_deref(), &mut |c| cx.emit(c));
                }
            }
            Section::Hta => {
                // then the per-group bandwidth: a click shows the slowest instance
                tables::hta(ui, c);
                ui.separator();
                let click = bandwidth::ui(ui, c);
                if let Some(click) = click {
                    let dir = cx.ws.summaries.clone();
                    self.clicked(click, dir.as_deref(), &mut |c| cx.emit(c));
                }
            }
            Section::Diff => {
                if let Some(offs) = tables::diff(ui, c) {
                    cx.emit(Command::ApplyAlignment(offs));
                }
            }
        }
    }
}
