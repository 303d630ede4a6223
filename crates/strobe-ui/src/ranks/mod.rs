//! Ranks side by side (issue #7): with two or more traces open, they are ranks of one job.
//! This pane picks the clock alignment (the offsets go to the timeline, which stacks the ranks
//! on one axis), shows the rank–step heat map (click a cell: the timeline shows that rank's
//! step), the stragglers with their evidence, per-rank distributions, the HTA-parity tables,
//! and with exactly two traces a diff of kernels and ops. The figures are
//! `strobe_analysis::ranks`' and `strobe_analysis::diff`'s, computed on a worker thread.

mod heat_map;
mod tables;

pub use heat_map::Metric;

use crate::commands::Command;
use crate::workspace::Workspace;
use std::path::PathBuf;
use std::sync::mpsc::{channel, Receiver, TryRecvError};
use std::sync::Arc;
use strobe_analysis::diff::{diff, TraceDiff};
use strobe_analysis::ranks::align::Alignment;
use strobe_analysis::ranks::report::{multi_rank_report, MultiRankReport};
use strobe_store::Store;

/// What the figures were computed for: the traces (paths, in workspace order) and alignment.
#[derive(Clone, PartialEq, Debug)]
struct Key {
    paths: Vec<PathBuf>,
    alignment: Alignment,
}

pub struct Computed {
    pub report: MultiRankReport,
    /// Workspace trace index of each rank of `report.ranks`.
    pub trace_of_rank: Vec<usize>,
    /// A against B (ranks 0 and 1 of the report) when exactly two traces are open.
    pub diff: Option<TraceDiff>,
}

pub struct RanksPane {
    pub alignment: Alignment,
    pub metric: Metric,
    pub computed: Option<Computed>,
    key: Option<Key>,
    pending: Option<(Key, Receiver<Computed>)>,
    /// (trace, offset, rank) not yet handed to the timeline (the app applies them).
    pub offsets_to_apply: Option<Vec<(usize, i64, i64)>>,
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
            metric: Metric::StepTime,
            computed: None,
            key: None,
            pending: None,
            offsets_to_apply: None,
            section: Section::Steps,
        }
    }
}

fn compute(paths: Vec<PathBuf>, stores: Vec<Arc<Store>>, how: Alignment) -> Computed {
    let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    let pairs: Vec<(&str, &Store)> = names.iter().map(String::as_str).zip(stores.iter().map(|s| &**s)).collect();
    let report = multi_rank_report(&pairs, how, 20);
    let trace_of_rank =
        report.ranks.iter().map(|r| names.iter().position(|n| *n == r.source).unwrap_or(0)).collect::<Vec<_>>();
    let diff = (stores.len() == 2).then(|| {
        let (a, b) = (trace_of_rank[0], trace_of_rank[1]);
        diff(&stores[a], &stores[b])
    });
    Computed { report, trace_of_rank, diff }
}

impl RanksPane {
    /// Whether the workspace has several traces (the pane applies).
    pub fn applies(ws: &Workspace) -> bool {
        ws.traces.len() >= 2
    }

    /// What the figures should be computed for now.
    fn wanted(&self, ws: &Workspace) -> Key {
        Key { paths: ws.traces.iter().map(|t| t.path.clone()).collect(), alignment: self.alignment }
    }

    /// Starts (or picks up) the computation for the open traces; call every frame.
    pub fn update(&mut self, ws: &Workspace, ctx: &egui::Context) {
        if let Some((k, rx)) = &self.pending {
            match rx.try_recv() {
                Ok(c) => {
                    let k = k.clone();
                    self.pending = None;
                    self.install(k, c);
                }
                Err(TryRecvError::Empty) => ctx.request_repaint_after(std::time::Duration::from_millis(50)),
                Err(TryRecvError::Disconnected) => self.pending = None,
            }
        }
        if !Self::applies(ws) {
            self.computed = None;
            self.key = None;
            return;
        }
        let want = self.wanted(ws);
        let in_flight = self.pending.as_ref().map(|(k, _)| k);
        if self.key.as_ref() != Some(&want) && in_flight != Some(&want) && self.pending.is_none() {
            let stores: Vec<Arc<Store>> = ws.traces.iter().map(|t| Arc::clone(&t.store)).collect();
            let (tx, rx) = channel();
            let (paths, how) = (want.paths.clone(), want.alignment);
            let c = ctx.clone();
            std::thread::spawn(move || {
                let _ = tx.send(compute(paths, stores, how));
                c.request_repaint();
            });
            self.pending = Some((want, rx));
        }
    }

    /// Whether figures are being computed.
    pub fn busy(&self) -> bool {
        self.pending.is_some()
    }

    /// Computes on this thread (tests).
    pub fn update_blocking(&mut self, ws: &Workspace) {
        if !Self::applies(ws) {
            return;
        }
        let want = self.wanted(ws);
        if self.key.as_ref() == Some(&want) {
            return;
        }
        let stores: Vec<Arc<Store>> = ws.traces.iter().map(|t| Arc::clone(&t.store)).collect();
        let c = compute(want.paths.clone(), stores, want.alignment);
        self.install(want, c);
    }

    fn install(&mut self, key: Key, c: Computed) {
        let ranks = c.trace_of_rank.iter().zip(&c.report.alignment.offsets_ns).zip(&c.report.ranks);
        self.offsets_to_apply = Some(ranks.map(|((&t, &o), r)| (t, o, r.rank)).collect());
        self.key = Some(key);
        self.computed = Some(c);
    }

    pub fn ui(&mut self, ui: &mut egui::Ui, ws: &Workspace, cmds: &mut Vec<Command>) {
        if !Self::applies(ws) {
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
            Section::Steps => heat_map::ui(ui, c, &mut self.metric, cmds),
            Section::Stragglers => tables::stragglers(ui, c),
            Section::Hta => tables::hta(ui, c),
            Section::Diff => {
                if let Some(offs) = tables::diff(ui, c) {
                    self.offsets_to_apply = Some(offs);
                }
            }
        }
    }
}
