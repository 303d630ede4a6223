//! An Nsight Compute export or report (`strobe.NcuReport`): the roofline analysis of
//! `strobe report`, made once.

use crate::error::json;
use pyo3::prelude::*;
use std::path::PathBuf;
use std::sync::OnceLock;
use strobe_analysis::roofline::RooflineReport;
use strobe_model::ncu::NcuReport;

#[pyclass(frozen, module = "strobe._strobe")]
pub struct NcuHandle {
    file: PathBuf,
    ncu: NcuReport,
    analysis: OnceLock<RooflineReport>,
}

impl NcuHandle {
    pub fn new(file: PathBuf, ncu: NcuReport) -> NcuHandle {
        NcuHandle { file, ncu, analysis: OnceLock::new() }
    }

    fn analysis(&self) -> &RooflineReport {
        self.analysis.get_or_init(|| strobe_analysis::roofline::analyse(&self.ncu))
    }
}

#[pymethods]
impl NcuHandle {
    fn files(&self) -> Vec<String> {
        vec![self.file.display().to_string()]
    }

    /// `strobe report --json` of the export, as JSON text.
    fn report(&self, py: Python<'_>) -> PyResult<String> {
        py.detach(|| json(self.analysis()))
    }

    /// One row per launch: the report's `kernels`.
    fn kernels(&self, py: Python<'_>) -> PyResult<String> {
        py.detach(|| json(&self.analysis().kernels))
    }

    /// One row per kernel name: the report's `by_name`.
    fn by_name(&self, py: Python<'_>) -> PyResult<String> {
        py.detach(|| json(&self.analysis().by_name))
    }
}
