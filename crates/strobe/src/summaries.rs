//! `strobe summarize TRACE... -o DIR` and `strobe report SUMMARY_DIR` (docs/cluster.md).

use std::path::{Path, PathBuf};
use strobe_analysis::ranks::align::Alignment;
use strobe_analysis::ranks::report::RankOptions;
use strobe_analysis::steps::StepRule;
use strobe_store::Store;

/// Loads the traces (in parallel, as `report` does) and writes one summary per trace.
pub fn summarize(files: &[PathBuf], dir: &Path, cache_dir: Option<&Path>, rule: &StepRule) -> anyhow::Result<()> {
    let stores = crate::ranks::load_all(files, cache_dir)?;
    let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    let traces: Vec<(&str, &Store)> = names.iter().map(String::as_str).zip(&stores).collect();
    let opts = RankOptions { steps: rule.clone(), ..Default::default() };
    let written = strobe_cluster::summarize(&traces, &opts, dir)?;
    let bytes: u64 = written.iter().filter_map(|p| std::fs::metadata(p).ok()).map(|m| m.len()).sum();
    eprintln!("{} summaries ({} files, {} kB) in {}", files.len(), written.len(), bytes / 1024, dir.display());
    Ok(())
}

/// The several-rank report of the summaries in `dir`.
pub fn report(dir: &Path, json: bool, how: Alignment, opts: &RankOptions) -> anyhow::Result<()> {
    let r = strobe_cluster::merge_dir(dir, how, opts)?;
    crate::emit(json, &r, strobe_analysis::ranks::report::to_text)
}
