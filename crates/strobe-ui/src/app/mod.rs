//! The app: owns the workspace (every open document), the selection and the view state the
//! panes share, lays out the panes, and applies the commands they emit once per frame. Split
//! by concern: `menu` (the top bar), `status` (loads, errors, warnings), `layout` (where the
//! panes go), `apply` (what each command does), `open` (files into the workspace), `dialog`
//! (Open…), `save` (Save session…), `screenshot` (`--screenshot`), `access` (accessors for tests and benchmarks).

/// The context every pane gets. A macro, not a method: a method would borrow the whole app
/// while the pane it is handed to is a field of the app.
macro_rules! view_ctx {
    ($app:expr, $cmds:expr) => {
        $crate::view_ctx::ViewCtx::new(
            $crate::view_ctx::Shared {
                ws: &$app.ws,
                sel: &$app.sel,
                highlight: $crate::app::highlight(&$app.kernel_highlight, &$app.search_highlight),
                state: &$app.timeline_state,
                sender: &$app.sender,
            },
            $cmds,
        )
    };
}

mod access;
mod apply;
mod dialog;
mod idle_threshold;
mod layout;
mod menu;
mod open;
mod recent;
mod save;
mod screenshot;
mod settings;
mod status;
mod title;

pub use apply::match_timeline_kernel;
pub use dialog::OpenMode;
pub use recent::Recent;
pub use screenshot::{save_png, ScreenshotState};
pub use settings::Settings;
pub use status::Notice;

use crate::area::AreaTable;
use crate::commands::{Command, CommandReceiver, CommandSender, Highlight, Selection};
use crate::details::DetailsPane;
use crate::file_browser::FileBrowser;
use crate::kernel_table::KernelTable;
use crate::loader::Loader;
use crate::search::SearchBar;
use crate::timeline::{TimelineState, TimelineView};
use crate::workspace::Workspace;
use std::path::PathBuf;

/// The bottom tabs' ids (sessions save the one shown); `layout` lists their panes.
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
    /// torch.profiler's key_averages table: per op calls, CPU and device time.
    Ops,
    /// The longest GPU idle gaps.
    Gaps,
    /// Each step's time split into named parts, per trace.
    Steps,
    /// Flight-recorder dumps: ranks × sequence numbers per process group.
    FlightRecorder,
}

/// The highlight in force: a selected kernel wins over search matches.
pub(crate) fn highlight<'a>(kernel: &'a Highlight, search: &'a Highlight) -> &'a Highlight {
    if kernel.active {
        kernel
    } else {
        search
    }
}

pub struct StrobeApp {
    pub ws: Workspace,
    pub sel: Selection,
    pub settings: Settings,
    pub screenshot: Option<ScreenshotState>,
    /// The time window, marks, folds and pins every pane reads (sessions save it).
    pub(crate) timeline_state: TimelineState,
    pub(crate) timeline: TimelineView,
    pub(crate) kernels: KernelTable,
    pub ops: crate::op_table_pane::OpTablePane,
    pub(crate) details: DetailsPane,
    pub(crate) efficiency: crate::efficiency_pane::EfficiencyPane,
    pub(crate) search: SearchBar,
    pub(crate) area: AreaTable,
    pub(crate) load_summary: crate::panes::LoadSummary,
    pub(crate) gaps: crate::gaps_pane::GapsPane,
    pub(crate) steps: crate::step_view::StepsPane,
    pub(crate) notes: crate::notes::NotesPane,
    pub(crate) browser: FileBrowser,
    pub(crate) loader: Loader,
    /// The open Nsight Compute export's pane, if any.
    pub(crate) kernel_sol: Option<crate::kernel_sol::KernelSolPane>,
    /// The open memory snapshot's pane, if any.
    pub(crate) memory: Option<crate::memory::MemoryPane>,
    /// The open flight-recorder dumps matched across ranks.
    pub(crate) flight_recorder: crate::flight_recorder_pane::FlightRecorderPane,
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
    /// The desktop's Save session… dialog, while it is up.
    save_dialog: Option<save::SaveJob>,
    /// The built-in Save session… dialog (where the desktop has none).
    pub(crate) save_browser: crate::save_browser::SaveBrowser,
    /// Ask the desktop for file dialogs (off: the built-in ones only).
    pub(crate) native_dialogs: bool,
    /// Why the desktop has no file dialog, once a dialog failed to come.
    no_native_dialog: Option<String>,
    /// What the status line says until dismissed (a saved session, a missing dialog).
    pub(crate) notices: Vec<status::Notice>,
    /// The bundled sample's path, while `strobe` started without a file shows it.
    sample: Option<PathBuf>,
    /// The title last given to the window.
    shown_title: Option<String>,
    /// The generation of the workspace the ncu links were made for.
    ncu_linked: Option<u64>,
    pending: Vec<Command>,
    /// Commands from other threads (`ViewCtx::sender`), drained once per frame.
    sender: CommandSender,
    received: CommandReceiver,
}

impl StrobeApp {
    pub fn new(cache_dir: Option<PathBuf>, settings: Settings) -> StrobeApp {
        let mut ws = Workspace::default();
        ws.set_figure_settings(settings.figure_settings());
        let timeline_state = TimelineState { show_bands: settings.show_bands, ..Default::default() };
        let (sender, received) = crate::commands::command_channel();
        StrobeApp {
            ws,
            sel: Selection::default(),
            settings,
            screenshot: None,
            timeline_state,
            timeline: TimelineView::default(),
            kernels: KernelTable::default(),
            ops: Default::default(),
            details: DetailsPane::default(),
            efficiency: Default::default(),
            search: SearchBar::default(),
            area: AreaTable::default(),
            load_summary: Default::default(),
            gaps: Default::default(),
            steps: Default::default(),
            notes: Default::default(),
            browser: FileBrowser::default(),
            loader: Loader::new(cache_dir),
            kernel_sol: None,
            memory: None,
            flight_recorder: Default::default(),
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
            save_browser: Default::default(),
            native_dialogs: true,
            no_native_dialog: None,
            notices: Vec::new(),
            sample: None,
            shown_title: None,
            pending: Vec::new(),
            sender,
            received,
        }
    }

    /// The highlight in force: a selected kernel wins over search matches.
    pub fn highlight(&self) -> &Highlight {
        highlight(&self.kernel_highlight, &self.search_highlight)
    }

    /// Queues a command as if a pane had emitted it (applied at the end of the next frame).
    pub fn push(&mut self, c: Command) {
        self.pending.push(c);
    }

    /// Applies every queued command now, those other threads sent included (tests).
    pub fn apply_pending(&mut self, ctx: &egui::Context) {
        for c in self.take_commands(ctx) {
            self.apply(c, ctx);
        }
    }

    /// The commands queued since the last frame: pushed ones, then those other threads sent.
    fn take_commands(&mut self, ctx: &egui::Context) -> Vec<Command> {
        let mut cmds = std::mem::take(&mut self.pending);
        cmds.extend(self.received.drain(ctx));
        cmds
    }

    /// The whole UI for one frame (eframe's `App::ui` and the tests call this).
    pub fn frame(&mut self, ui: &mut egui::Ui) {
        let ctx = ui.ctx().clone();
        if ctx.options(|o| o.theme_preference) != self.settings.theme {
            ctx.set_theme(self.settings.theme);
        }
        self.poll_loads(&ctx);
        self.link_ncu();
        self.poll_dialog();
        self.poll_session();
        self.poll_save(&ctx);
        let mut cmds = self.take_commands(&ctx);
        {
            let mut cx = view_ctx!(self, &mut cmds);
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
        self.track_finder.ui(&ctx, &mut view_ctx!(self, &mut cmds));
        let mut shortcuts = self.timeline_state.show_shortcuts;
        crate::shortcuts::window(&ctx, &mut shortcuts);
        if shortcuts != self.timeline_state.show_shortcuts {
            cmds.push(Command::ToggleShortcuts);
        }
        status::drop_overlay(&ctx);
        for c in cmds {
            self.apply(c, &ctx);
        }
        self.update_title(&ctx);
        self.screenshot_step(&ctx);
    }

    /// The timeline pane alone, with the app's context, its commands applied (snapshot tests).
    pub fn timeline_pane(&mut self, ui: &mut egui::Ui) {
        let ctx = ui.ctx().clone();
        let mut cmds = self.take_commands(&ctx);
        self.timeline.ui(ui, &mut view_ctx!(self, &mut cmds));
        for c in cmds {
            self.apply(c, &ctx);
        }
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
