//! A store queried before its file is written (`LoadOptions::defer_write`, what `strobe report`
//! loads with) reads as the finished store does, and the file it writes afterwards is the one
//! an ordinary load writes, byte for byte.

mod common;
use common::{assert_same_reads, cache_files, sample};
use std::path::Path;
use strobe_import::LoadOptions;
use strobe_store::Store;

fn opts(dir: &Path, defer_write: bool) -> LoadOptions {
    LoadOptions {
        cache_dir: Some(dir.to_path_buf()),
        no_cache: false,
        progress: None,
        defer_write,
        write_behind: false,
    }
}

/// The one store file in `dir` (temp files of a build in progress start with a dot).
fn store_file(dir: &Path) -> Option<Vec<u8>> {
    let names: Vec<String> = cache_files(dir).into_iter().filter(|n| n.ends_with(".strobe")).collect();
    assert!(names.len() <= 1, "{names:?}");
    names.first().map(|n| std::fs::read(dir.join(n)).unwrap())
}

#[test]
fn a_store_read_before_its_file_is_written_reads_and_writes_as_a_finished_one() {
    for name in [
        "gpt_train.json.gz",
        "ddp_rank0.json.gz",
        "catapult_flow.json",
        "export_flows_v2_counters.json",
        "nesting_near_miss.json",
        "nsys_gpt_single.sqlite",
        "nsys_ddp_2proc.sqlite",
    ] {
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let done = strobe_import::load(&sample(name), &opts(a.path(), false)).unwrap();
        let pending = strobe_import::load(&sample(name), &opts(b.path(), true)).unwrap();
        assert!(!done.is_pending() && pending.is_pending(), "{name}");
        assert!(store_file(b.path()).is_none(), "{name}: no store in the cache before write_pending");
        for lane in 0..pending.lanes.len() as u32 {
            assert!(pending.lane_view(lane).levels.is_empty(), "{name}: a pending store has no level of detail yet");
        }
        assert_same_reads(&done, &pending, name);
        let r = |s: &Store| serde_json::to_value(strobe_analysis::report::report(s, 10)).unwrap();
        assert_eq!(r(&done), r(&pending), "{name}: the report");

        pending.write_pending().unwrap();
        assert!(!pending.is_pending());
        let written = store_file(b.path()).unwrap_or_else(|| panic!("{name}: no store written"));
        assert!(written == store_file(a.path()).unwrap(), "{name}: the written store differs from finish's");
        // a second call writes nothing more, and the cache answers the next load
        pending.write_pending().unwrap();
        let again = strobe_import::load(&sample(name), &opts(b.path(), true)).unwrap();
        assert!(!again.is_pending(), "{name}: loaded from the cache");
        assert_same_reads(&done, &again, name);
    }
}

#[test]
fn a_pending_store_dropped_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let pending = strobe_import::load(&sample("gpt_train.json.gz"), &opts(dir.path(), true)).unwrap();
    assert!(pending.is_pending());
    drop(pending);
    assert_eq!(cache_files(dir.path()), Vec::<String>::new());
}

#[test]
fn the_processes_of_an_export_are_pending_until_written() {
    let path = sample("nsys_ddp_2proc.sqlite");
    let procs = strobe_import::nsys_sqlite::gpu_processes(&path).unwrap();
    assert_eq!(procs.len(), 2);
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let done: Vec<Store> = strobe_import::load_nsys_processes(&path, &procs, &opts(a.path(), false))
        .unwrap()
        .into_iter()
        .map(Result::unwrap)
        .collect();
    let pending: Vec<Store> = strobe_import::load_nsys_processes(&path, &procs, &opts(b.path(), true))
        .unwrap()
        .into_iter()
        .map(Result::unwrap)
        .collect();
    for (d, p) in done.iter().zip(&pending) {
        assert!(p.is_pending());
        assert_same_reads(d, p, "nsys_ddp_2proc process");
        p.write_pending().unwrap();
    }
    let files = |dir: &Path| {
        let mut v: Vec<(String, Vec<u8>)> = cache_files(dir)
            .into_iter()
            .filter(|n| n.ends_with(".strobe"))
            .map(|n| (n.clone(), std::fs::read(dir.join(&n)).unwrap()))
            .collect();
        v.sort();
        v
    };
    let (x, y) = (files(a.path()), files(b.path()));
    assert_eq!(x.len(), 2);
    assert!(x == y, "the processes' stores differ from an ordinary load's");
}
