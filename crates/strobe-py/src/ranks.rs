//! Several ranks of one job (`strobe.Ranks`): one store per rank, or a folder of Parquet
//! summaries; the several-rank report (`strobe report A B …`) made on demand and kept per
//! set of options.

use crate::error::{json, to_py};
use pyo3::prelude::*;
use rayon::prelude::*;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use strobe_analysis::ranks::align::Alignment;
use strobe_analysis::ranks::report::RankOptions;
use strobe_analysis::steps::StepRule;
use strobe_store::Store;

/// One rank's trace: its name in the report (the file, or the export and its pid), the rank
/// it claims, its store.
pub struct RankTrace {
    pub name: String,
    pub rank: i64,
    pub store: Store,
}

enum Ranks {
    Traces(Vec<RankTrace>),
    /// A folder of `strobe summarize` summaries: merged, no store.
    Summaries(PathBuf),
}

#[pyclass(frozen, module = "strobe._strobe")]
pub struct RanksHandle {
    files: Vec<PathBuf>,
    ranks: Ranks,
    rule: StepRule,
    /// Reports made, by their options.
    reports: Mutex<HashMap<String, String>>,
}

impl RanksHandle {
    pub fn of(files: Vec<PathBuf>, ranks: Vec<RankTrace>, rule: StepRule) -> RanksHandle {
        RanksHandle { files, ranks: Ranks::Traces(ranks), rule, reports: Mutex::default() }
    }

    pub fn from_summaries(dir: &Path, rule: StepRule) -> PyResult<RanksHandle> {
        Ok(RanksHandle {
            files: vec![dir.to_path_buf()],
            ranks: Ranks::Summaries(dir.to_path_buf()),
            rule,
            reports: Mutex::default(),
        })
    }

    /// Every file on a thread of its own, as `strobe report A B …` loads them; the first
    /// failure is the error, naming its file.
    pub fn load(files: Vec<PathBuf>, opts: &strobe_import::LoadOptions, rule: StepRule) -> PyResult<RanksHandle> {
        let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
        let loaded: Vec<Result<Store, strobe_import::ImportError>> = std::thread::scope(|s| {
            let handles: Vec<_> = files.iter().map(|f| s.spawn(move || strobe_import::load(f, opts))).collect();
            handles
                .into_iter()
                .zip(&files)
                .map(|(h, f)| {
                    h.join().unwrap_or_else(|_| Err(strobe_import::ImportError::bad(f, "loader thread panicked")))
                })
                .collect()
        });
        let mut ranks = Vec::with_capacity(files.len());
        for (i, (store, name)) in loaded.into_iter().zip(names).enumerate() {
            let store = store.map_err(to_py)?;
            let rank = strobe_analysis::ranks::identity::claimed_rank(&store, &name, i);
            ranks.push(RankTrace { name, rank, store });
        }
        Ok(RanksHandle::of(files, ranks, rule))
    }
}

fn alignment(align: &str) -> PyResult<Alignment> {
    match align {
        "recorded" => Ok(Alignment::Recorded),
        "step" => Ok(Alignment::StepStart),
        "collective" => Ok(Alignment::CollectiveEnd),
        other => Err(pyo3::exceptions::PyValueError::new_err(format!(
            "align={other:?}: expected \"collective\", \"step\" or \"recorded\""
        ))),
    }
}

#[pymethods]
impl RanksHandle {
    /// The files (or the summary folder) this document was opened from.
    fn files(&self) -> Vec<String> {
        self.files.iter().map(|f| f.display().to_string()).collect()
    }

    /// Each rank's name in the report and the rank it claims, in the order given; empty for
    /// a folder of summaries.
    fn rank_names(&self) -> Vec<(String, i64)> {
        match &self.ranks {
            Ranks::Traces(t) => t.iter().map(|r| (r.name.clone(), r.rank)).collect(),
            Ranks::Summaries(_) => Vec::new(),
        }
    }

    /// `strobe report --json --top TOP --align ALIGN [--link-gbps G] A B …`, as JSON text.
    #[pyo3(signature = (top=20, align="collective", link_gbps=None))]
    fn report(&self, py: Python<'_>, top: usize, align: &str, link_gbps: Option<f64>) -> PyResult<String> {
        let how = alignment(align)?;
        let key = format!("{top} {align} {link_gbps:?}");
        if let Some(r) = self.reports.lock().map_err(|_| to_py(anyhow::anyhow!("a report panicked")))?.get(&key) {
            return Ok(r.clone());
        }
        let opts = RankOptions { steps: self.rule.clone(), link_gbps, ..Default::default() };
        let out = py.detach(|| match &self.ranks {
            Ranks::Summaries(dir) => json(&strobe_cluster::merge_dir(dir, how, &opts).map_err(to_py)?),
            Ranks::Traces(ranks) => {
                let parts: Vec<_> = ranks
                    .par_iter()
                    .map(|r| strobe_analysis::ranks::report::rank_parts(r.rank, &r.name, &r.store, top, &opts))
                    .collect();
                let traces: Vec<(&str, &Store)> = ranks.iter().map(|r| (r.name.as_str(), &r.store)).collect();
                json(&strobe_analysis::ranks::report::multi_rank_report_from_parts(&traces, parts, how, top, &opts))
            }
        })?;
        if let Ok(mut m) = self.reports.lock() {
            m.insert(key, out.clone());
        }
        Ok(out)
    }
}
