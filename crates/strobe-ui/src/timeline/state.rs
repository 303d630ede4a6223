//! The view state several panes and the session read: the time window, the vertical scroll,
//! the label column, marks and notes, folded groups, pinned and hidden lanes. The app owns it
//! and hands it to every pane through `ViewCtx`; panes change it only by commands
//! (`Command::SetView`, `AddMark`, `ToggleFold`, …), which the app applies once per frame.

use super::layout::{GroupKey, Groups};
use super::marks::Marks;
use super::{View, LABEL_W};
use crate::workspace::{TraceId, Workspace};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;

/// Sessions save the serialized fields as they are; folds and pins name this run's trace ids
/// and lane indices, so a session saves those by file and lane name instead (`session::Fold`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TimelineState {
    /// The visible window of the shared axis.
    pub view: View,
    /// How far the rows are scrolled (px).
    pub scroll_y: f32,
    /// The label column's width (drag its edge).
    pub label_w: f32,
    /// Marks and named notes (shared axis).
    pub marks: Marks,
    /// Groups toggled from how they start (`GroupKey::starts_folded`).
    #[serde(skip)]
    pub collapsed: HashSet<GroupKey>,
    /// Lanes pinned to the top (they stay while the rest scrolls).
    #[serde(skip)]
    pub pinned: Vec<(TraceId, u32)>,
    /// Lanes hidden from the timeline (a lane's menu hides one; the track finder and the
    /// "Hidden lanes" menu show them again).
    #[serde(skip)]
    pub hidden: Vec<(TraceId, u32)>,
    /// CPU process groups start folded (ranks side by side: their GPUs one above the other).
    #[serde(skip)]
    pub fold_cpu_groups: bool,
    /// The overlap and idle band rows (View menu, a setting).
    #[serde(skip)]
    pub show_bands: bool,
    /// Fit the whole workspace at the next frame (after a load).
    #[serde(skip)]
    pub fit_pending: bool,
    /// A note just added with Shift+M: the Notes tab focuses its name once.
    #[serde(skip)]
    pub note_to_name: Option<usize>,
    /// The keyboard-shortcut sheet is shown (`?`).
    #[serde(skip)]
    pub show_shortcuts: bool,
    /// The steps' critical paths are outlined (View menu, C).
    #[serde(skip)]
    pub show_critical_path: bool,
}

impl Default for TimelineState {
    fn default() -> Self {
        TimelineState {
            view: View::default(),
            scroll_y: 0.0,
            label_w: LABEL_W,
            marks: Marks::default(),
            collapsed: HashSet::new(),
            pinned: Vec::new(),
            hidden: Vec::new(),
            fold_cpu_groups: false,
            show_bands: true,
            fit_pending: true,
            note_to_name: None,
            show_shortcuts: false,
            show_critical_path: false,
        }
    }
}

impl TimelineState {
    /// Whether a group is folded: groups that start folded are open when toggled, the others
    /// folded.
    pub fn is_collapsed(&self, key: GroupKey) -> bool {
        self.collapsed.contains(&key) != key.starts_folded(self.fold_cpu_groups)
    }

    /// Folds an open group, opens a folded one.
    pub fn toggle(&mut self, key: GroupKey) {
        if !self.collapsed.remove(&key) {
            self.collapsed.insert(key);
        }
    }

    /// Unfolds every group lane `lane` of trace `id` is in, and shows the lane if it was
    /// hidden (what a jump to it asks to see).
    pub fn unfold_to(&mut self, ws: &Workspace, id: TraceId, lane: u32) {
        self.set_hidden(id, lane, false);
        let Some(t) = ws.trace(id) else { return };
        for key in Groups::containing(t, lane) {
            if self.is_collapsed(key) {
                self.toggle(key);
            }
        }
    }

    /// Pins a lane to the top, or unpins it.
    pub fn toggle_pin(&mut self, id: TraceId, lane: u32) {
        match self.pinned.iter().position(|&p| p == (id, lane)) {
            Some(i) => {
                self.pinned.remove(i);
            }
            None => {
                // a lane pinned is a lane wanted in view
                self.hidden.retain(|&h| h != (id, lane));
                self.pinned.push((id, lane));
            }
        }
    }

    /// Hides a lane (it leaves the pinned rows too) or shows it again.
    pub fn set_hidden(&mut self, id: TraceId, lane: u32, hidden: bool) {
        self.hidden.retain(|&h| h != (id, lane));
        if hidden {
            self.pinned.retain(|&p| p != (id, lane));
            self.hidden.push((id, lane));
        }
    }

    /// The first fit after a load: the steps when there are (not the CUDA-init prologue),
    /// else everything; `width` is the plot's (px).
    pub fn fit_opening(&mut self, ws: &Workspace, width: f32) {
        match (ws.steps_extent(), ws.extent()) {
            (Some((a, b)), Some((origin, _))) => {
                self.view.origin = origin;
                let pad = (b - a) / 50;
                self.view.fit(a - pad, b + pad, width);
            }
            _ => self.fit_all(ws, width),
        }
    }

    pub fn fit_all(&mut self, ws: &Workspace, width: f32) {
        if let Some((a, b)) = ws.extent() {
            self.view.origin = a;
            let pad = (b - a) / 50;
            self.view.fit(a - pad, b + pad, width);
        }
    }

    /// What refers to the open documents goes when they close; the window and the pins stay.
    pub fn forget_documents(&mut self) {
        self.collapsed.clear();
        self.hidden.clear();
        self.marks.clear();
    }
}
