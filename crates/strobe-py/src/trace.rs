//! One trace (`strobe.Trace`): its store and its figures, each computed once and kept, so
//! `kernels()` after `report()` (or the other way round) costs nothing more.

use crate::error::json;
use pyo3::prelude::*;
use std::path::PathBuf;
use strobe_analysis::figures::TraceFigures;
use strobe_store::Store;

#[pyclass(frozen, module = "strobe._strobe")]
pub struct TraceHandle {
    file: PathBuf,
    pub store: Store,
    figs: TraceFigures,
}

impl TraceHandle {
    pub fn new(file: PathBuf, store: Store, figs: TraceFigures) -> TraceHandle {
        TraceHandle { file, store, figs }
    }
}

/// A comm kernel as `collectives()` lists it.
#[derive(serde::Serialize)]
struct CollectiveRow<'a> {
    name: &'a str,
    device: Option<i64>,
    stream: Option<i64>,
    start_ns: i64,
    end_ns: i64,
    dur_ns: i64,
    launch_ns: i64,
}

#[pymethods]
impl TraceHandle {
    /// The files this document was opened from.
    fn files(&self) -> Vec<String> {
        vec![self.file.display().to_string()]
    }

    /// `strobe report --json --top TOP`, as JSON text.
    #[pyo3(signature = (top=20))]
    fn report(&self, py: Python<'_>, top: usize) -> PyResult<String> {
        py.detach(|| json(&strobe_analysis::report::report_from(&self.store, &self.figs, top)))
    }

    /// Every kernel name: the report's `top_kernels`, not cut to the top ones.
    fn kernels(&self, py: Python<'_>) -> PyResult<String> {
        py.detach(|| json(self.figs.kernels(&self.store)))
    }

    /// Per-op efficiency: the report's `efficiency.ops`.
    fn ops(&self, py: Python<'_>) -> PyResult<String> {
        py.detach(|| json(&self.figs.efficiency(&self.store).ops))
    }

    /// Per-kernel efficiency: the report's `efficiency.kernels`.
    fn kernel_efficiency(&self, py: Python<'_>) -> PyResult<String> {
        py.detach(|| json(&self.figs.efficiency(&self.store).kernels))
    }

    /// torch.profiler's `key_averages()` per op name: the report's `ops`.
    fn op_table(&self, py: Python<'_>) -> PyResult<String> {
        py.detach(|| json(&self.figs.op_table(&self.store).by_name))
    }

    /// The report's `steps`.
    fn steps(&self, py: Python<'_>) -> PyResult<String> {
        py.detach(|| json(&strobe_analysis::report::report_steps(&self.store, &self.figs)))
    }

    /// Every idle gap at least `threshold_ns` long, longest first (the report's
    /// `largest_gaps`, not cut to the top ones).
    #[pyo3(signature = (threshold_ns=strobe_analysis::idle::DEFAULT_THRESHOLD_NS))]
    fn idle_gaps(&self, py: Python<'_>, threshold_ns: i64) -> PyResult<String> {
        py.detach(|| {
            let unions = &self.figs.activity(&self.store).unions;
            json(&strobe_analysis::gaps::largest_gaps(&self.store, unions, threshold_ns, usize::MAX))
        })
    }

    /// The report's `idle_breakdown`.
    fn idle_breakdown(&self, py: Python<'_>) -> PyResult<String> {
        py.detach(|| json(&strobe_analysis::report::idle_splits(&self.store, &self.figs)))
    }

    /// The report's `step_breakdown`.
    fn step_breakdown(&self, py: Python<'_>) -> PyResult<String> {
        py.detach(|| json(self.figs.step_breakdown(&self.store)))
    }

    /// Every NCCL/RCCL kernel on the GPU streams, by start.
    fn collectives(&self, py: Python<'_>) -> PyResult<String> {
        py.detach(|| {
            let store = &self.store;
            let comm = strobe_analysis::ranks::collectives::comm_kernels(store);
            let rows: Vec<CollectiveRow> = comm
                .iter()
                .map(|c| {
                    let kind = store.lanes.get(store.span_meta(c.span).lane as usize).map(|l| &l.kind);
                    let (device, stream) = match kind {
                        Some(strobe_model::LaneKind::GpuStream { device, stream }) => (Some(*device), Some(*stream)),
                        _ => (None, None),
                    };
                    CollectiveRow {
                        name: &c.name,
                        device,
                        stream,
                        start_ns: c.start,
                        end_ns: c.end,
                        dur_ns: c.end - c.start,
                        launch_ns: c.launch_ns,
                    }
                })
                .collect();
            json(&rows)
        })
    }

    /// The lanes as `strobe export --what spans` names them (copy-engine lanes, a second
    /// index over the copies, left out).
    fn lanes(&self, py: Python<'_>) -> PyResult<String> {
        py.detach(|| json(&crate::spans::lane_rows(&self.store)))
    }

    /// Spans of the lanes `lanes` (indices into `lanes()`; None: all) overlapping
    /// [`start_ns`, `end_ns`), as packed columns (`spans::Columns`).
    #[pyo3(signature = (lanes=None, start_ns=None, end_ns=None))]
    fn spans<'py>(
        &self,
        py: Python<'py>,
        lanes: Option<Vec<usize>>,
        start_ns: Option<i64>,
        end_ns: Option<i64>,
    ) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
        let cols = py.detach(|| crate::spans::collect(&self.store, lanes.as_deref(), start_ns, end_ns))?;
        cols.into_py_dict(py)
    }
}
