//! The app: owns the workspace (every open document) and the selection, lays out the panes,
//! and applies the commands they emit once per frame. Split by concern: `menu` (the top bar),
//! `status` (loads, errors, warnings), `apply` (what each command does), `open` (files into
//! the workspace), `dialog` (Open…), `screenshot` (`--screenshot`).

mod apply;
mod dialog;
mod menu;
mod open;
mod screenshot;
mod status;

pub use apply::match_timeline_kernel;
pub use dialog::OpenMode;
pub use screenshot::{save_png, ScreenshotState};

use crate::area::AreaTable;
use crate::commands::{Command, Highlight, Selection};
use crate::details::DetailsPane;
use crate::file_browser::FileBrowser;
use crate::kernel_table::KernelTable;
use crate::loader::Loader;
use crate::search::SearchBar;
use crate::timeline::TimelineView;
use crate::view_ctx::ViewCtx;
use crate::workspace::Workspace;
use std::path::PathBuf;

/// What is remembered between runs (eframe storage).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Settings {
    pub recent: Vec<PathBuf>,
    pub show_bands: bool,
    pub idle_threshold_us: f64,
    /// Reopen the last session when started without files.
    pub restore_session: bool,
    /// `--steps REGEX` of the viewer (empty: the built-in rules).
    pub step_pattern: String,
}

impl Settings {
    /// The figure settings these remembered ones give (a pattern that is not a regex: the
    /// built-in step rules).
    pub fn figure_settings(&self) -> crate::workspace::FigureSettings {
        let step_rule = strobe_analysis::steps::StepRule::from_pattern(self.step_pattern.trim())
            .ok()
            .filter(|_| !self.step_pattern.trim().is_empty())
            .unwrap_or_default();
        crate::workspace::FigureSettings { step_rule, idle_threshold_ns: (self.idle_threshold_us * 1e3) as i64 }
    }
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            recent: Vec::new(),
            show_bands: true,
            idle_threshold_us: strobe_analysis::idle::DEFAULT_THRESHOLD_NS as f64 / 1e3,
            restore_session: true,
            step_pattern: String::new(),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum BottomTab {
    Kernels,
    Area,
    Load,
    /// The Nsight Compute kernel pane (when an ncu export is open).
    KernelSol,
    /// The memory pane (when a memory snapshot is open).
    Memory,
    /// Ranks side by side (when two or more traces are open).
    Ranks,
    /// Marks and named notes.
    Notes,
    /// The trace's ops on the roofline, efficiency and MFU.
    Efficiency,
    /// Pipeline stages, bubbles and P2P (when the open ranks form a pipeline).
    Pipeline,
}

pub struct StrobeApp {
    pub ws: Workspace,
    pub sel: Selection,
    pub settings: Settings,
    pub screenshot: Option<ScreenshotState>,
    pub(crate) timeline: TimelineView,
    pub(crate) kernels: KernelTable,
    pub(crate) details: DetailsPane,
    pub(crate) efficiency: crate::efficiency_pane::EfficiencyPane,
    pub(crate) search: SearchBar,
    pub(crate) area: AreaTable,
    pub(crate) browser: FileBrowser,
    pub(crate) loader: Loader,
    /// The open Nsight Compute export's pane, if any.
    pub(crate) kernel_sol: Option<crate::kernel_sol::KernelSolPane>,
    /// The open memory snapshot's pane, if any.
    pub(crate) memory: Option<crate::memory::MemoryPane>,
    /// Ranks side by side: alignment, rank × step table, stragglers (when 2+ traces are open).
    pub(crate) ranks: crate::ranks::RanksPane,
    /// Pipeline stages × steps (when the open ranks form a pipeline).
    pub(crate) pipeline: crate::pipeline::PipelinePane,
    pipeline_shown: bool,
    pub(crate) errors: Vec<String>,
    pub(crate) bottom_tab: BottomTab,
    /// The panels' sizes as last drawn (None before the first frame with traces).
    pub(crate) panel_sizes: Option<crate::session::PanelSizes>,
    /// Sizes from an opened session, enforced for one frame (then the user's again).
    pub(crate) restore_panels: Option<crate::session::PanelSizes>,
    ranks_shown: bool,
    pub(crate) track_finder: crate::track_finder::TrackFinder,
    search_highlight: Highlight,
    kernel_highlight: Highlight,
    dialog: Option<dialog::DialogJob>,
    /// The batch of files that replaces what is open when its first file arrives.
    replacing: Option<u64>,
    next_batch: u64,
    /// A session being opened: applied once its files have loaded.
    pending_session: Option<crate::session::Session>,
    /// The Save session… dialog.
    save_dialog: Option<crate::jobs::Pending<Option<PathBuf>>>,
    /// The generation of the workspace the ncu links were made for.
    ncu_linked: Option<u64>,
    pending: Vec<Command>,
}

impl StrobeApp {
    pub fn new(cache_dir: Option<PathBuf>, settings: Settings) -> StrobeApp {
        let mut ws = Workspace::default();
        ws.set_figure_settings(settings.figure_settings());
        let mut timeline = TimelineView::default();
        timeline.show_bands = settings.show_bands;
        StrobeApp {
            ws,
            sel: Selection::default(),
            settings,
            screenshot: None,
            timeline,
            kernels: KernelTable::default(),
            details: DetailsPane::default(),
            efficiency: Default::default(),
            search: SearchBar::default(),
            area: AreaTable::default(),
            browser: FileBrowser::default(),
            loader: Loader::new(cache_dir),
            kernel_sol: None,
            memory: None,
            ranks: crate::ranks::RanksPane::default(),
            pipeline: Default::default(),
            pipeline_shown: false,
            errors: Vec::new(),
            bottom_tab: BottomTab::Kernels,
            panel_sizes: None,
            restore_panels: None,
            ranks_shown: false,
            track_finder: Default::default(),
            search_highlight: Highlight::default(),
            kernel_highlight: Highlight::default(),
            dialog: None,
            replacing: None,
            next_batch: 0,
            ncu_linked: None,
            pending_session: None,
            save_dialog: None,
            pending: Vec::new(),
        }
    }

    /// Loads without reading or writing the store cache (tests).
    pub fn set_no_cache(&mut self, on: bool) {
        self.loader.no_cache = on;
    }

    pub fn timeline(&self) -> &TimelineView {
        &self.timeline
    }

    /// The panes' view state, to set up a test or a benchmark the way a user would leave it.
    pub fn timeline_mut(&mut self) -> &mut TimelineView {
        &mut self.timeline
    }

    pub fn ranks_mut(&mut self) -> &mut crate::ranks::RanksPane {
        &mut self.ranks
    }

    pub fn kernels_mut(&mut self) -> &mut KernelTable {
        &mut self.kernels
    }

    pub fn kernel_sol_mut(&mut self) -> Option<&mut crate::kernel_sol::KernelSolPane> {
        self.kernel_sol.as_mut()
    }

    pub fn set_bottom_tab(&mut self, t: BottomTab) {
        self.bottom_tab = t;
    }

    pub fn kernels(&self) -> &KernelTable {
        &self.kernels
    }

    pub fn kernel_sol(&self) -> Option<&crate::kernel_sol::KernelSolPane> {
        self.kernel_sol.as_ref()
    }

    pub fn memory(&self) -> Option<&crate::memory::MemoryPane> {
        self.memory.as_ref()
    }

    pub fn ranks(&self) -> &crate::ranks::RanksPane {
        &self.ranks
    }

    pub fn pipeline(&self) -> &crate::pipeline::PipelinePane {
        &self.pipeline
    }

    pub fn browser(&self) -> &FileBrowser {
        &self.browser
    }

    pub fn errors(&self) -> &[String] {
        &self.errors
    }

    pub fn bottom_tab(&self) -> BottomTab {
        self.bottom_tab
    }

    pub fn search(&self) -> &SearchBar {
        &self.search
    }

    pub fn area(&self) -> &AreaTable {
        &self.area
    }

    pub fn browser_mut(&mut self) -> &mut FileBrowser {
        &mut self.browser
    }

    pub fn loader(&self) -> &Loader {
        &self.loader
    }

    /// Whether files are still loading.
    pub fn loading(&self) -> bool {
        self.loader.busy()
    }

    /// The highlight in force: a selected kernel wins over search matches.
    pub fn highlight(&self) -> &Highlight {
        if self.kernel_highlight.active {
            &self.kernel_highlight
        } else {
            &self.search_highlight
        }
    }

    /// Queues a command as if a pane had emitted it (applied at the end of the next frame).
    pub fn push(&mut self, c: Command) {
        self.pending.push(c);
    }

    /// Applies every queued command now (tests).
    pub fn apply_pending(&mut self, ctx: &egui::Context) {
        for c in std::mem::take(&mut self.pending) {
            self.apply(c, ctx);
        }
    }

    /// The whole UI for one frame (eframe's `App::ui` and the tests call this).
    pub fn frame(&mut self, ui: &mut egui::Ui) {
        let ctx = ui.ctx().clone();
        self.poll_loads(&ctx);
        self.link_ncu();
        self.poll_dialog();
        self.poll_session();
        let mut cmds = std::mem::take(&mut self.pending);
        {
            let hl = if self.kernel_highlight.active { &self.kernel_highlight } else { &self.search_highlight };
            let mut cx = ViewCtx::new(&self.ws, &self.sel, hl, &mut cmds);
            self.ranks.update(&mut cx, &ctx);
        }
        let dropped: Vec<PathBuf> = ctx.input(|i| {
            i.raw.dropped_files.iter().map(|f| f.path().to_path_buf()).filter(|p| !p.as_os_str().is_empty()).collect()
        });
        if !dropped.is_empty() {
            cmds.push(Command::OpenFiles(dropped));
        }
        self.top_bar(ui, &mut cmds);
        self.panes(ui, &mut cmds);
        for p in self.browser.ui(&ctx) {
            cmds.push(Command::OpenFiles(vec![p]));
        }
        {
            let hl = if self.kernel_highlight.active { &self.kernel_highlight } else { &self.search_highlight };
            let mut cx = ViewCtx::new(&self.ws, &self.sel, hl, &mut cmds);
            self.track_finder.ui(&ctx, &mut cx, &self.timeline.pinned);
        }
        crate::shortcuts::window(&ctx, &mut self.timeline.show_shortcuts);
        status::drop_overlay(&ctx);
        for c in cmds {
            self.apply(c, &ctx);
        }
        self.screenshot_step(&ctx);
    }

    /// The timeline pane alone, with the app's context, its commands applied (snapshot tests).
    pub fn timeline_pane(&mut self, ui: &mut egui::Ui) {
        let mut cmds = std::mem::take(&mut self.pending);
        let hl = if self.kernel_highlight.active { &self.kernel_highlight } else { &self.search_highlight };
        self.timeline.ui(ui, &mut ViewCtx::new(&self.ws, &self.sel, hl, &mut cmds));
        let ctx = ui.ctx().clone();
        for c in cmds {
            self.apply(c, &ctx);
        }
    }

    /// The summary strip, the bottom tabs, Details and the timeline (or, with no timeline
    /// open, the memory or kernel pane in the main area).
    fn panes(&mut self, ui: &mut egui::Ui, cmds: &mut Vec<Command>) {
        let hl = if self.kernel_highlight.active { &self.kernel_highlight } else { &self.search_highlight };
        let no_traces = self.ws.traces.is_empty();
        if !no_traces {
            egui::Panel::top("strobe_summary").show(ui, |ui| {
                // many ranks: a few lines, the rest scroll (the Ranks tab compares them)
                egui::ScrollArea::vertical()
                    .id_salt("summary_scroll")
                    .max_height(96.0)
                    .show(ui, |ui| crate::summary::ui(ui, &mut ViewCtx::new(&self.ws, &self.sel, hl, cmds)));
            });
        }
        if !no_traces {
            let restore = self.restore_panels.take();
            let mut bottom = egui::Panel::bottom("strobe_bottom").resizable(true).default_size(250.0);
            if let Some(p) = restore {
                bottom = bottom.exact_size(p.bottom);
            }
            let bottom_h = bottom.show(ui, |ui| {
                ui.horizontal(|ui| {
                    ui.selectable_value(&mut self.bottom_tab, BottomTab::Kernels, "Kernels");
                    ui.selectable_value(&mut self.bottom_tab, BottomTab::Area, "Area selection");
                    ui.selectable_value(&mut self.bottom_tab, BottomTab::Load, "Load summary");
                    ui.selectable_value(&mut self.bottom_tab, BottomTab::Efficiency, "Efficiency");
                    if self.kernel_sol.is_some() {
                        ui.selectable_value(&mut self.bottom_tab, BottomTab::KernelSol, "Kernel SOL (ncu)");
                    }
                    if self.memory.is_some() {
                        ui.selectable_value(&mut self.bottom_tab, BottomTab::Memory, "Memory");
                    }
                    if crate::ranks::RanksPane::applies(&self.ws) {
                        ui.selectable_value(&mut self.bottom_tab, BottomTab::Ranks, "Ranks");
                    }
                    if self.ws.pipeline.is_some() {
                        ui.selectable_value(&mut self.bottom_tab, BottomTab::Pipeline, "Pipeline");
                    }
                    ui.selectable_value(&mut self.bottom_tab, BottomTab::Notes, "Notes");
                });
                ui.separator();
                // The tab draws into exactly the panel's space, clipped: a tab with much to show
                // scrolls inside it instead of growing the panel (its height is the user's).
                let area = ui.available_rect_before_wrap();
                ui.allocate_rect(area, egui::Sense::hover());
                let mut ui = ui.new_child(egui::UiBuilder::new().max_rect(area).layout(*ui.layout()));
                ui.set_clip_rect(area.intersect(ui.clip_rect()));
                let ui = &mut ui;
                let mut cx = ViewCtx::new(&self.ws, &self.sel, hl, cmds);
                match self.bottom_tab {
                    BottomTab::Kernels => self.kernels.ui(ui, &mut cx),
                    BottomTab::Area => self.area.ui(ui, &mut cx),
                    BottomTab::Load => crate::load_summary::ui(ui, &mut cx),
                    BottomTab::Notes => crate::notes::ui(ui, &mut self.timeline, &mut cx),
                    BottomTab::Efficiency => self.efficiency.ui(ui, &mut cx),
                    BottomTab::Ranks => self.ranks.ui(ui, &mut cx),
                    BottomTab::Pipeline => self.pipeline.ui(ui, &mut cx),
                    BottomTab::Memory => match &mut self.memory {
                        Some(p) => p.ui(ui, &mut cx),
                        None => {
                            ui.weak("Open a memory snapshot (torch.cuda.memory._dump_snapshot) to see it here.");
                        }
                    },
                    BottomTab::KernelSol => match &mut self.kernel_sol {
                        Some(p) => p.ui(ui, &mut cx),
                        None => {
                            ui.weak("Open an Nsight Compute report (.ncu-rep) or CSV export (ncu --csv --page raw) to see its kernels here.");
                        }
                    },
                }
            });
            // Details reads timeline spans: nothing to say beside a snapshot or an ncu report alone
            let mut details = egui::Panel::right("strobe_details").resizable(true).default_size(380.0);
            if let Some(p) = restore {
                details = details.exact_size(p.details);
            }
            let details_w = details.show(ui, |ui| {
                self.details.ui(ui, &mut ViewCtx::new(&self.ws, &self.sel, hl, cmds));
            });
            self.panel_sizes = Some(crate::session::PanelSizes {
                bottom: bottom_h.response.rect.height(),
                details: details_w.response.rect.width(),
            });
        }
        egui::CentralPanel::default().show(ui, |ui| {
            if no_traces && self.memory.is_some() && self.kernel_sol.is_some() {
                ui.horizontal(|ui| {
                    ui.selectable_value(&mut self.bottom_tab, BottomTab::Memory, "Memory");
                    ui.selectable_value(&mut self.bottom_tab, BottomTab::KernelSol, "Kernel SOL (ncu)");
                });
                ui.separator();
            }
            // the memory or kernel pane fills the main area while no timeline is open
            let main_memory = no_traces
                && self.memory.is_some()
                && (self.bottom_tab != BottomTab::KernelSol || self.kernel_sol.is_none());
            let main_kernels = no_traces && !main_memory && self.kernel_sol.is_some();
            let mut cx = ViewCtx::new(&self.ws, &self.sel, hl, cmds);
            match (&mut self.memory, &mut self.kernel_sol) {
                // a folder of rank summaries alone: the ranks views fill the window
                _ if no_traces && self.ws.summaries.is_some() => self.ranks.ui(ui, &mut cx),
                (Some(p), _) if main_memory => p.ui(ui, &mut cx),
                (_, Some(p)) if main_kernels => p.ui(ui, &mut cx),
                _ => self.timeline.ui(ui, &mut cx),
            }
        });
    }
}

impl eframe::App for StrobeApp {
    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        self.frame(ui);
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        if self.screenshot.is_none() {
            eframe::set_value(storage, "strobe_settings", &self.settings);
            if self.settings.restore_session && !self.ws.traces.is_empty() {
                if let Some(p) = crate::session::Session::last_path() {
                    let _ = std::fs::create_dir_all(p.parent().unwrap_or(std::path::Path::new(".")));
                    if let Err(e) = self.session().write(&p) {
                        eprintln!("strobe: could not keep the session: {e}");
                    }
                }
            }
        }
    }

    fn persist_egui_memory(&self) -> bool {
        self.screenshot.is_none()
    }
}
