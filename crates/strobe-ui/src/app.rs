//! The app: owns the workspace (open traces and their analyses) and the selection; lays out
//! the panes; applies the commands they emit once per frame.

use crate::area::AreaTable;
use crate::commands::{Command, Highlight, Selection};
use crate::details::DetailsPane;
use crate::documents::Document;
use crate::file_browser::FileBrowser;
use crate::kernel_table::KernelTable;
use crate::loader::{LoadEvent, Loader};
use crate::search::SearchBar;
use crate::timeline::TimelineView;
use crate::workspace::{SpanRef, Workspace};
use std::path::PathBuf;
use std::sync::mpsc::Receiver;
use std::sync::{Arc, Mutex};
use std::time::Instant;
use strobe_model::{LaneKind, SpanKind};

/// What is remembered between runs (eframe storage).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Settings {
    pub recent: Vec<PathBuf>,
    pub show_bands: bool,
    pub idle_threshold_us: f64,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            recent: Vec::new(),
            show_bands: true,
            idle_threshold_us: strobe_analysis::idle::DEFAULT_THRESHOLD_NS as f64 / 1e3,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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
}

/// `--screenshot`: wait for the loads, lay out, grab a frame, write the PNG, close.
pub struct ScreenshotState {
    pub path: PathBuf,
    /// Optional window to show, in ms from the start of the workspace.
    pub view_ms: Option<(f64, f64)>,
    /// Optional kernel (name substring) to select: highlights it and shows its longest.
    pub select: Option<String>,
    frames: u32,
    requested: bool,
    pub done: Arc<Mutex<Option<Result<(), String>>>>,
}

impl ScreenshotState {
    pub fn new(path: PathBuf, view_ms: Option<(f64, f64)>, select: Option<String>) -> Self {
        ScreenshotState { path, view_ms, select, frames: 0, requested: false, done: Arc::new(Mutex::new(None)) }
    }
}

pub struct StrobeApp {
    pub ws: Workspace,
    pub sel: Selection,
    pub timeline: TimelineView,
    pub kernels: KernelTable,
    pub details: DetailsPane,
    pub search: SearchBar,
    pub area: AreaTable,
    pub browser: FileBrowser,
    pub loader: Loader,
    pub errors: Vec<String>,
    pub settings: Settings,
    pub bottom_tab: BottomTab,
    pub screenshot: Option<ScreenshotState>,
    /// The open Nsight Compute export, if any (`kernel_sol` pane).
    pub kernel_sol: Option<crate::kernel_sol::KernelSolPane>,
    /// The open memory snapshot, if any (`memory` pane).
    pub memory: Option<crate::memory::MemoryPane>,
    /// Ranks side by side: alignment, rank × step table, stragglers (when 2+ traces are open).
    pub ranks: crate::ranks::RanksPane,
    ranks_shown: bool,
    kernel_highlight: Highlight,
    dialog: Option<(Receiver<Option<Vec<PathBuf>>>, Instant)>,
    pending: Vec<Command>,
}

impl StrobeApp {
    pub fn new(cache_dir: Option<PathBuf>, settings: Settings) -> StrobeApp {
        let thr = (settings.idle_threshold_us * 1e3) as i64;
        let mut timeline = TimelineView::default();
        timeline.show_bands = settings.show_bands;
        StrobeApp {
            ws: Workspace::default(),
            sel: Selection::default(),
            timeline,
            kernels: KernelTable::default(),
            details: DetailsPane,
            search: SearchBar::default(),
            area: AreaTable::default(),
            browser: FileBrowser::default(),
            loader: Loader::new(cache_dir, thr),
            errors: Vec::new(),
            settings,
            bottom_tab: BottomTab::Kernels,
            screenshot: None,
            kernel_sol: None,
            memory: None,
            ranks: crate::ranks::RanksPane::default(),
            ranks_shown: false,
            kernel_highlight: Highlight::default(),
            dialog: None,
            pending: Vec::new(),
        }
    }

    /// Starts loading files off the UI thread.
    pub fn open_files(&mut self, paths: Vec<PathBuf>, ctx: &egui::Context) {
        let mut files = Vec::new();
        for p in paths {
            if p.is_dir() {
                // a folder of rank traces: open them all, side by side
                match crate::loader::trace_files_in(&p) {
                    Ok(f) => {
                        files.extend(f);
                        self.bottom_tab = BottomTab::Ranks;
                    }
                    Err(e) => self.errors.push(e),
                }
            } else {
                files.push(p);
            }
        }
        for p in files {
            let c = ctx.clone();
            self.loader.start(&p, move || c.request_repaint());
            self.settings.recent.retain(|r| r != &p);
            self.settings.recent.insert(0, p);
            self.settings.recent.truncate(12);
        }
    }

    /// Hands the ranks pane's alignment offsets to the traces (the timeline draws with them).
    pub fn apply_rank_offsets(&mut self) {
        if let Some(offs) = self.ranks.offsets_to_apply.take() {
            // several ranks just opened: what the user came for is the rank table
            if self.bottom_tab == BottomTab::Kernels && !self.ranks_shown {
                self.bottom_tab = BottomTab::Ranks;
            }
            self.ranks_shown = true;
            for (t, o, rank) in offs {
                if let Some(tr) = self.ws.traces.get_mut(t) {
                    tr.offset_ns = o;
                    // the rank the comparison settled on (files may all claim the same one)
                    tr.label = crate::workspace::trace_label(&tr.path, Some(rank));
                }
            }
        }
    }

    /// Loads a file on this thread (tests, benchmarks).
    pub fn open_blocking(&mut self, path: &std::path::Path) -> Result<(), String> {
        let d = self.loader.load_blocking(path)?;
        self.add_document(d);
        Ok(())
    }

    /// A loaded document into the workspace, with a fresh pane for a snapshot or ncu report.
    pub fn add_document(&mut self, d: Document) {
        match d {
            Document::Trace(t) => self.add_trace(*t),
            Document::Memory(m) => {
                self.memory = Some(crate::memory::MemoryPane::new(&m));
                self.ws.memory = Some(*m);
                self.bottom_tab = BottomTab::Memory;
            }
            Document::MemoryStats(r) => self.ws.memory_stats = Some(*r),
            Document::Ncu(n) => {
                self.kernels.sol = Some(strobe_analysis::ncu_match::SolByName::from_report(&n.report));
                self.kernel_sol = Some(crate::kernel_sol::KernelSolPane::new(&n.report));
                self.ws.ncu = Some(*n);
                self.bottom_tab = BottomTab::KernelSol;
            }
        }
    }

    pub fn add_trace(&mut self, t: crate::workspace::Trace) {
        // ranks in rank order whatever order their loads finish in
        let key = |t: &crate::workspace::Trace| {
            let p = t.path.to_string_lossy();
            let rank = t
                .store
                .meta
                .distributed
                .as_ref()
                .and_then(|d| d.rank)
                .or_else(|| strobe_analysis::ranks::identity::rank_from_file_name(&p));
            (rank.unwrap_or(i64::MAX), p.into_owned())
        };
        let k = key(&t);
        let at = self.ws.traces.partition_point(|x| key(x) <= k);
        let shifts = at < self.ws.traces.len();
        self.ws.traces.insert(at, t);
        if shifts {
            // indices moved: what referred to a trace by index is stale
            self.sel = Selection::default();
            self.kernel_highlight = Highlight::default();
        }
        // ranks side by side: their GPU lanes one above the other; a click opens a CPU group
        self.timeline.fold_cpu_groups = self.ws.traces.len() >= 2;
        if self.ws.traces.len() >= 3 {
            // many ranks: each starts as its summary lane; expand the ones to read
            self.timeline.collapsed = (0..self.ws.traces.len()).map(crate::timeline::GroupKey::Trace).collect();
        }
        self.timeline.fit_pending = true;
    }

    /// The highlight in force: a selected kernel wins over search matches.
    pub fn highlight(&self) -> &Highlight {
        if self.kernel_highlight.active {
            &self.kernel_highlight
        } else {
            &self.search.highlight
        }
    }

    pub fn push(&mut self, c: Command) {
        self.pending.push(c);
    }

    /// The whole UI for one frame (eframe's `App::ui` and the tests call this).
    pub fn frame(&mut self, ui: &mut egui::Ui) {
        let ctx = ui.ctx().clone();
        for ev in self.loader.poll() {
            match ev {
                LoadEvent::Loaded(d) => self.add_document(d),
                LoadEvent::Failed { path, error } => {
                    let msg = format!("{}: {error}", path.display());
                    eprintln!("strobe: {msg}");
                    self.errors.push(msg);
                }
            }
        }
        if self.loader.busy() {
            ctx.request_repaint_after(std::time::Duration::from_millis(50));
        }
        self.link_ncu();
        self.poll_dialog();
        self.ranks.update(&self.ws, &ctx);
        self.apply_rank_offsets();
        let dropped: Vec<PathBuf> = ctx.input(|i| {
            i.raw.dropped_files.iter().map(|f| f.path().to_path_buf()).filter(|p| !p.as_os_str().is_empty()).collect()
        });
        if !dropped.is_empty() {
            self.pending.push(Command::OpenFiles(dropped));
        }
        let mut cmds = std::mem::take(&mut self.pending);

        egui::Panel::top("strobe_menu").show(ui, |ui| {
            ui.horizontal(|ui| {
                ui.menu_button("File", |ui| {
                    if ui.button("Open…").clicked() {
                        cmds.push(Command::ShowOpenDialog);
                        ui.close();
                    }
                    if ui.button("Open folder of ranks…").clicked() {
                        cmds.push(Command::ShowOpenFolderDialog);
                        ui.close();
                    }
                    if ui.button("Open (built-in browser)…").clicked() {
                        self.browser.show();
                        ui.close();
                    }
                    ui.menu_button("Recent", |ui| {
                        if self.settings.recent.is_empty() {
                            ui.weak("nothing yet");
                        }
                        for p in self.settings.recent.clone() {
                            if ui.button(p.display().to_string()).clicked() {
                                cmds.push(Command::OpenFiles(vec![p]));
                                ui.close();
                            }
                        }
                    });
                    if ui.button("Close all").clicked() {
                        cmds.push(Command::CloseAll);
                        ui.close();
                    }
                });
                ui.menu_button("View", |ui| {
                    if ui.checkbox(&mut self.timeline.show_bands, "Overlap and idle bands").changed() {
                        self.settings.show_bands = self.timeline.show_bands;
                    }
                    ui.horizontal(|ui| {
                        ui.label("Idle threshold (µs)");
                        let r = ui.add(
                            egui::DragValue::new(&mut self.settings.idle_threshold_us).range(0.1..=1e6).speed(0.5),
                        );
                        if r.drag_stopped() || r.lost_focus() {
                            cmds.push(Command::SetIdleThreshold((self.settings.idle_threshold_us * 1e3) as i64));
                        }
                    });
                    if ui.button("Fit all (F with nothing selected)").clicked() {
                        cmds.push(Command::FitAll);
                        ui.close();
                    }
                    if ui.button("Clear marks").clicked() {
                        self.timeline.marks.clear();
                        ui.close();
                    }
                });
                ui.separator();
                self.search.ui(ui, &self.ws, &mut cmds);
                ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                    ui.weak(
                        "W/S zoom · A/D pan · drag pan · Ctrl+wheel zoom · F fit · M mark · Shift-drag area · / search",
                    );
                });
            });
            let jobs = &self.loader.jobs;
            if jobs.len() > 4 {
                // many ranks: one bar for all of them
                ui.horizontal(|ui| {
                    let done: f32 = jobs.iter().map(|j| j.fraction()).sum();
                    let opened = self.ws.traces.len();
                    ui.label(format!("Loading {} traces ({opened} open)", jobs.len()));
                    ui.add(egui::ProgressBar::new(done / jobs.len() as f32).desired_width(300.0).text(format!(
                        "{:.0} of {} files' bytes",
                        done,
                        jobs.len()
                    )));
                    if ui.button("Cancel all").clicked() {
                        jobs.iter().for_each(|j| j.cancel());
                    }
                });
            }
            for j in jobs.iter().filter(|_| jobs.len() <= 4) {
                ui.horizontal(|ui| {
                    let p = &j.progress;
                    use std::sync::atomic::Ordering::Relaxed;
                    let (d, t, e) = (p.bytes_done.load(Relaxed), p.bytes_total.load(Relaxed), p.events.load(Relaxed));
                    ui.label(format!("Loading {}", j.path.display()));
                    // read to the end: the analyses its pane shows run next, on the same thread
                    let stage = if t > 0 && d >= t { " · analysing" } else { "" };
                    ui.add(egui::ProgressBar::new(j.fraction()).desired_width(300.0).text(format!(
                        "{:.1} / {:.1} MiB · {} events · {:.1} s{stage}",
                        d as f64 / 1048576.0,
                        t as f64 / 1048576.0,
                        e,
                        j.started.elapsed().as_secs_f32()
                    )));
                    if j.cancelled() {
                        ui.weak("cancelling…");
                    } else if ui.button("Cancel").clicked() {
                        j.cancel();
                    }
                });
            }
            let mut dismiss = None;
            for (i, e) in self.errors.iter().enumerate() {
                ui.horizontal(|ui| {
                    ui.colored_label(egui::Color32::from_rgb(240, 100, 80), format!("Error: {e}"));
                    if ui.small_button("x").clicked() {
                        dismiss = Some(i);
                    }
                });
            }
            if let Some(i) = dismiss {
                self.errors.remove(i);
            }
            // a cut file stays marked while it is open: its figures cover only what was read
            for t in &self.ws.traces {
                if let Some(cut) = &t.store.meta.load.truncated {
                    ui.colored_label(
                        egui::Color32::from_rgb(230, 180, 60),
                        format!("Warning: {}: {}", t.label, cut.message()),
                    );
                }
            }
        });
        if !self.ws.traces.is_empty() {
            egui::Panel::top("strobe_summary").show(ui, |ui| {
                // many ranks: a few lines, the rest scroll (the Ranks tab compares them)
                egui::ScrollArea::vertical()
                    .id_salt("summary_scroll")
                    .max_height(96.0)
                    .show(ui, |ui| crate::summary::ui(ui, &self.ws, &mut cmds));
            });
        }
        egui::Panel::bottom("strobe_bottom").resizable(true).default_size(250.0).show(ui, |ui| {
            ui.horizontal(|ui| {
                ui.selectable_value(&mut self.bottom_tab, BottomTab::Kernels, "Kernels");
                ui.selectable_value(&mut self.bottom_tab, BottomTab::Area, "Area selection");
                ui.selectable_value(&mut self.bottom_tab, BottomTab::Load, "Load summary");
                if self.kernel_sol.is_some() {
                    ui.selectable_value(&mut self.bottom_tab, BottomTab::KernelSol, "Kernel SOL (ncu)");
                }
                if self.memory.is_some() {
                    ui.selectable_value(&mut self.bottom_tab, BottomTab::Memory, "Memory");
                }
                if crate::ranks::RanksPane::applies(&self.ws) {
                    ui.selectable_value(&mut self.bottom_tab, BottomTab::Ranks, "Ranks");
                }
            });
            ui.separator();
            match self.bottom_tab {
                BottomTab::Kernels => self.kernels.ui(ui, &self.ws, &self.sel, &mut cmds),
                BottomTab::Area => self.area.ui(ui, &self.ws),
                BottomTab::Load => load_summary(ui, &self.ws),
                BottomTab::Ranks => self.ranks.ui(ui, &self.ws, &mut cmds),
                BottomTab::Memory => match (&mut self.memory, &self.ws.memory) {
                    (Some(_), Some(_)) if self.ws.traces.is_empty() => {
                        ui.weak("The memory pane fills the main area while no timeline is open.");
                    }
                    (Some(p), Some(doc)) => p.ui(ui, doc, self.ws.memory_stats.as_ref()),
                    _ => {
                        ui.weak("Open a memory snapshot (torch.cuda.memory._dump_snapshot) to see it here.");
                    }
                },
                BottomTab::KernelSol => match (&mut self.kernel_sol, &self.ws.ncu) {
                    (Some(_), Some(_)) if self.ws.traces.is_empty() => {
                        ui.weak("The kernel pane fills the main area while no timeline is open.");
                    }
                    (Some(p), Some(doc)) => p.ui(ui, &doc.report),
                    _ => {
                        ui.weak("Open an Nsight Compute report (.ncu-rep) or CSV export (ncu --csv --page raw) to see its kernels here.");
                    }
                },
            }
        });
        egui::Panel::right("strobe_details").resizable(true).default_size(380.0).show(ui, |ui| {
            self.details.ui(ui, &self.ws, &self.sel, &mut cmds);
        });
        egui::CentralPanel::default().show(ui, |ui| {
            if let (true, Some(p), Some(doc)) = (
                self.ws.traces.is_empty() && (self.bottom_tab == BottomTab::Memory || self.kernel_sol.is_none()),
                self.memory.as_mut(),
                self.ws.memory.as_ref(),
            ) {
                p.ui(ui, doc, self.ws.memory_stats.as_ref());
                return;
            }
            if let (true, Some(p), Some(doc)) = (self.ws.traces.is_empty(), self.kernel_sol.as_mut(), &self.ws.ncu) {
                p.ui(ui, &doc.report);
                return;
            }
            // A launch picked in the kernel pane selects its span on the timeline.
            if let (Some(p), Some(doc)) = (self.kernel_sol.as_mut(), &self.ws.ncu) {
                if let Some(i) = p.take_picked(&doc.report) {
                    cmds.push(Command::SelectNcuLaunch(i));
                }
            }
            let hl = if self.kernel_highlight.active { &self.kernel_highlight } else { &self.search.highlight };
            self.timeline.ui(ui, &self.ws, &self.sel, hl, &mut cmds);
        });
        for p in self.browser.ui(&ctx) {
            cmds.push(Command::OpenFiles(vec![p]));
        }
        if ctx.input(|i| !i.raw.hovered_files.is_empty()) {
            let painter = ctx.layer_painter(egui::LayerId::new(egui::Order::Foreground, egui::Id::unique("drop")));
            let r = ctx.content_rect();
            painter.rect_filled(r, 0.0, egui::Color32::from_black_alpha(160));
            painter.text(
                r.center(),
                egui::Align2::CENTER_CENTER,
                "Drop to open",
                egui::FontId::proportional(28.0),
                egui::Color32::WHITE,
            );
        }
        for c in cmds {
            self.apply(c, &ctx);
        }
        self.screenshot_step(&ctx);
    }

    fn poll_dialog(&mut self) {
        let Some((rx, t0)) = &self.dialog else { return };
        match rx.try_recv() {
            Ok(Some(paths)) if !paths.is_empty() => {
                self.pending.push(Command::OpenFiles(paths));
                self.dialog = None;
            }
            Ok(_) => {
                // Nothing picked. An answer that fast means no portal is there to ask: fall
                // back to the built-in browser so Open… always works.
                if t0.elapsed() < std::time::Duration::from_millis(1500) {
                    self.browser.show();
                }
                self.dialog = None;
            }
            Err(std::sync::mpsc::TryRecvError::Empty) => {}
            Err(_) => {
                self.browser.show();
                self.dialog = None;
            }
        }
    }

    /// Applies one command (what every pane's clicks turn into).
    pub fn apply(&mut self, c: Command, ctx: &egui::Context) {
        match c {
            Command::SelectSpan(r) => {
                self.sel.span = Some(r);
                self.select_launch_of_span(r);
            }
            Command::RevealSpan(r) => {
                self.sel.span = Some(r);
                self.timeline.reveal(&self.ws, r);
                self.select_launch_of_span(r);
            }
            Command::ClearSelection => {
                self.sel = Selection::default();
                self.kernel_highlight = Highlight::default();
            }
            Command::SelectKernel { trace, name } => {
                self.select_kernel(trace, &name);
                // The launch linked to the span shown, else the kernel's first launch.
                if let (Some(p), Some(doc)) = (self.kernel_sol.as_mut(), &self.ws.ncu) {
                    if !self.sel.span.is_some_and(|r| p.select_span(r)) {
                        p.select_name(&doc.report, &name);
                    }
                }
            }
            Command::SelectNcuLaunch(i) => self.select_ncu_launch(i),
            Command::ZoomTo { t0, t1 } => {
                let w = self.timeline.plot_width;
                self.timeline.view.fit(t0, t1, w);
            }
            Command::FitAll => self.timeline.fit_all(&self.ws),
            Command::ShowRankStep { trace, t0, t1 } => {
                let Some(t) = self.ws.traces.get(trace) else { return };
                let pad = (t1 - t0) / 40;
                let (t0, t1) = t.range_to_shared((t0 - pad, t1 + pad));
                let w = self.timeline.plot_width;
                self.timeline.view.fit(t0, t1, w);
                self.timeline.show_trace(trace);
            }
            Command::AreaSelected { t0, t1, lanes } => {
                self.area.compute(&self.ws, t0, t1, &lanes);
                self.sel.range = Some((t0, t1));
                self.bottom_tab = BottomTab::Area;
            }
            Command::OpenFiles(p) => self.open_files(p, ctx),
            Command::ShowOpenDialog | Command::ShowOpenFolderDialog => {
                let folder = matches!(c, Command::ShowOpenFolderDialog);
                let (tx, rx) = std::sync::mpsc::channel();
                let c = ctx.clone();
                std::thread::spawn(move || {
                    let r = if folder {
                        // a folder of rank traces, opened side by side
                        rfd::FileDialog::new().pick_folder().map(|d| vec![d])
                    } else {
                        rfd::FileDialog::new()
                            .add_filter("traces", &["json", "gz", "sqlite", "nsys-rep", "pickle", "csv", "ncu-rep"])
                            .add_filter("all files", &["*"])
                            .pick_files()
                    };
                    let _ = tx.send(r);
                    c.request_repaint();
                });
                self.dialog = Some((rx, Instant::now()));
            }
            Command::CloseAll => {
                self.ws.traces.clear();
                self.sel = Selection::default();
                self.kernel_highlight = Highlight::default();
                self.search = SearchBar::default();
                self.area = AreaTable::default();
                self.kernels = KernelTable::default();
            }
            Command::FocusSearch => self.search.focus_request = true,
            Command::SetIdleThreshold(ns) => {
                self.loader.idle_threshold_ns = ns;
                for t in &mut self.ws.traces {
                    t.set_idle_threshold(ns);
                }
            }
        }
    }

    /// Links the kernel pane's launches to the open traces' kernel spans when the traces
    /// changed, and shows the linked launches' figures in the kernel table.
    fn link_ncu(&mut self) {
        let (Some(p), Some(doc)) = (self.kernel_sol.as_mut(), &self.ws.ncu) else { return };
        if p.link(&doc.report, &self.ws) {
            let ws = &self.ws;
            let names: Vec<Option<String>> = p
                .links
                .iter()
                .map(|l| {
                    let r = (*l)?;
                    let st = &ws.traces.get(r.trace)?.store;
                    Some(st.string(st.span_meta(r.span).name).to_string())
                })
                .collect();
            self.kernels.sol = Some(strobe_analysis::ncu_match::SolByName::from_report_linked(&doc.report, &names));
        }
    }

    /// A span selected anywhere: the kernel pane selects its linked launch, else (a kernel
    /// not in the profiled window) the first launch of its name.
    fn select_launch_of_span(&mut self, r: SpanRef) {
        let (Some(p), Some(doc)) = (self.kernel_sol.as_mut(), &self.ws.ncu) else { return };
        if p.select_span(r) {
            return;
        }
        let Some(t) = self.ws.traces.get(r.trace) else { return };
        let m = t.store.span_meta(r.span);
        if SpanKind::from_u8(m.kind) == SpanKind::Kernel {
            p.select_name(&doc.report, t.store.string(m.name));
        }
    }

    /// An ncu launch selected (kernel pane): select it, highlight its kernel on the timeline
    /// and select + reveal its linked span (by name only when it has none).
    pub fn select_ncu_launch(&mut self, i: usize) {
        let (Some(p), Some(doc)) = (self.kernel_sol.as_mut(), &self.ws.ncu) else { return };
        let Some(k) = doc.report.kernels.get(i) else { return };
        p.selected = Some(i);
        let (link, ncu_name) = (p.links.get(i).copied().flatten(), k.name.clone());
        if let Some(r) = link.filter(|r| r.trace < self.ws.traces.len()) {
            let st = &self.ws.traces[r.trace].store;
            let name = st.string(st.span_meta(r.span).name).to_string();
            self.select_kernel(r.trace, &name);
            self.sel.span = Some(r);
            self.timeline.reveal(&self.ws, r);
        } else if let Some((t, name)) = match_timeline_kernel(&self.ws, &ncu_name) {
            self.select_kernel(t, &name);
        }
    }

    /// Highlights every occurrence of kernel `name` in `trace` and jumps to the longest.
    pub fn select_kernel(&mut self, trace: usize, name: &str) {
        let Some(t) = self.ws.traces.get(trace) else { return };
        let st = &*t.store;
        let mut mask = vec![false; st.string_count()];
        let mut any = false;
        for i in 0..st.string_count() as u32 {
            if st.string(i) == name {
                mask[i as usize] = true;
                any = true;
            }
        }
        let mut best: Option<(i64, u32)> = None;
        for (lane, d) in st.lanes.iter().enumerate() {
            if !matches!(d.kind, LaneKind::GpuStream { .. }) {
                continue;
            }
            for &sid in st.lane_view(lane as u32).span {
                let m = st.span_meta(sid);
                if mask[m.name as usize] && SpanKind::from_u8(m.kind) == SpanKind::Kernel {
                    let dur = st.span_end(sid) - st.span_start(sid);
                    if best.map(|b| dur > b.0).unwrap_or(true) {
                        best = Some((dur, sid));
                    }
                }
            }
        }
        let mut names = vec![Vec::new(); self.ws.traces.len()];
        names[trace] = mask;
        self.kernel_highlight = Highlight { names, active: any };
        self.sel.kernel = Some((trace, name.to_string()));
        if let Some((_, sid)) = best {
            let r = SpanRef { trace, span: sid };
            self.sel.span = Some(r);
            self.timeline.reveal(&self.ws, r);
        }
    }

    fn screenshot_step(&mut self, ctx: &egui::Context) {
        let Some(s) = &mut self.screenshot else { return };
        ctx.request_repaint();
        if s.requested {
            if s.done.lock().map(|d| d.is_some()).unwrap_or(true) {
                ctx.send_viewport_cmd(egui::ViewportCommand::Close);
            }
            return;
        }
        if self.loader.busy()
            || self.ranks.busy()
            || (self.ws.traces.is_empty()
                && self.errors.is_empty()
                && self.kernel_sol.is_none()
                && self.memory.is_none())
        {
            return;
        }
        s.frames += 1;
        if s.frames == 2 {
            let view = s.view_ms;
            let select = s.select.clone();
            if let (Some(name), Some(p), Some(doc)) = (&select, self.kernel_sol.as_mut(), &self.ws.ncu) {
                p.selected = doc.report.kernels.iter().position(|k| k.name.contains(name.as_str())).or(p.selected);
            }
            if let Some(name) = select {
                let found = self.ws.traces.iter().enumerate().find_map(|(ti, t)| {
                    t.derived.kernels.iter().find(|k| k.name.contains(&name)).map(|k| (ti, k.name.clone()))
                });
                if let Some((ti, n)) = found {
                    self.select_kernel(ti, &n);
                }
            }
            if let (Some((a, b)), Some((t0, _))) = (view, self.ws.extent()) {
                let w = self.timeline.plot_width;
                self.timeline.view.fit(t0 + (a * 1e6) as i64, t0 + (b * 1e6) as i64, w);
            }
            return;
        }
        if s.frames >= 6 {
            let path = s.path.clone();
            let done = s.done.clone();
            let errors = self.errors.clone();
            s.requested = true;
            ctx.send_viewport_cmd(egui::ViewportCommand::Screenshot(egui::ScreenshotCallback::new(move |img| {
                let r = save_png(&img, &path).and_then(|()| {
                    if errors.is_empty() {
                        Ok(())
                    } else {
                        Err(format!("written, but loading failed: {}", errors.join("; ")))
                    }
                });
                if let Ok(mut d) = done.lock() {
                    *d = Some(r);
                }
            })));
        }
    }
}

pub fn save_png(img: &egui::ColorImage, path: &std::path::Path) -> Result<(), String> {
    let [w, h] = img.size;
    let mut bytes = Vec::with_capacity(w * h * 4);
    for p in &img.pixels {
        bytes.extend_from_slice(&p.to_srgba_unmultiplied());
    }
    let buf = image::RgbaImage::from_raw(w as u32, h as u32, bytes).ok_or("screenshot has the wrong size")?;
    buf.save_with_format(path, image::ImageFormat::Png).map_err(|e| format!("{}: {e}", path.display()))
}

fn load_summary(ui: &mut egui::Ui, ws: &Workspace) {
    egui::ScrollArea::vertical().id_salt("load_summary").auto_shrink([false, false]).show(ui, |ui| {
        for t in &ws.traces {
            let m = &t.store.meta;
            ui.strong(format!("{} — {} ({})", t.label, t.path.display(), m.format.as_str()));
            ui.label(format!(
                "{} events · {} spans · {} lanes · {} flows · {} counter series",
                m.load.events,
                t.store.span_count(),
                t.store.lanes.len(),
                t.store.flows().len(),
                t.store.counters.len()
            ));
            if !m.load.skipped.is_empty() {
                let sk: Vec<String> = m.load.skipped.iter().map(|(k, v)| format!("{k}: {v}")).collect();
                ui.label(format!("skipped: {}", sk.join(", ")));
            }
            for n in &m.load.notes {
                ui.label(format!("note: {n}"));
            }
            if let Some(cut) = &m.load.truncated {
                ui.colored_label(egui::Color32::from_rgb(230, 180, 60), cut.message());
            }
            ui.separator();
        }
    });
}

impl eframe::App for StrobeApp {
    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        self.frame(ui);
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        if self.screenshot.is_none() {
            eframe::set_value(storage, "strobe_settings", &self.settings);
        }
    }

    fn persist_egui_memory(&self) -> bool {
        self.screenshot.is_none()
    }
}

/// The timeline kernel an ncu launch's name stands for (`ncu_match::kernel_for_launch`).
pub fn match_timeline_kernel(ws: &Workspace, ncu_name: &str) -> Option<(usize, String)> {
    let lists: Vec<&[strobe_analysis::kernels::KernelStat]> =
        ws.traces.iter().map(|t| t.derived.kernels.as_slice()).collect();
    strobe_analysis::ncu_match::kernel_for_launch(&lists, ncu_name)
}
