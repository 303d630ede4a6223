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
    let st = Command::new(env!("CARGO_BIN_EXE_strobe"))
        .args(["bench", "generate", "--size-mb", "1", "--from"])
        .arg(sample("ddp_rank1.json.gz"))
        .arg("-o")
        .arg(out)
        .args(extra)
        .output()
        .unwrap();
    assert!(st.status.success(), "{}", String::from_utf8_lossy(&st.stderr));
}

fn load(path: &std::path::Path, cache: &std::path::Path) -> strobe_store::Store {
    let opts = strobe_import::LoadOptions { cache_dir: Some(cache.to_path_buf()), no_cache: false, progress: None };
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
