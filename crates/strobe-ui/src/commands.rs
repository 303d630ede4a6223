//! What panes ask for. Panes never change shared state themselves: they push commands, and
//! the app applies them once per frame, so a click in the kernel table and a click on the
//! timeline take the same path. A worker thread sends them through a `CommandSender`.

use crate::timeline::{GroupKey, View};
use crate::workspace::{SpanRef, TraceId};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{mpsc, Arc, OnceLock};

#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    /// Select a span (details, flows, stack).
    SelectSpan(SpanRef),
    /// Select a span and bring it into view (zoom so it reads, scroll to its lane).
    RevealSpan(SpanRef),
    /// F: fit the window to a span and scroll to its row.
    FrameSpan(SpanRef),
    ClearSelection,
    /// Highlight every occurrence of a kernel name and jump to its longest.
    SelectKernel {
        trace: TraceId,
        name: String,
    },
    /// Select an Nsight Compute launch (index into the kernel pane's report) and, when it is
    /// linked to a timeline kernel span, select that span and bring it into view.
    SelectNcuLaunch(usize),
    /// Show [t0, t1) (absolute ns).
    ZoomTo {
        t0: i64,
        t1: i64,
    },
    /// Centre the view on `t` (absolute ns), keeping the zoom.
    CenterOn(i64),
    /// The timeline moved its window or scroll. `from` is the window it moved: when another
    /// command has set the window since, that one stands.
    SetView {
        from: View,
        view: View,
        scroll_y: f32,
    },
    /// The label column's width (px).
    SetLabelWidth(f32),
    /// Fold an open group, open a folded one.
    ToggleFold(GroupKey),
    /// Fit everything.
    FitAll,
    /// Show a rank's step: `[t0, t1)` in that trace's own clock; expand it and scroll to it.
    ShowRankStep {
        trace: TraceId,
        t0: i64,
        t1: i64,
    },
    /// An area of the timeline: time range and the lanes it covers.
    AreaSelected {
        t0: i64,
        t1: i64,
        lanes: Vec<(TraceId, u32)>,
    },
    /// Group the area selection's rows this way.
    AreaPivot(crate::area::Pivot),
    /// The ranks pane settled the clocks: per trace its offset on the shared axis and the
    /// rank the comparison settled on (files may all claim the same one).
    ApplyAlignment(Vec<(TraceId, i64, i64)>),
    /// The search bar's matches changed: highlight these.
    SearchResults(Highlight),
    /// Open files in place of what is open (File ▸ Open, Recent, drop).
    OpenFiles(Vec<PathBuf>),
    /// Open files beside what is open: traces as more ranks (File ▸ Add as rank).
    AddFiles(Vec<PathBuf>),
    /// Show the Open… dialog (portal, or the in-app browser when no portal answers).
    ShowOpenDialog(crate::app::OpenMode),
    /// The in-app file browser.
    ShowBrowser,
    CloseAll,
    /// A mark (empty `note`) or a named note at `t` (shared axis); `name_it`: the Notes tab
    /// focuses its name.
    AddMark {
        t: i64,
        note: String,
        name_it: bool,
    },
    /// Mark `index`'s (in time order) new note.
    RenameMark {
        index: usize,
        note: String,
    },
    DeleteMark(usize),
    /// The Notes tab has focused the note just added.
    NoteFocused,
    ClearMarks,
    /// Save the session to this file (None: ask where).
    SaveSession(Option<PathBuf>),
    /// The keyboard-shortcut sheet (`?`).
    ToggleShortcuts,
    /// The Notes tab (marks and named notes).
    ShowNotes,
    /// Ctrl+P: the track finder.
    FindTrack,
    /// Show a lane: unfold its groups, scroll to it, flash it.
    RevealLane {
        trace: TraceId,
        lane: u32,
    },
    /// Pin a lane to the top of the timeline (again: unpin).
    TogglePin {
        trace: TraceId,
        lane: u32,
    },
    /// Hide a lane from the timeline, or show it again.
    SetLaneHidden {
        trace: TraceId,
        lane: u32,
        hidden: bool,
    },
    /// Show every hidden lane again.
    ShowHiddenLanes,
    /// Search for every span of this name (a span's menu).
    FindAll(String),
    FocusSearch,
    /// End the search: clear its box and its highlight (Esc).
    EndSearch,
    SetIdleThreshold(i64),
    /// Steps are the ranges whose whole name matches this regex (empty: the built-in rules:
    /// ProfilerStep#N, iteration-like NVTX names, else the inferred period).
    SetStepPattern(String),
    /// Select step `index` (in the trace's step order) of `trace`: the Steps tab and the
    /// summary strip speak of it.
    SelectStep {
        trace: TraceId,
        index: usize,
    },
    /// The Efficiency tab, showing `trace`, its ops filtered to one op class (None: all).
    ShowEfficiency {
        trace: TraceId,
        class: Option<String>,
    },
    /// The Pipeline tab (when the open ranks form a pipeline).
    ShowPipeline,
    /// The kernel (Nsight Compute) pane, its "where a faster kernel pays most" list open.
    ShowKernelGains,
    /// The Steps tab, showing `trace`.
    ShowSteps(TraceId),
    /// Outline the steps' critical paths on the timeline, or stop.
    ToggleCriticalPath,
    /// The pipeline the open traces form (None: none), found on a worker thread.
    SetPipeline(Option<std::sync::Arc<crate::pipeline::PipelineView>>),
    /// The ranks comparison's matched collectives (None: no comparison).
    SetCollectives(Option<std::sync::Arc<crate::collective_index::CollectiveIndex>>),
}

/// A clonable way to send commands from any thread (a worker's finished job); the app
/// applies them with the panes' on the next frame, and a send wakes the UI for it.
#[derive(Clone)]
pub struct CommandSender {
    tx: mpsc::Sender<Command>,
    /// Set on the first frame (the app is made before egui's context reaches it).
    repaint: Arc<OnceLock<egui::Context>>,
}

/// The app's end of a `CommandSender`.
pub struct CommandReceiver {
    rx: mpsc::Receiver<Command>,
    repaint: Arc<OnceLock<egui::Context>>,
}

/// A connected sender and receiver.
pub fn command_channel() -> (CommandSender, CommandReceiver) {
    let (tx, rx) = mpsc::channel();
    let repaint = Arc::new(OnceLock::new());
    (CommandSender { tx, repaint: repaint.clone() }, CommandReceiver { rx, repaint })
}

impl CommandSender {
    pub fn send(&self, c: Command) {
        // the app is gone (closing): nobody is left to apply it
        if self.tx.send(c).is_ok() {
            if let Some(ctx) = self.repaint.get() {
                ctx.request_repaint();
            }
        }
    }
}

impl CommandReceiver {
    /// Everything sent since the last call; `ctx` is the one a send wakes from now on.
    pub fn drain(&self, ctx: &egui::Context) -> impl Iterator<Item = Command> + '_ {
        let _ = self.repaint.set(ctx.clone());
        self.rx.try_iter()
    }
}

/// What is selected; every pane reads it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Selection {
    pub span: Option<SpanRef>,
    /// Kernel name highlighted from the kernel table (trace, name).
    pub kernel: Option<(TraceId, String)>,
    /// Time range of the last area selection (absolute ns).
    pub range: Option<(i64, i64)>,
    /// The lanes the last area selection took (its shade covers these only).
    pub range_lanes: Vec<(TraceId, u32)>,
    /// A step picked in the Steps tab: (trace, index in its step order).
    pub step: Option<(TraceId, usize)>,
}

/// Name ids to emphasise on the timeline, per trace (search matches or a selected kernel).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Highlight {
    /// Per trace: mask over the store's string ids; absent = that trace has no match.
    pub names: HashMap<TraceId, Vec<bool>>,
    pub active: bool,
}

impl Highlight {
    /// The mask of one trace (look it up once per lane, not per span).
    pub fn mask(&self, trace: TraceId) -> &[bool] {
        self.names.get(&trace).map(|m| m.as_slice()).unwrap_or(&[])
    }

    pub fn matches(&self, trace: TraceId, name: u32) -> bool {
        self.mask(trace).get(name as usize).copied().unwrap_or(false)
    }
}
