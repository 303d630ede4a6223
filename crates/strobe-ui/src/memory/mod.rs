//! Memory pane: a `torch.cuda.memory._dump_snapshot` pickle, shown as a summary
//! of the analysis figures with the OOM verdicts (each a link to its moment), the
//! active-memory timeline (every allocation a band, reserved a line), and the allocator
//! history: a scrubber over the trace entries (arrow keys step) with the segment map as it was
//! at that entry. Figures come from `strobe_analysis::memory`; this module only draws them.

pub mod bench;
pub mod breakdown_view;
pub mod compare;
pub mod flame;
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
use crate::jobs::{Pending, Poll};
use std::sync::Arc;
use strobe_analysis::memory::{
    breakdown_at, AllocationTimeline, AllocatorHistory, Classifier, PeakBreakdown, RegionView, StatsReport,
};
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
    /// What decides each allocation's category, made on a worker the first time it is shown.
    pub classifier: Option<Arc<Classifier>>,
    classifying: Option<Pending<Arc<Classifier>>>,
    /// The breakdown and flame graph last made, and the position they are of.
    pub breakdown: Option<PeakBreakdown>,
    pub flame: Option<flame::Flame>,
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
        Some(DeviceState {
            device,
            active: ActiveMemoryView::new(&timeline),
            regions,
            timeline,
            history,
            classifier: None,
            classifying: None,
            breakdown: None,
            flame: None,
        })
    }

    /// The classifier, once made (starting it on a worker the first time).
    pub fn classifier(&mut self, ctx: &egui::Context, doc: &MemoryDoc, wrapped: bool) -> Option<Arc<Classifier>> {
        if self.classifier.is_none() {
            match &self.classifying {
                // a small trace is classified at once (well under a millisecond), so its first
                // frame already shows the breakdown
                None if self.timeline.len < 200_000 => {
                    self.classifier = Some(Arc::new(Classifier::with_window(&doc.snapshot, self.device, wrapped)));
                }
                None => {
                    let (s, d) = (doc.snapshot.clone(), self.device);
                    self.classifying =
                        Some(Pending::spawn_ui(ctx, move || Arc::new(Classifier::with_window(&s, d, wrapped))));
                }
                Some(j) => match j.poll() {
                    Poll::Ready(c) => {
                        self.classifier = Some(c);
                        self.classifying = None;
                    }
                    Poll::Lost => self.classifying = None,
                    Poll::Running => {}
                },
            }
        }
        self.classifier.clone()
    }

    /// Waits for the classifier (tests, benchmarks).
    pub fn wait_classifier(&mut self, doc: &MemoryDoc, wrapped: bool) {
        if self.classifier.is_none() {
            self.classifier = match self.classifying.take() {
                Some(j) => j.wait(),
                None => Some(Arc::new(Classifier::with_window(&doc.snapshot, self.device, wrapped))),
            };
        }
    }

    /// The breakdown (and, with `flame`, the flame graph) at position `k`, made again only
    /// when `k` moved.
    fn breakdown_at(&mut self, s: &MemorySnapshot, k: usize, with_flame: bool) {
        let Some(c) = self.classifier.clone() else { return };
        if self.breakdown.as_ref().is_none_or(|b| b.position != k) {
            self.breakdown = Some(breakdown_at(s, &self.timeline, &c, k));
            self.flame = None;
        }
        if with_flame && self.flame.as_ref().is_none_or(|f| f.position != k) {
            self.flame = Some(flame::Flame::build(s, &self.timeline, &c, k));
        }
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
    /// What the central area shows.
    pub view: MemoryView,
    /// The breakdown is of the history position (else of the allocated peak).
    pub breakdown_at_cursor: bool,
    pub flame: flame::FlameView,
    pub compare: compare::CompareView,
    /// Category rows drawn in the last frame (tests read it).
    pub category_rows: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum MemoryView {
    /// The active-memory timeline, the history and the segment map.
    #[default]
    Allocations,
    /// The breakdown's source lines and the flame graph.
    Sources,
    /// Against the snapshot open before this one.
    Compare,
}

impl MemoryPane {
    pub fn new(doc: &MemoryDoc) -> MemoryPane {
        MemoryPane {
            device: 0,
            summary: SummaryView::default(),
            segments: SegmentMapView::default(),
            history_bar: HistoryBar::default(),
            states: doc.report.devices.iter().map(|_| None).collect(),
            view: MemoryView::default(),
            breakdown_at_cursor: false,
            flame: flame::FlameView::default(),
            compare: compare::CompareView::default(),
            category_rows: 0,
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
            Some(doc) => self.snapshot_ui_with(ui, doc, cx.ws.memory_stats.as_ref(), cx.ws.memory_before.as_ref()),
            None => {
                ui.weak("No memory snapshot is open.");
            }
        }
    }

    pub fn snapshot_ui(&mut self, ui: &mut egui::Ui, doc: &MemoryDoc, stats: Option<&StatsReport>) {
        self.snapshot_ui_with(ui, doc, stats, None)
    }

    /// The pane, with the snapshot open before this one to compare against.
    pub fn snapshot_ui_with(
        &mut self,
        ui: &mut egui::Ui,
        doc: &MemoryDoc,
        stats: Option<&StatsReport>,
        before: Option<&MemoryDoc>,
    ) {
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
        let wrapped = dev.history_window.is_some();
        // the breakdown's position: the peak, or the history's
        let at_cursor = self.breakdown_at_cursor;
        let with_flame = self.view == MemoryView::Sources;
        if let Some(st) = self.state(doc) {
            if st.timeline.len > 0 {
                st.classifier(ui.ctx(), doc, wrapped);
                let k = if at_cursor { st.history.position() } else { peak.unwrap_or(0) };
                st.breakdown_at(&doc.snapshot, k, with_flame);
            }
        }
        let mut goto: Option<usize> = None;
        let breakdown_ui = |ui: &mut egui::Ui, me: &mut MemoryPane| {
            let Some(st) = me.states.get(me.device).and_then(Option::as_ref) else { return };
            if st.timeline.len == 0 {
                return;
            }
            ui.add_space(6.0);
            ui.horizontal(|ui| {
                ui.strong("What the bytes are");
                ui.selectable_value(&mut me.breakdown_at_cursor, false, "at the peak");
                ui.selectable_value(&mut me.breakdown_at_cursor, true, "at the history position");
            });
            match &st.breakdown {
                Some(b) => {
                    let at = match b.position {
                        0 => "before the first entry".to_string(),
                        k => format!("after entry {}", k - 1),
                    };
                    ui.label(format!(
                        "{} allocated {at}",
                        strobe_analysis::memory::bytes(b.allocated_bytes.max(0) as u64)
                    ));
                    me.category_rows = breakdown_view::categories_ui(ui, b);
                    ui.label(egui::RichText::new(&b.note).weak().small());
                }
                None => crate::jobs::busy_indicator(ui, "classifying the allocations…"),
            }
        };
        egui::Panel::left("strobe_memory_summary").resizable(true).default_size(380.0).show(ui, |ui| {
            egui::ScrollArea::vertical().id_salt("mem_summary_scroll").show(ui, |ui| {
                goto = self.summary.ui(ui, &dev, &doc.report.notes, peak);
                breakdown_ui(ui, self);
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
        let before_name =
            before.map(|b| b.path.file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default());
        if before.is_none() && self.view == MemoryView::Compare {
            self.view = MemoryView::Allocations;
        }
        let view = &mut self.view;
        egui::Panel::top("strobe_memory_views").show(ui, |ui| {
            ui.horizontal(|ui| {
                ui.selectable_value(view, MemoryView::Allocations, "Allocations and segments");
                ui.selectable_value(view, MemoryView::Sources, "By source line and stack");
                if let Some(n) = &before_name {
                    ui.selectable_value(view, MemoryView::Compare, format!("Compare with {n}")).on_hover_text(
                        "the snapshot open before this one (A) against this one (B), as strobe diff A B",
                    );
                }
            });
        });
        if self.view == MemoryView::Compare {
            if let Some(a) = before {
                let device = st.device;
                egui::CentralPanel::default().show(ui, |ui| self.compare.ui(ui, a, doc, device));
            }
            return;
        }
        if self.view == MemoryView::Sources {
            let mut pick = None;
            let flame = &mut self.flame;
            egui::CentralPanel::default().show(ui, |ui| {
                let Some(b) = &st.breakdown else {
                    crate::jobs::busy_indicator(ui, "classifying the allocations…");
                    return;
                };
                egui::ScrollArea::vertical().id_salt("mem_sources_scroll").show(ui, |ui| {
                    ui.strong(format!(
                        "By source line after entry {} ({}), largest first: click a line for its largest allocation",
                        b.position.saturating_sub(1),
                        strobe_analysis::memory::bytes(b.allocated_bytes.max(0) as u64)
                    ));
                    pick = breakdown_view::sources_ui(ui, b, &st.timeline, 25);
                    ui.add_space(8.0);
                    ui.strong("Flame graph by stack (outermost frame on top; click to zoom)");
                    if let Some(f) = &st.flame {
                        flame.ui(ui, f);
                    }
                });
            });
            if let Some(i) = pick {
                // the allocation in the timeline, at the position the breakdown is of
                let k = st.breakdown.as_ref().map_or(0, |b| b.position);
                st.active.selected = Some(i);
                st.seek(snapshot, k, true);
                self.view = MemoryView::Allocations;
            }
            return;
        }
        egui::CentralPanel::default().show(ui, |ui| {
            let h = (ui.available_height() * 0.42).clamp(160.0, 420.0);
            let cursor = st.history.position();
            let mut act = st.active.ui(ui, snapshot, &st.timeline, cursor, &ooms, h);
            act = st.active.selected_ui(ui, snapshot, &st.timeline).or(act);
            if let (Some(i), Some(c)) = (st.active.selected, &st.classifier) {
                let rule = c.rule(&st.timeline.allocs[i]);
                ui.label(
                    egui::RichText::new(format!(
                        "{}: {}",
                        breakdown_view::category_label(rule.category()),
                        rule.text()
                    ))
                    .color(breakdown_view::category_color(rule.category())),
                );
            }
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
