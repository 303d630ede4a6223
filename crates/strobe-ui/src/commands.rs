//! What panes ask for. Panes never change shared state themselves: they push commands, and
//! the app applies them once per frame, so a click in the kernel table and a click on the
//! timeline take the same path.

use crate::workspace::{SpanRef, TraceId};
use std::collections::HashMap;
use std::path::PathBuf;

#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    /// Select a span (details, flows, stack).
    SelectSpan(SpanRef),
    /// Select a span and bring it into view (zoom so it reads, scroll to its lane).
    RevealSpan(SpanRef),
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
    FocusSearch,
    SetIdleThreshold(i64),
    /// Steps are the ranges whose whole name matches this regex (empty: the built-in rules:
    /// ProfilerStep#N, iteration-like NVTX names, else the inferred period).
    SetStepPattern(String),
    /// The pipeline the open traces form (None: none), found on a worker thread.
    SetPipeline(Option<std::sync::Arc<crate::pipeline::PipelineView>>),
}

/// What is selected; every pane reads it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Selection {
    pub span: Option<SpanRef>,
    /// Kernel name highlighted from the kernel table (trace, name).
    pub kernel: Option<(TraceId, String)>,
    /// Time range of the last area selection (absolute ns).
    pub range: Option<(i64, i64)>,
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
