//! `strobe.open`: what the files are, found as `strobe report` finds it — a folder of
//! Parquet summaries, flight-recorder dumps, several traces (ranks), an Nsight Systems export
//! of several GPU processes (ranks), else the one file's own kind — through the same store
//! cache.

use crate::error::to_py;
use crate::memory::MemoryHandle;
use crate::ncu::NcuHandle;
use crate::ranks::{RankTrace, RanksHandle};
use crate::report_only::ReportHandle;
use crate::trace::TraceHandle;
use pyo3::prelude::*;
use std::path::{Path, PathBuf};
use strobe_analysis::figures::TraceFigures;
use strobe_analysis::steps::StepRule;
use strobe_import::{LoadOptions, Source};

/// What the files hold, before it becomes a Python object (built with the GIL released).
// one value per `open`, moved once into its Python object: its size does not matter
#[allow(clippy::large_enum_variant)]
enum Opened {
    Trace(TraceHandle),
    Ranks(RanksHandle),
    Memory(MemoryHandle),
    Ncu(NcuHandle),
    Report(ReportHandle),
}

/// Stores built now are written into the cache at once, so the next `open` of the same file
/// only maps it.
pub fn load_options(cache_dir: Option<&Path>) -> LoadOptions {
    LoadOptions {
        cache_dir: cache_dir.map(Path::to_path_buf),
        no_cache: false,
        progress: None,
        defer_write: false,
        write_behind: false,
    }
}

pub fn step_rule(steps: Option<&str>) -> PyResult<StepRule> {
    match steps {
        Some(p) => StepRule::from_pattern(p).map_err(|e| to_py(anyhow::Error::msg(e))),
        None => Ok(StepRule::default()),
    }
}

#[pyfunction]
#[pyo3(signature = (paths, cache_dir=None, steps=None))]
pub fn open(
    py: Python<'_>,
    paths: Vec<PathBuf>,
    cache_dir: Option<PathBuf>,
    steps: Option<String>,
) -> PyResult<Py<PyAny>> {
    if paths.is_empty() {
        return Err(to_py(anyhow::anyhow!("no file given")));
    }
    let rule = step_rule(steps.as_deref())?;
    let opened = py.detach(|| open_paths(&paths, cache_dir.as_deref(), rule))?;
    Ok(match opened {
        Opened::Trace(t) => Py::new(py, t)?.into_any(),
        Opened::Ranks(r) => Py::new(py, r)?.into_any(),
        Opened::Memory(m) => Py::new(py, m)?.into_any(),
        Opened::Ncu(n) => Py::new(py, n)?.into_any(),
        Opened::Report(r) => Py::new(py, r)?.into_any(),
    })
}

fn open_paths(paths: &[PathBuf], cache_dir: Option<&Path>, rule: StepRule) -> PyResult<Opened> {
    if let [dir] = paths {
        if strobe_cluster::summary::is_summary_dir(dir) {
            return Ok(Opened::Ranks(RanksHandle::from_summaries(dir, rule)?));
        }
    }
    if let Some(dumps) = flight_recorder_dumps(paths)? {
        let reports = dumps
            .iter()
            .map(|f| strobe_import::flight_recorder::import(f))
            .collect::<Result<Vec<_>, _>>()
            .map_err(to_py)?;
        let r = strobe_analysis::flight_recorder::analyse(&reports);
        let json = crate::error::json(&serde_json::json!({ "flight_recorder": r }))?;
        return Ok(Opened::Report(ReportHandle::new("flight_recorder", dumps, json)));
    }
    let files = expand_inputs(paths)?;
    let opts = load_options(cache_dir);
    if files.len() > 1 {
        return Ok(Opened::Ranks(RanksHandle::load(files, &opts, rule)?));
    }
    let file = files.into_iter().next().ok_or_else(|| to_py(anyhow::anyhow!("no trace found in the folder given")))?;
    if let Some(procs) = strobe_import::nsys_ranks(&file, &opts) {
        let stores = strobe_import::load_nsys_processes(&file, &procs, &opts)
            .map_err(to_py)?
            .into_iter()
            .collect::<Result<Vec<_>, _>>()
            .map_err(to_py)?;
        let ranks = procs
            .iter()
            .zip(stores)
            .map(|(p, store)| RankTrace { name: format!("{} (pid {})", file.display(), p.pid), rank: p.rank, store })
            .collect();
        return Ok(Opened::Ranks(RanksHandle::of(vec![file], ranks, rule)));
    }
    Ok(match strobe_import::open(&file, &opts).map_err(to_py)? {
        Source::Trace(store) => {
            Opened::Trace(TraceHandle::new(file, *store, TraceFigures::new(rule, Default::default())))
        }
        Source::MemorySnapshot(snap) => Opened::Memory(MemoryHandle::new(file, snap)),
        Source::Ncu(ncu) => Opened::Ncu(NcuHandle::new(file, ncu)),
        Source::MemoryStats(stats) => {
            let json = crate::error::json(&strobe_analysis::memory::stats_report(&stats))?;
            Opened::Report(ReportHandle::new("memory_stats", vec![file], json))
        }
        Source::FlightRecorder(dump) => {
            let r = strobe_analysis::flight_recorder::analyse(&[dump]);
            let json = crate::error::json(&serde_json::json!({ "flight_recorder": r }))?;
            Opened::Report(ReportHandle::new("flight_recorder", vec![file], json))
        }
    })
}

/// Files as given, each folder replaced by the traces in it (`strobe report DIR`).
fn expand_inputs(paths: &[PathBuf]) -> PyResult<Vec<PathBuf>> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            out.extend(strobe_import::trace_files_in(p).map_err(|e| to_py(anyhow::Error::msg(e)))?);
        } else {
            out.push(p.clone());
        }
    }
    Ok(out)
}

/// The flight-recorder dumps given, when every path is one or a folder of them.
fn flight_recorder_dumps(paths: &[PathBuf]) -> PyResult<Option<Vec<PathBuf>>> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            let found = strobe_import::flight_recorder::dumps_in(p).map_err(to_py)?;
            if found.is_empty() {
                return Ok(None);
            }
            out.extend(found);
        } else if matches!(strobe_import::detect(p), Ok(Some(strobe_import::Format::FlightRecorder))) {
            out.push(p.clone());
        } else {
            return Ok(None);
        }
    }
    Ok((!out.is_empty()).then_some(out))
}
