//! What an opened file becomes in the workspace: a trace, a memory snapshot, a memory_stats()
//! dump or an Nsight Compute report, each with the analyses its pane shows. Built on the
//! loader thread (`loader::load_document`); panes only read them.

use crate::workspace::Trace;
use std::path::PathBuf;
use std::sync::Arc;
use strobe_analysis::memory::{AllocationTimeline, AllocatorHistory, MemoryReport, RegionView, StatsReport};
use strobe_analysis::roofline::RooflineReport;
use strobe_model::memory::MemorySnapshot;

/// Each arm boxed: the documents are large and moved through a channel once.
pub enum Document {
    Trace(Box<Trace>),
    Memory(Box<MemoryDoc>),
    MemoryStats(Box<StatsReport>),
    Ncu(Box<NcuDoc>),
}

/// A `torch.cuda.memory._dump_snapshot` pickle, its analysis and each device's allocation
/// timeline (the memory pane's active-memory view).
pub struct MemoryDoc {
    pub path: PathBuf,
    pub snapshot: MemorySnapshot,
    pub report: MemoryReport,
    /// Per device of `report.devices` (empty until `build_timelines`).
    pub timelines: Vec<Arc<AllocationTimeline>>,
    /// The first device's allocator history at its final state and that state's regions,
    /// built on the loader thread so the pane's first frame does not replay the history;
    /// the pane takes it once.
    pub first_history: std::sync::Mutex<Option<(AllocatorHistory, Vec<RegionView>)>>,
}

impl MemoryDoc {
    /// The snapshot and its analysis (`strobe_analysis::memory::analyse`).
    pub fn new(path: PathBuf, snapshot: MemorySnapshot) -> MemoryDoc {
        let report = strobe_analysis::memory::analyse(&snapshot);
        MemoryDoc { path, snapshot, report, timelines: Vec::new(), first_history: Default::default() }
    }

    /// Builds every device's allocation timeline; false when `cancelled` said stop between two.
    pub fn build_timelines(&mut self, cancelled: impl Fn() -> bool) -> bool {
        let mut out = Vec::with_capacity(self.report.devices.len());
        for d in &self.report.devices {
            if cancelled() {
                return false;
            }
            out.push(Arc::new(AllocationTimeline::build(&self.snapshot, d.device)));
        }
        self.timelines = out;
        if let Some(d) = self.report.devices.first() {
            if cancelled() {
                return false;
            }
            let h = AllocatorHistory::new(&self.snapshot, d.device);
            let regions = h.view();
            *self.first_history.lock().unwrap_or_else(|e| e.into_inner()) = Some((h, regions));
        }
        true
    }

    /// The timeline of `report.devices[i]` (built here if `build_timelines` was not run).
    pub fn timeline(&self, i: usize) -> Option<Arc<AllocationTimeline>> {
        let d = self.report.devices.get(i)?.device;
        Some(self.timelines.get(i).cloned().unwrap_or_else(|| Arc::new(AllocationTimeline::build(&self.snapshot, d))))
    }
}

/// An Nsight Compute export analysed for the kernel pane (`strobe_analysis::roofline`).
pub struct NcuDoc {
    pub path: PathBuf,
    pub report: RooflineReport,
}
