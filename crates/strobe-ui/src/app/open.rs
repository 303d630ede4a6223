//! Files into the workspace: start their loads (a folder opens every trace in it), take each
//! loaded document in, and close.

use super::{BottomTab, StrobeApp};
use crate::commands::{Highlight, Selection};
use crate::documents::Document;
use std::path::PathBuf;

impl StrobeApp {
    /// Starts loading files off the UI thread. `replace`: what is open closes once the first
    /// of them has loaded (so a failed open keeps the view).
    pub fn open_files(&mut self, paths: Vec<PathBuf>, replace: bool, ctx: &egui::Context) {
        let mut files = Vec::new();
        // files asked for together are one Recent entry (a rank set reopens as a set)
        let mut together = Vec::new();
        for p in paths {
            if crate::session::Session::is_session_file(&p) {
                match crate::session::Session::read(&p) {
                    Ok(s) => {
                        // a file of several ranks is listed once per rank, and opens once
                        for f in &s.files {
                            if !files.contains(f) {
                                files.push(f.clone());
                            }
                        }
                        self.pending_session = Some(s);
                        self.remember(&[&p]);
                    }
                    Err(e) => self.errors.push(e),
                }
            } else if strobe_cluster::summary::is_summary_dir(&p) {
                // rank summaries (`strobe summarize`): the ranks pane merges them; no trace loads
                if replace {
                    self.close_all();
                }
                self.ws.summaries = Some(p.clone());
                self.ws.generation += 1;
                self.bottom_tab = BottomTab::Ranks;
                self.remember(&[&p]);
            } else if p.is_dir() {
                // a folder of flight-recorder dumps (torchtitan's comm_traces/): all of them
                let dumps = strobe_import::flight_recorder::dumps_in(&p).unwrap_or_default();
                if !dumps.is_empty() {
                    files.extend(dumps);
                    self.remember(&[&p]);
                    continue;
                }
                // a folder of rank traces: open them all, side by side
                match crate::loader::trace_files_in(&p) {
                    Ok(f) => {
                        files.extend(f);
                        self.bottom_tab = BottomTab::Ranks;
                        self.remember(&[&p]);
                    }
                    Err(e) => self.errors.push(e),
                }
            } else {
                files.push(p.clone());
                together.push(p);
            }
        }
        let together: Vec<&std::path::Path> = together.iter().map(|p| p.as_path()).collect();
        self.remember(&together);
        if files.is_empty() {
            return;
        }
        self.next_batch += 1;
        let batch = self.next_batch;
        if replace && self.has_documents() {
            self.replacing = Some(batch);
        }
        for p in files {
            let c = ctx.clone();
            self.loader.start(&p, batch, self.ws.figure_settings().clone(), move || c.request_repaint());
        }
    }

    fn remember(&mut self, paths: &[&std::path::Path]) {
        // the bundled sample is not something the user opened
        if self.sample.as_deref().is_some_and(|s| paths == [s]) {
            return;
        }
        super::recent::remember(&mut self.settings.recent, paths);
    }

    /// The session of what is open now.
    pub fn session(&self) -> crate::session::Session {
        crate::session::Session::capture(
            &self.ws,
            &self.timeline_state,
            self.ranks.alignment,
            self.bottom_tab,
            self.panel_sizes,
        )
    }

    /// Applies an opened session once its files have loaded.
    pub(super) fn poll_session(&mut self) {
        if self.loader.busy() {
            return;
        }
        let Some(s) = self.pending_session.take() else { return };
        if let Some(a) = s.apply(&self.ws, &mut self.timeline_state) {
            self.ranks.alignment = a;
        }
        if let Some(t) = s.bottom_tab {
            self.bottom_tab = t;
            self.ranks_shown = true;
        }
        self.restore_panels = s.panels.and_then(|p| p.usable());
    }

    fn has_documents(&self) -> bool {
        !self.ws.traces.is_empty()
            || self.ws.memory.is_some()
            || self.ws.ncu.is_some()
            || self.ws.memory_stats.is_some()
            || self.ws.summaries.is_some()
            || !self.ws.flight_recorder.is_empty()
    }

    /// Loads a file on this thread and adds it (tests, benchmarks).
    pub fn open_blocking(&mut self, path: &std::path::Path) -> Result<(), String> {
        let d = self.loader.load_blocking(path, self.ws.figure_settings())?;
        self.add_document(d);
        // blocking means whole: the figures a loader's open leaves to the analyses thread too
        for t in &self.ws.traces {
            t.wait_for_analyses();
        }
        Ok(())
    }

    /// A loaded document into the workspace, with a fresh pane for a snapshot or ncu report.
    pub fn add_document(&mut self, d: Document) {
        match d {
            Document::Trace(t) => self.add_trace(*t),
            Document::Ranks(ts) => {
                for t in ts {
                    self.add_trace(t);
                }
            }
            Document::Memory(m) => {
                self.memory = Some(crate::memory::MemoryPane::new(&m));
                // the one open before stays, as the memory pane's comparison
                self.ws.memory_before = self.ws.memory.replace(*m);
                self.ws.generation += 1;
                self.bottom_tab = BottomTab::Memory;
            }
            Document::MemoryStats(r) => {
                self.ws.memory_stats = Some(*r);
                self.ws.generation += 1;
            }
            Document::Ncu(n) => {
                self.kernels.sol = Some(strobe_analysis::ncu_match::SolByName::from_report(&n.report));
                self.kernel_sol = Some(crate::kernel_sol::KernelSolPane::new(&n.report));
                self.ws.ncu = Some(*n);
                self.ws.generation += 1;
                self.bottom_tab = BottomTab::KernelSol;
            }
            Document::FlightRecorder(d) => {
                let dumps = &mut self.ws.flight_recorder;
                dumps.retain(|o| o.rank != d.rank);
                let at = dumps.partition_point(|o| o.rank < d.rank);
                dumps.insert(at, *d);
                self.ws.generation += 1;
                self.bottom_tab = BottomTab::FlightRecorder;
            }
        }
    }

    pub fn add_trace(&mut self, t: crate::workspace::Trace) {
        // ids are stable: the selection and folds survive a rank inserted before them
        self.ws.add_trace(t);
        // ranks side by side: their GPU lanes one above the other; a click opens a CPU group
        self.timeline_state.fold_cpu_groups = self.ws.traces.len() >= 2;
        if self.ws.traces.len() >= 3 {
            // many ranks: each starts as its summary lane; expand the ones to read
            self.timeline_state.collapsed =
                self.ws.traces.iter().map(|t| crate::timeline::GroupKey::Trace(t.id)).collect();
        }
        self.timeline_state.fit_pending = true;
    }

    /// Closes every document and forgets what referred to them.
    pub(super) fn close_all(&mut self) {
        self.ws.close_traces();
        self.ws.memory = None;
        self.ws.memory_before = None;
        self.ws.memory_stats = None;
        self.ws.ncu = None;
        self.ws.summaries = None;
        self.ws.flight_recorder.clear();
        self.flight_recorder = Default::default();
        self.memory = None;
        self.kernel_sol = None;
        self.sel = Selection::default();
        self.kernel_highlight = Highlight::default();
        self.search_highlight = Highlight::default();
        self.search = crate::search::SearchBar::default();
        self.area = crate::area::AreaTable::default();
        self.kernels = crate::kernel_table::KernelTable::default();
        self.ranks = crate::ranks::RanksPane::default();
        self.ranks_shown = false;
        self.pipeline = Default::default();
        self.pipeline_shown = false;
        self.timeline_state.forget_documents();
        self.bottom_tab = BottomTab::Kernels;
    }
}
