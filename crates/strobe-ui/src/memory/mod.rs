//! Memory pane (issue #5): a `torch.cuda.memory._dump_snapshot` pickle, shown as a summary
//! of the analysis figures with the OOM verdicts, and a segment map (every segment an
//! address-ordered bar, its blocks drawn to scale by state, rounding waste hatched darker;
//! hover shows sizes and the allocation's stack, click pins it). Figures come from
//! `strobe_analysis::memory`; this module only draws them.

mod segment_map;
mod summary;

pub use segment_map::SegmentMapView;
pub use summary::SummaryView;

use std::path::{Path, PathBuf};
use strobe_analysis::memory::{analyse, MemoryReport};
use strobe_model::memory::MemorySnapshot;

pub struct MemoryPane {
    pub path: PathBuf,
    pub snapshot: MemorySnapshot,
    pub report: MemoryReport,
    /// Device shown (index into `report.devices`).
    pub device: usize,
    pub summary: SummaryView,
    pub segments: SegmentMapView,
}

impl MemoryPane {
    pub fn open(path: &Path) -> Result<MemoryPane, String> {
        let snapshot = strobe_import::memory_snapshot::import(path).map_err(|e| e.to_string())?;
        Ok(MemoryPane::new(path.to_path_buf(), snapshot))
    }

    pub fn new(path: PathBuf, snapshot: MemorySnapshot) -> MemoryPane {
        let report = analyse(&snapshot);
        let segments = SegmentMapView::new(&snapshot);
        MemoryPane { path, snapshot, report, device: 0, summary: SummaryView::default(), segments }
    }

    pub fn ui(&mut self, ui: &mut egui::Ui) {
        let name = self.path.file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        ui.horizontal(|ui| {
            ui.strong(format!("Memory snapshot: {name}"));
            for (i, d) in self.report.devices.iter().enumerate() {
                ui.selectable_value(&mut self.device, i, format!("GPU {}", d.device));
            }
        });
        let Some(dev) = self.report.devices.get(self.device) else {
            ui.weak("This snapshot has no segments and no trace entries.");
            return;
        };
        let dev = dev.clone();
        ui.separator();
        egui::Panel::left("strobe_memory_summary").resizable(true).default_size(380.0).show(ui, |ui| {
            egui::ScrollArea::vertical().id_salt("mem_summary_scroll").show(ui, |ui| self.summary.ui(ui, &dev));
        });
        egui::CentralPanel::default().show(ui, |ui| self.segments.ui(ui, &self.snapshot, dev.device));
    }
}
