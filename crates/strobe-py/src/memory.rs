//! A CUDA memory snapshot (`strobe.MemorySnapshot`): the memory report of `strobe report`
//! (made once, with each device's peak broken down by category and source line), every
//! allocation of the replay (the Memory tab's active-memory timeline) and the segments the
//! allocator holds at the end.

use crate::error::json;
use pyo3::prelude::*;
use serde::Serialize;
use std::path::PathBuf;
use std::sync::OnceLock;
use strobe_analysis::memory::{frames, AllocationTimeline, MemoryReport};
use strobe_model::memory::{BlockState, MemorySnapshot, StackId};

#[pyclass(frozen, module = "strobe._strobe")]
pub struct MemoryHandle {
    file: PathBuf,
    snap: MemorySnapshot,
    analysis: OnceLock<MemoryReport>,
}

impl MemoryHandle {
    pub fn new(file: PathBuf, snap: MemorySnapshot) -> MemoryHandle {
        MemoryHandle { file, snap, analysis: OnceLock::new() }
    }

    /// What `strobe report` prints for a snapshot, peak breakdowns included.
    fn analysis(&self) -> &MemoryReport {
        self.analysis.get_or_init(|| strobe_analysis::memory::analyse_with_breakdown(&self.snap))
    }

    /// One row per item of each device's peak breakdown (`pick` chooses the list), each
    /// with its device in front: the rows of several devices in one table.
    fn peak_rows<T: Serialize>(
        &self,
        pick: impl Fn(&strobe_analysis::memory::PeakBreakdown) -> &[T],
    ) -> PyResult<String> {
        let rows: Vec<DeviceRow<T>> = self
            .analysis()
            .devices
            .iter()
            .filter_map(|d| Some((d.device, d.peak_breakdown.as_ref()?)))
            .flat_map(|(device, b)| pick(b).iter().map(move |row| DeviceRow { device, row }))
            .collect();
        json(&rows)
    }

    /// The innermost frame that is the program's own (not the allocator's or PyTorch's
    /// internals), as `file:line:function`; the innermost of all where none is.
    fn user_frame(&self, stack: StackId) -> Option<String> {
        let fs: Vec<_> = self.snap.stack(stack).collect();
        let f = fs.get(frames::first_user_frame(&fs).unwrap_or(0))?;
        Some(format!("{}:{}:{}", f.filename, f.line, f.name))
    }
}

#[derive(Serialize)]
struct DeviceRow<'a, T> {
    device: i64,
    #[serde(flatten)]
    row: &'a T,
}

#[derive(Serialize)]
struct AllocationRow {
    device: i64,
    addr: u64,
    size: u64,
    stream: i64,
    /// Index of the `alloc` entry in the device's trace; None: made before the trace began.
    alloc_entry: Option<u32>,
    /// Index of the `free_completed` entry; None: still alive at the end.
    free_entry: Option<u32>,
    alloc_ns: Option<i64>,
    free_ns: Option<i64>,
    frame: Option<String>,
}

#[derive(Serialize)]
struct SegmentRow<'a> {
    device: i64,
    address: u64,
    total_size: u64,
    stream: i64,
    segment_type: &'a str,
    pool_id: (i64, i64),
    is_expandable: bool,
    blocks: usize,
    allocated_bytes: u64,
    active_awaiting_free_bytes: u64,
    inactive_bytes: u64,
    requested_bytes: u64,
    frame: Option<String>,
}

#[pymethods]
impl MemoryHandle {
    fn files(&self) -> Vec<String> {
        vec![self.file.display().to_string()]
    }

    /// `strobe report --json` of the snapshot, as JSON text.
    fn report(&self, py: Python<'_>) -> PyResult<String> {
        py.detach(|| json(self.analysis()))
    }

    /// Each device's peak by category: the report's `devices[].peak_breakdown.categories`.
    fn peak_categories(&self, py: Python<'_>) -> PyResult<String> {
        py.detach(|| self.peak_rows(|b| &b.categories))
    }

    /// Each device's peak by source line: the report's `devices[].peak_breakdown.by_source`.
    fn peak_sources(&self, py: Python<'_>) -> PyResult<String> {
        py.detach(|| self.peak_rows(|b| &b.by_source))
    }

    /// Every allocation of each device's replay, bottom of the stack first.
    fn allocations(&self, py: Python<'_>) -> PyResult<String> {
        py.detach(|| {
            let s = &self.snap;
            let mut rows = Vec::new();
            for device in s.devices() {
                let t = AllocationTimeline::build(s, device);
                let trace = usize::try_from(device).ok().and_then(|d| s.device_traces.get(d));
                let time_ns = |e: Option<u32>| {
                    let entry = trace?.get(e? as usize)?;
                    entry.time_us().map(|us| us.saturating_mul(1000))
                };
                for a in &t.allocs {
                    rows.push(AllocationRow {
                        device,
                        addr: a.addr,
                        size: a.size,
                        stream: a.stream,
                        alloc_entry: a.alloc_entry,
                        free_entry: a.free_entry,
                        alloc_ns: time_ns(a.alloc_entry),
                        free_ns: time_ns(a.free_entry),
                        frame: self.user_frame(a.stack),
                    });
                }
            }
            json(&rows)
        })
    }

    /// The segments the allocator holds at the snapshot, with their blocks' bytes by state.
    fn segments(&self, py: Python<'_>) -> PyResult<String> {
        py.detach(|| {
            let rows: Vec<SegmentRow> = self
                .snap
                .segments
                .iter()
                .map(|g| {
                    let sum = |st: BlockState| g.blocks.iter().filter(|b| b.state == st).map(|b| b.size).sum();
                    SegmentRow {
                        device: g.device,
                        address: g.address,
                        total_size: g.total_size,
                        stream: g.stream,
                        segment_type: &g.segment_type,
                        pool_id: g.pool_id,
                        is_expandable: g.is_expandable,
                        blocks: g.blocks.len(),
                        allocated_bytes: sum(BlockState::ActiveAllocated),
                        active_awaiting_free_bytes: sum(BlockState::ActiveAwaitingFree),
                        inactive_bytes: sum(BlockState::Inactive),
                        requested_bytes: g
                            .blocks
                            .iter()
                            .filter(|b| b.state == BlockState::ActiveAllocated)
                            .map(|b| b.requested())
                            .sum(),
                        frame: self.user_frame(g.stack),
                    }
                })
                .collect();
            json(&rows)
        })
    }
}
