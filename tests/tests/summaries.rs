//! Parquet summaries: the report merged from per-rank summaries gives the same JSON
//! sections as `strobe report` on the traces themselves (the reference is the trace path, whose
//! figures tests/tests/ranks.rs checks against ranks_expected.py), on the real 2-rank DDP and
//! HTA pairs and an 8-rank set made of copies; summaries stay small; bad summaries are errors
//! that name the file.

mod common;
use common::*;
use serde_json::Value;
use strobe_analysis::ranks::align::Alignment;
use strobe_analysis::ranks::report::{multi_rank_report_with, RankOptions};
use strobe_store::Store;

/// The report's JSON without what a summary does not carry (docs/cluster.md): each rank's
/// single-trace report, the queue lengths and the copy bandwidth series.
fn comparable(r: &impl serde::Serialize) -> Value {
    let mut v = serde_json::to_value(r).unwrap();
    let o = v.as_object_mut().unwrap();
    o.remove("queue_length");
    o.remove("memcpy_bandwidth");
    for e in o["ranks"].as_array_mut().unwrap() {
        e.as_object_mut().unwrap().remove("report");
    }
    v
}

fn same_as_traces(names: &[&str], stores: &[Store], how: Alignment) -> tempfile::TempDir {
    let traces: Vec<(&str, &Store)> = names.iter().copied().zip(stores).collect();
    let opts = RankOptions::default();
    let raw = comparable(&multi_rank_report_with(&traces, how, 20, &opts));
    let dir = tempfile::tempdir().unwrap();
    let written = strobe_cluster::summarize(&traces, &opts, dir.path()).unwrap();
    assert_eq!(written.len(), 6 * names.len());
    let merged = comparable(&strobe_cluster::merge_dir(dir.path(), how, &opts).unwrap());
    let (a, b) = (raw.as_object().unwrap(), merged.as_object().unwrap());
    assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
    for (k, v) in a {
        assert_eq!(v, &b[k], "section {k} differs ({how:?})");
    }
    // the sections are not vacuous
    assert_eq!(a["ranks"].as_array().unwrap().len(), names.len());
    assert!(!a["collectives"].as_array().unwrap().is_empty());
    assert!(!a["steps"].as_array().unwrap().is_empty());
    assert!(!a["step_breakdown"].as_array().unwrap().is_empty());
    dir
}

/// Per rank, the six tables together.
fn sizes(dir: &std::path::Path) -> Vec<u64> {
    let mut by: std::collections::BTreeMap<String, u64> = Default::default();
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let name = e.file_name().to_string_lossy().to_string();
        let prefix = name.split('.').next().unwrap().to_string();
        *by.entry(prefix).or_default() += e.metadata().unwrap().len();
    }
    by.into_values().collect()
}

#[test]
fn ddp_pair_summaries_merge_to_the_trace_report() {
    let names = ["ddp_rank0.json.gz", "ddp_rank1.json.gz"];
    let stores: Vec<Store> = names.iter().map(|f| load(f)).collect();
    for how in [Alignment::Recorded, Alignment::StepStart, Alignment::CollectiveEnd] {
        let dir = same_as_traces(&names, &stores, how);
        for s in sizes(dir.path()) {
            assert!(s < 300 * 1024, "a summary of {s} bytes");
        }
    }
}

#[test]
fn hta_sampled_pair_summaries_merge_to_the_trace_report() {
    let names = ["hta_sampled_rank0.json.gz", "hta_sampled_rank1.json.gz"];
    let stores: Vec<Store> = names.iter().map(|f| load(f)).collect();
    let dir = same_as_traces(&names, &stores, Alignment::CollectiveEnd);
    for s in sizes(dir.path()) {
        assert!(s < 300 * 1024, "a summary of {s} bytes");
    }
}

/// Eight ranks: the DDP pair copied four times.
#[test]
fn eight_copied_ranks_merge_to_the_trace_report() {
    let src = ["ddp_rank0.json.gz", "ddp_rank1.json.gz"];
    let stores: Vec<Store> = (0..8).map(|i| load(src[i % 2])).collect();
    // metadata gives duplicate ranks (0, 1, 0, 1 …): identity falls back to the order given
    let names: Vec<String> = (0..8).map(|i| format!("copy/ddp_copy{i}.json.gz")).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    same_as_traces(&names, &stores, Alignment::CollectiveEnd);
}

#[test]
fn a_bad_summary_is_an_error_naming_its_file() {
    let names = ["ddp_rank0.json.gz", "ddp_rank1.json.gz"];
    let stores: Vec<Store> = names.iter().map(|f| load(f)).collect();
    let traces: Vec<(&str, &Store)> = names.iter().copied().zip(&stores).collect();
    let dir = tempfile::tempdir().unwrap();
    let written = strobe_cluster::summarize(&traces, &RankOptions::default(), dir.path()).unwrap();
    let victim = written.iter().find(|p| p.to_string_lossy().ends_with(".collectives.parquet")).unwrap();
    let bytes = std::fs::read(victim).unwrap();
    std::fs::write(victim, &bytes[..bytes.len() / 2]).unwrap();
    let e = strobe_cluster::merge_dir(dir.path(), Alignment::CollectiveEnd, &RankOptions::default()).unwrap_err();
    assert!(format!("{e:#}").contains(&victim.display().to_string()), "{e:#}");
    let empty = tempfile::tempdir().unwrap();
    assert!(strobe_cluster::merge_dir(empty.path(), Alignment::CollectiveEnd, &RankOptions::default()).is_err());
}
