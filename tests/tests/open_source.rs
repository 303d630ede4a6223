//! `strobe_import::open`: every kind of file comes back as its `Source` arm (the format
//! detected once), a snapshot's read reports its progress and stops on cancel, and `load`
//! still refuses what is not a timeline.

mod common;
use common::{expected, sample};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use strobe_import::{open, ImportError, LoadOptions, Progress, Source};

fn opts(dir: &std::path::Path) -> LoadOptions {
    LoadOptions::cached_in(dir.to_path_buf())
}

fn arm(s: &Source) -> &'static str {
    match s {
        Source::Trace(_) => "trace",
        Source::MemorySnapshot(_) => "snapshot",
        Source::MemoryStats(_) => "stats",
        Source::Ncu(_) => "ncu",
        Source::FlightRecorder(_) => "flight recorder",
    }
}

#[test]
fn each_kind_of_file_opens_as_its_arm() {
    let dir = tempfile::tempdir().unwrap();
    for (file, want) in [
        ("gpt_train.json.gz", "trace"),
        ("nsys_extrap_concurrent.sqlite", "trace"),
        ("mem_oom.pickle", "snapshot"),
        ("mem_legacy_list.pickle", "snapshot"),
        ("mem_oom.memory_stats.json", "stats"),
        ("ncu_raw.csv", "ncu"),
        ("ncu_esmm.ncu-rep", "ncu"),
        ("flight_recorder/gloo_missing/rank_0", "flight recorder"),
        ("flight_recorder/gloo_desync_json/rank_0", "flight recorder"),
    ] {
        let s = open(&sample(file), &opts(dir.path())).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(arm(&s), want, "{file}");
    }
}

/// The snapshot arm holds what the oracle counts (tests/expected/mem_train.memory.json, by
/// tests/expected/memory_expected.py), and the read reports every byte and trace entry.
#[test]
fn snapshot_progress_counts_bytes_and_entries() {
    let dir = tempfile::tempdir().unwrap();
    let p = sample("mem_train.pickle");
    let progress = Arc::new(Progress::default());
    let o = LoadOptions { progress: Some(progress.clone()), ..opts(dir.path()) };
    let Source::MemorySnapshot(snap) = open(&p, &o).unwrap() else { panic!("not a snapshot") };
    let want = expected("mem_train.memory.json")["devices"][0]["trace_entries"].as_u64().unwrap();
    assert_eq!(snap.device_traces.iter().map(Vec::len).sum::<usize>() as u64, want);
    assert_eq!(progress.events.load(Ordering::Relaxed), want, "one event per trace entry");
    let len = std::fs::metadata(&p).unwrap().len();
    assert_eq!(progress.bytes_total.load(Ordering::Relaxed), len);
    assert_eq!(progress.bytes_done.load(Ordering::Relaxed), len);
}

#[test]
fn a_cancelled_snapshot_read_says_cancelled() {
    let dir = tempfile::tempdir().unwrap();
    let progress = Arc::new(Progress::default());
    progress.cancel.store(true, Ordering::Relaxed);
    let o = LoadOptions { progress: Some(progress), ..opts(dir.path()) };
    for file in ["mem_oom.pickle", "mem_train.pickle"] {
        match open(&sample(file), &o) {
            Err(ImportError::Cancelled { path }) => assert!(path.ends_with(file)),
            Err(e) => panic!("{file}: {e}"),
            Ok(s) => panic!("{file}: opened as {} despite cancel", arm(&s)),
        }
    }
}

#[test]
fn load_refuses_what_is_not_a_timeline() {
    let dir = tempfile::tempdir().unwrap();
    for (file, says) in [
        ("mem_oom.pickle", "a memory snapshot, not a timeline"),
        ("mem_oom.memory_stats.json", "memory_stats() dump, not a timeline"),
        ("ncu_raw.csv", "Nsight Compute export"),
    ] {
        let e = strobe_import::load(&sample(file), &opts(dir.path())).err().unwrap_or_else(|| panic!("{file} loaded"));
        let msg = e.to_string();
        assert!(msg.contains(file) && msg.contains(says), "{file}: {msg}");
    }
}
