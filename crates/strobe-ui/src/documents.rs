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
    /// The ranks of one file: an Nsight Systems export in which several processes ran GPU
    /// work, a trace per process (as `strobe report` reads it).
    Ranks(Vec<Trace>),
    Memory(Box<MemoryDoc>),
    MemoryStats(Box<StatsReport>),
    Ncu(Box<NcuDoc>),
    /// One rank's flight-recorder dump; the dumps open together are matched across ranks.
    FlightRecorder(Box<strobe_model::flight_recorder::FrDump>),
}

/// A `torch.cuda.memory._dump_snapshot` pickle, its analysis and each device's allocation
/// timeline (the memory pane's active-memory view).
pub struct MemoryDoc {
    pub path: PathBuf,
    /// Shared with the workers that classify its allocations and compare it with another.
    pub snapshot: Arc<MemorySnapshot>,
    pub report: MemoryReport,
    /// Per device of `report.devices`.
    pub timelines: Vec<Arc<AllocationTimeline>>,
    /// The first device's allocator history at its final state and that state's regions,
    /// built on the loader thread so the pane's first frame does not replay the history;
    /// the pane takes it once.
    pub first_history: std::sync::Mutex<Option<(AllocatorHistory, Vec<RegionView>)>>,
}

impl MemoryDoc {
    /// What the loader builds: the analysis, every device's allocation timeline and the first
    /// device's history, the analysis on a second core beside the rest (each is one pass over
    /// the whole trace). `None` when `cancelled` said stop.
    pub fn open(path: PathBuf, snapshot: MemorySnapshot, cancelled: impl Fn() -> bool + Sync) -> Option<MemoryDoc> {
        let devices = snapshot.devices();
        let (report, built) = rayon::join(
            || {
                let _t = strobe_store::timing::Phase::start("memory: analysis");
                strobe_analysis::memory::analyse(&snapshot)
            },
            || timelines_and_history(&snapshot, &devices, &cancelled),
        );
        let (timelines, first_history) = built?;
        Some(MemoryDoc {
            path,
            snapshot: Arc::new(snapshot),
            report,
            timelines,
            first_history: std::sync::Mutex::new(first_history),
        })
    }

    /// The timeline of `report.devices[i]` (built here if `open` did not build it).
    pub fn timeline(&self, i: usize) -> Option<Arc<AllocationTimeline>> {
        let d = self.report.devices.get(i)?.device;
        Some(self.timelines.get(i).cloned().unwrap_or_else(|| Arc::new(AllocationTimeline::build(&self.snapshot, d))))
    }
}

type FirstHistory = Option<(AllocatorHistory, Vec<RegionView>)>;

/// Each device's allocation timeline (in `devices` order, which is `MemoryReport::devices`'s)
/// and the first device's history at its final state; `None` when `cancelled` said stop.
fn timelines_and_history(
    s: &MemorySnapshot,
    devices: &[i64],
    cancelled: &impl Fn() -> bool,
) -> Option<(Vec<Arc<AllocationTimeline>>, FirstHistory)> {
    let mut out = Vec::with_capacity(devices.len());
    for &d in devices {
        if cancelled() {
            return None;
        }
        let _t = strobe_store::timing::Phase::start("memory: allocation timeline");
        out.push(Arc::new(AllocationTimeline::build(s, d)));
    }
    let mut first = None;
    if let Some(&d) = devices.first() {
        if cancelled() {
            return None;
        }
        let t = strobe_store::timing::Phase::start("memory: allocator history");
        let h = AllocatorHistory::new(s, d);
        drop(t);
        let _t = strobe_store::timing::Phase::start("memory: history's regions");
        let regions = h.view();
        first = Some((h, regions));
    }
    Some((out, first))
}

/// An Nsight Compute export analysed for the kernel pane (`strobe_analysis::roofline`).
pub struct NcuDoc {
    pub path: PathBuf,
    pub report: RooflineReport,
}
