//! Files whose only table is their report: `torch.cuda.memory_stats()` dumps and
//! flight-recorder dumps (`strobe.Document`).

use pyo3::prelude::*;
use std::path::PathBuf;

#[pyclass(frozen, module = "strobe._strobe")]
pub struct ReportHandle {
    kind: &'static str,
    files: Vec<PathBuf>,
    json: String,
}

impl ReportHandle {
    pub fn new(kind: &'static str, files: Vec<PathBuf>, json: String) -> ReportHandle {
        ReportHandle { kind, files, json }
    }
}

#[pymethods]
impl ReportHandle {
    /// `memory_stats` or `flight_recorder`.
    #[getter]
    fn kind(&self) -> &'static str {
        self.kind
    }

    fn files(&self) -> Vec<String> {
        self.files.iter().map(|f| f.display().to_string()).collect()
    }

    /// `strobe report --json`, as JSON text.
    fn report(&self) -> String {
        self.json.clone()
    }
}
