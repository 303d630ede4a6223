//! Thousand-rank jobs (docs/cluster.md): each rank's trace reduced where it lives to a small
//! Parquet summary (`strobe summarize`), the summaries merged centrally into the same
//! several-rank report `strobe report` gives on the traces (`merge_dir`).

mod comm_ops_table;
pub mod summary;
pub mod synthetic;
pub mod table;

use anyhow::Result;
use std::path::{Path, PathBuf};
use strobe_analysis::ranks::align::Alignment;
use strobe_analysis::ranks::identity::RankFrom;
use strobe_analysis::ranks::report::{merge_digests, rank_digests, MultiRankReport, RankOptions};
use strobe_store::Store;

/// Summarizes `traces` (source path as given, store) into `dir`, one summary per trace; returns
/// the files written.
pub fn summarize(traces: &[(&str, &Store)], opts: &RankOptions, dir: &Path) -> Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let mut out = Vec::new();
    for (d, id) in rank_digests(traces, opts) {
        let named =
            matches!(id.from, RankFrom::Metadata | RankFrom::FileName | RankFrom::DeviceOrder | RankFrom::ProcessOrder);
        out.extend(summary::write_summary(dir, &summary::prefix_of(&d, named), &d)?);
    }
    Ok(out)
}

/// The several-rank report of the summaries in `dir`: the ranks views' `MultiRankReport`.
pub fn merge_dir(dir: &Path, how: Alignment, opts: &RankOptions) -> Result<MultiRankReport> {
    Ok(merge_digests(summary::read_summaries(dir)?, how, opts))
}
