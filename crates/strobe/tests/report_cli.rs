//! `strobe report` exit statuses: 0 for a full read, 3 when an input was cut short (the report
//! covers what was read), 2 for what is not a profile.

use std::path::PathBuf;
use std::process::{Command, Output};

fn sample(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../sample-traces").join(name)
}

fn strobe(args: &[&std::ffi::OsStr]) -> Output {
    strobe_with_cache(args, tempfile::tempdir().unwrap().path())
}

/// `strobe ARGS` with its store cache in `cache` (kept across runs by the memo tests).
fn strobe_with_cache(args: &[&std::ffi::OsStr], cache: &std::path::Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_strobe")).args(args).arg("--cache-dir").arg(cache).output().unwrap()
}

#[test]
fn truncated_trace_reports_and_exits_3() {
    let dir = tempfile::tempdir().unwrap();
    let gz = std::fs::read(sample("ddp_rank1.json.gz")).unwrap();
    let cut = dir.path().join("rank1_cut.json.gz");
    std::fs::write(&cut, &gz[..gz.len() * 2 / 3]).unwrap();
    let out = strobe(&["report".as_ref(), cut.as_os_str(), "--json".as_ref()]);
    assert_eq!(out.status.code(), Some(3), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let t = &v["load"]["truncated"];
    assert!(t["events_read"].as_u64().unwrap() > 1000, "{v}");
    assert_eq!(t["events_read"], v["events"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("rank1_cut.json.gz") && err.contains("truncated at byte"), "{err}");

    let text = strobe(&["report".as_ref(), cut.as_os_str()]);
    assert_eq!(text.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&text.stdout).contains("WARNING: truncated at byte"));

    // several ranks, one of them cut: the multi-rank report still comes, with status 3
    let two = strobe(&["report".as_ref(), sample("ddp_rank0.json.gz").as_os_str(), cut.as_os_str()]);
    assert_eq!(two.status.code(), Some(3), "{}", String::from_utf8_lossy(&two.stderr));
}

#[test]
fn full_reads_exit_0_and_non_profiles_exit_2() {
    // an array without its closing bracket is allowed by the format: not a cut
    let ok = strobe(&["report".as_ref(), sample("speedscope_trace-event_simple-partial.json").as_os_str()]);
    assert_eq!(ok.status.code(), Some(0), "{}", String::from_utf8_lossy(&ok.stderr));
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("notes.txt");
    std::fs::write(&junk, b"hello, not a profile\n").unwrap();
    let bad = strobe(&["report".as_ref(), junk.as_os_str()]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("notes.txt"));
}

/// `strobe report` again on the same trace answers from the memo in the cache: the same bytes
/// (and the same exit status and warning for a cut input), without opening the store; a
/// changed source or other options are reported afresh.
#[test]
fn a_second_report_answers_from_the_cache() {
    let cache = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&std::ffi::OsStr]| strobe_with_cache(args, cache.path());
    let stores = || {
        std::fs::read_dir(cache.path())
            .unwrap()
            .filter(|e| e.as_ref().unwrap().path().extension().is_some_and(|x| x == "strobe"))
            .count()
    };
    let trace = dir.path().join("t.json.gz");
    std::fs::copy(sample("ddp_rank0.json.gz"), &trace).unwrap();
    let first = run(&["report".as_ref(), trace.as_os_str()]);
    assert_eq!(first.status.code(), Some(0));
    assert_eq!(stores(), 1);
    // the store removed: a memo answer does not need it (nor rebuild it)
    for e in std::fs::read_dir(cache.path()).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "strobe") {
            std::fs::remove_file(p).unwrap();
        }
    }
    let again = run(&["report".as_ref(), trace.as_os_str()]);
    assert_eq!((again.status.code(), &again.stdout), (Some(0), &first.stdout));
    assert_eq!(stores(), 0, "answered from the memo, not from a rebuilt store");
    // other options: a report of its own
    let json = run(&["report".as_ref(), trace.as_os_str(), "--json".as_ref(), "--top".as_ref(), "3".as_ref()]);
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(v["top_kernels"].as_array().unwrap().len(), 3);
    assert_eq!(stores(), 1);
    // a changed source: its own report (the sample's other rank under the same name)
    std::fs::copy(sample("ddp_rank1.json.gz"), &trace).unwrap();
    let changed = run(&["report".as_ref(), trace.as_os_str()]);
    assert_ne!(changed.stdout, first.stdout);
    // a cut input: status 3 and the warning, the second time too
    let cut = dir.path().join("cut.json.gz");
    let gz = std::fs::read(sample("ddp_rank1.json.gz")).unwrap();
    std::fs::write(&cut, &gz[..gz.len() * 2 / 3]).unwrap();
    let a = run(&["report".as_ref(), cut.as_os_str()]);
    let b = run(&["report".as_ref(), cut.as_os_str()]);
    assert_eq!((a.status.code(), b.status.code()), (Some(3), Some(3)));
    assert_eq!(a.stdout, b.stdout);
    assert_eq!(String::from_utf8_lossy(&a.stderr), String::from_utf8_lossy(&b.stderr));
}

/// The several-rank reports (files side by side, and one nsys export of several processes)
/// answer a second time from the memo too, with the stores gone; a cut rank keeps its
/// warning and exit status 3.
#[test]
fn a_second_several_rank_report_answers_from_the_cache() {
    let cache = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&std::ffi::OsStr]| strobe_with_cache(args, cache.path());
    let drop_stores = || -> usize {
        let mut n = 0;
        for e in std::fs::read_dir(cache.path()).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "strobe") {
                std::fs::remove_file(p).unwrap();
                n += 1;
            }
        }
        n
    };
    let (a, b) = (dir.path().join("r0.json.gz"), dir.path().join("r1.json.gz"));
    std::fs::copy(sample("ddp_rank0.json.gz"), &a).unwrap();
    let gz = std::fs::read(sample("ddp_rank1.json.gz")).unwrap();
    std::fs::write(&b, &gz[..gz.len() * 2 / 3]).unwrap();
    let nsys = sample("nsys_ddp_2proc.sqlite");
    for args in [vec![a.as_os_str(), b.as_os_str()], vec![nsys.as_os_str()]] {
        let mut full: Vec<&std::ffi::OsStr> = vec!["report".as_ref()];
        full.extend(&args);
        let first = run(&full);
        assert!(matches!(first.status.code(), Some(0 | 3)), "{}", String::from_utf8_lossy(&first.stderr));
        assert!(String::from_utf8_lossy(&first.stdout).contains("ranks"), "a several-rank report");
        assert_eq!(drop_stores(), 2, "one store per rank");
        let again = run(&full);
        assert_eq!(
            (again.status.code(), &again.stdout, &again.stderr),
            (first.status.code(), &first.stdout, &first.stderr)
        );
        assert_eq!(drop_stores(), 0, "answered from the memo, not from rebuilt stores");
    }
    // the cut rank: exit 3 both times (checked equal above)
    let cut = run(&["report".as_ref(), a.as_os_str(), b.as_os_str()]);
    assert_eq!(cut.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&cut.stderr).contains("r1.json.gz"));
}

/// `strobe report … | head -1`: the reader closing the pipe ends the report quietly, as it
/// ends `cat`, both when the report is computed and when its memo is replayed.
#[test]
fn closed_pipe_ends_the_report_without_a_panic() {
    use std::io::Read;
    use std::process::Stdio;
    let cache = tempfile::tempdir().unwrap();
    for _ in 0..2 {
        let mut child = Command::new(env!("CARGO_BIN_EXE_strobe"))
            .arg("report")
            .arg(sample("ddp_rank0.json.gz"))
            .arg(sample("ddp_rank1.json.gz"))
            .arg("--json") // 550 kB (one compact line into a pipe), more than a pipe holds
            .arg("--cache-dir")
            .arg(cache.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // the first 4 KiB, then the pipe closed (the reader dropped)
        let mut first = [0u8; 4096];
        child.stdout.take().unwrap().read_exact(&mut first).unwrap();
        assert!(first.starts_with(b"{\"ranks\":["), "{}", String::from_utf8_lossy(&first[..64]));
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{err}");
    }
}
