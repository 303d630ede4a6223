//! `strobe bench generate --rank R --world-size N` (what `strobe bench ranks` writes its rank
//! files with): the scaled file says its rank in `distributedInfo`, and re-imports as that rank
//! from metadata, not from its name.

use std::path::PathBuf;
use std::process::Command;
use strobe_analysis::ranks::identity::{identify_ranks, RankFrom};

fn sample(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../sample-traces").join(name)
}

fn generate(out: &std::path::Path, extra: &[&str]) {
    generate_from("ddp_rank1.json.gz", "1", out, extra)
}

/// `strobe bench generate` of about `size_mb` from the sample `source`.
fn generate_from(source: &str, size_mb: &str, out: &std::path::Path, extra: &[&str]) {
    let st = Command::new(env!("CARGO_BIN_EXE_strobe"))
        .args(["bench", "generate", "--size-mb", size_mb, "--from"])
        .arg(sample(source))
        .arg("-o")
        .arg(out)
        .args(extra)
        .output()
        .unwrap();
    assert!(st.status.success(), "{}", String::from_utf8_lossy(&st.stderr));
}

fn load(path: &std::path::Path, cache: &std::path::Path) -> strobe_store::Store {
    let opts = strobe_import::LoadOptions::cached_in(cache.to_path_buf());
    strobe_import::load(path, &opts).unwrap()
}

#[test]
fn generated_rank_file_carries_its_rank() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    // no "rank" in the names: identity must come from the metadata
    let (set, plain) = (dir.path().join("scaled_a.json"), dir.path().join("scaled_b.json"));
    generate(&set, &["--rank", "37", "--world-size", "64"]);
    generate(&plain, &[]);

    let s = load(&set, &cache);
    let d = s.meta.distributed.as_ref().expect("distributedInfo");
    assert_eq!((d.rank, d.world_size), (Some(37), Some(64)));
    assert_eq!(d.backend.as_deref(), Some("nccl"));
    assert_eq!(d.extra["pg_config"][0]["pg_size"], 64);
    assert_eq!(d.extra["pg_config"][0]["ranks"].as_array().unwrap().len(), 64);
    assert_eq!(d.extra["nccl_version"], "2.28.9", "the rest of distributedInfo is kept");
    let ids = identify_ranks(&[&s], &[set.to_str().unwrap()]);
    assert_eq!((ids[0].rank, ids[0].from), (37, RankFrom::Metadata));

    // without --rank the source's distributedInfo stays as it was, and the events are the same
    let p = load(&plain, &cache);
    let dp = p.meta.distributed.as_ref().expect("distributedInfo");
    assert_eq!((dp.rank, dp.world_size), (Some(1), Some(2)));
    assert_eq!(p.span_count(), s.span_count());
    assert_eq!(p.meta.load.events, s.meta.load.events);
}

#[test]
fn renumbered_copies_have_distinct_steps() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("two_copies.json");
    // the source (8.5 MB, ProfilerStep#2..#4) fits twice in 18 MiB
    let st = Command::new(env!("CARGO_BIN_EXE_strobe"))
        .args(["bench", "generate", "--size-mb", "18", "--renumber-steps", "--from"])
        .arg(sample("ddp_rank0.json.gz"))
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert!(st.status.success(), "{}", String::from_utf8_lossy(&st.stderr));
    let s = load(&out, &dir.path().join("cache"));
    let r = strobe_analysis::report::report(&s, 1);
    let names: Vec<&str> = r.steps.iter().map(|x| x.name.as_str()).collect();
    assert_eq!(names, (2..=7).map(|n| format!("ProfilerStep#{n}")).collect::<Vec<_>>());
}

/// The args texts of the `X` events of a generated file, counted by text.
fn args_texts(path: &std::path::Path) -> std::collections::HashMap<String, usize> {
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let mut n = std::collections::HashMap::new();
    for e in v["traceEvents"].as_array().unwrap() {
        if let (Some("X"), Some(a)) = (e["ph"].as_str(), e.get("args")) {
            *n.entry(a.to_string()).or_insert(0) += 1;
        }
    }
    n
}

#[test]
fn distinct_args_copies_repeat_no_args_text() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    // the source (8.5 MB) fits twice in 18 MiB
    let run = |out: &std::path::Path, extra: &[&str]| generate_from("ddp_rank0.json.gz", "18", out, extra);
    let (plain, distinct) = (dir.path().join("plain.json"), dir.path().join("distinct.json"));
    run(&plain, &[]);
    run(&distinct, &["--distinct-args"]);
    // the source itself repeats no args text (checked by hand: 19 337 of 19 337 distinct)
    let (p, d) = (args_texts(&plain), args_texts(&distinct));
    let events: usize = d.values().sum();
    assert_eq!(events, p.values().sum::<usize>());
    // a text twice is one without any counter Kineto numbers (the profiler's own span)
    let counters = ["External id", "Record function id", "Sequence number", "Ev Idx", "Python id"];
    for (text, _) in d.iter().filter(|x| *x.1 > 1) {
        let a: serde_json::Value = serde_json::from_str(text).unwrap();
        assert!(counters.iter().all(|k| a.get(k).is_none()), "repeated: {text}");
    }
    assert!(d.len() + 10 > events, "{} texts of {events}", d.len());
    assert!(p.len() * 3 < events * 2, "without the option copies repeat: {} texts of {events}", p.len());
    // the same trace otherwise: spans, and every kernel still linked to its launch
    let (sp, sd) = (load(&plain, &cache), load(&distinct, &cache));
    assert_eq!(sp.span_count(), sd.span_count());
    assert_eq!(sp.flows().len(), sd.flows().len());
    let owned = |s: &strobe_store::Store| strobe_analysis::efficiency::ops::op_runs(s).len();
    assert_eq!(owned(&sp), owned(&sd));
}
