//! Memory pane: a `torch.cuda.memory._dump_snapshot` pickle, shown as a summary
//! of the analysis figures with the OOM verdicts (each a link to its moment), the
//! active-memory timeline (every allocation a band, reserved a line), and the allocator
//! history: a scrubber over the trace entries (arrow keys step) with the segment map as it was
//! at that entry. Figures come from `strobe_analysis::memory`; this module only draws them.

pub mod bench;
mod history_bar;
mod pool_style;
mod segment_map;
pub mod stack;
mod summary;
mod timeline;

pub use history_bar::HistoryBar;
pub use segment_map::SegmentMapView;
pub use summary::SummaryView;
pub use timeline::{band_color as timeline_band_color, rasterize, ActiveMemoryView, Raster, RasterKey, TimelineAction};

use crate::documents::MemoryDoc;
use std::sync::Arc;
use strobe_analysis::memory::{AllocationTimeline, AllocatorHistory, RegionView, StatsReport};
use strobe_model::memory::MemorySnapshot;

/// One device's timeline, allocator history and the segment map's current picture.
pub struct DeviceState {
    pub device: i64,
    /// The document's timeline of this device (shared, not a copy).
    pub timeline: Arc<AllocationTimeline>,
    pub active: ActiveMemoryView,
    pub history: AllocatorHistory,
    /// The history's state as regions (rebuilt when the position moves).
    pub regions: Vec<RegionView>,
}

impl DeviceState {
    fn new(doc: &MemoryDoc, i: usize) -> Option<DeviceState> {
        let device = doc.report.devices.get(i)?.device;
        let timeline = doc.timeline(i)?;
        // the loader made the first device's history; the others are replayed when shown
        let pre = if i == 0 { doc.first_history.lock().ok().and_then(|mut g| g.take()) } else { None };
        let (history, regions) = pre.unwrap_or_else(|| {
            let h = AllocatorHistory::new(&doc.snapshot, device);
            let r = h.view();
            (h, r)
        });
        Some(DeviceState { device, active: ActiveMemoryView::new(&timeline), regions, timeline, history })
    }

    /// Moves the allocator history to position `k` and follows it in the timeline.
    pub fn seek(&mut self, s: &MemorySnapshot, k: usize, center: bool) {
        self.history.seek(s, k);
        self.regions = self.history.view();
        if center {
            self.active.show_position(&self.timeline, self.history.position());
        }
    }
}

/// The memory pane's view state; the snapshot and its analysis are the workspace's
/// `MemoryDoc`, handed to `ui` each frame.
pub struct MemoryPane {
    /// Device shown (index into the report's devices).
    pub device: usize,
    pub summary: SummaryView,
    pub segments: SegmentMapView,
    pub history_bar: HistoryBar,
    /// Per device of the report, built the first time it is shown.
    pub states: Vec<Option<DeviceState>>,
}

impl MemoryPane {
    pub fn new(doc: &MemoryDoc) -> MemoryPane {
        MemoryPane {
            device: 0,
            summary: SummaryView::default(),
            segments: SegmentMapView::default(),
            history_bar: HistoryBar::default(),
            states: doc.report.devices.iter().map(|_| None).collect(),
        }
    }

    /// The shown device's state, built on first use.
    pub fn state(&mut self, doc: &MemoryDoc) -> Option<&mut DeviceState> {
        let slot = self.states.get_mut(self.device)?;
        if slot.is_none() {
            *slot = DeviceState::new(doc, self.device);
        }
        slot.as_mut()
    }

    /// The pane for the workspace's snapshot, with its `torch.cuda.memory_stats()` dump when
    /// one is open beside it.
    pub fn ui(&mut self, ui: &mut egui::Ui, cx: &mut crate::view_ctx::ViewCtx) {
        match &cx.ws.memory {
            Some(doc) => self.snapshot_ui(ui, doc, cx.ws.memory_stats.as_ref()),
            None => {
                ui.weak("No memory snapshot is open.");
            }
        }
    }

    pub fn snapshot_ui(&mut self, ui: &mut egui::Ui, doc: &MemoryDoc, stats: Option<&StatsReport>) {
        let name = doc.path.file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        ui.horizontal(|ui| {
            ui.strong(format!("Memory snapshot: {name}"));
            for (i, d) in doc.report.devices.iter().enumerate() {
                ui.selectable_value(&mut self.device, i, format!("GPU {}", d.device));
            }
        });
        let Some(dev) = doc.report.devices.get(self.device).cloned() else {
            ui.weak("This snapshot has no segments and no trace entries.");
            return;
        };
        ui.separator();
        let peak = self.state(doc).map(|st| st.timeline.peak_in(0, st.timeline.len + 1));
        let mut goto: Option<usize> = None;
        egui::Panel::left("strobe_memory_summary").resizable(true).default_size(380.0).show(ui, |ui| {
            egui::ScrollArea::vertical().id_salt("mem_summary_scroll").show(ui, |ui| {
                goto = self.summary.ui(ui, &dev, &doc.report.notes, peak);
                if let Some(st) = stats {
                    summary::stats_ui(ui, st);
                }
            });
        });
        let snapshot = &doc.snapshot;
        let Some(st) = self.states.get_mut(self.device).and_then(Option::as_mut) else { return };
        if let Some(k) = goto {
            st.seek(snapshot, k, true);
        }
        let ooms: Vec<usize> = dev.ooms.iter().map(|o| o.entry).collect();
        egui::CentralPanel::default().show(ui, |ui| {
            let h = (ui.available_height() * 0.42).clamp(160.0, 420.0);
            let cursor = st.history.position();
            let mut act = st.active.ui(ui, snapshot, &st.timeline, cursor, &ooms, h);
            act = st.active.selected_ui(ui, snapshot, &st.timeline).or(act);
            ui.separator();
            if let Some(k) = self.history_bar.ui(ui, snapshot, &st.history) {
                st.seek(snapshot, k, false);
                st.active.show_position_if_hidden(&st.timeline, k);
            }
            if let Some(TimelineAction::Seek(k)) = act {
                st.seek(snapshot, k, false);
            }
            ui.separator();
            let highlight = self.history_bar.entry_block(snapshot, &st.history);
            self.segments.ui(ui, snapshot, &st.regions, highlight);
        });
    }
}
