//! `strobe report` on flight-recorder dumps: a folder or the files, text and `--json`, and a
//! broken dump named in the error.

use std::path::PathBuf;
use std::process::{Command, Output};

fn sample(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../sample-traces").join(name)
}

fn strobe(args: &[&std::ffi::OsStr]) -> Output {
    let cache = tempfile::tempdir().unwrap();
    Command::new(env!("CARGO_BIN_EXE_strobe")).args(args).arg("--cache-dir").arg(cache.path()).output().unwrap()
}

#[test]
fn a_folder_of_dumps_reports_the_desync() {
    let out = strobe(&["report".as_ref(), sample("flight_recorder/gloo_desync").as_os_str()]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("at seq 7 on group 0 (default_pg): desync: rank 1 called all_reduce, the other 3 all_gather"),
        "{text}"
    );
}

#[test]
fn json_has_the_flight_recorder_object() {
    let files: Vec<PathBuf> = (0..4).map(|r| sample(&format!("flight_recorder/gloo_missing/rank_{r}"))).collect();
    let mut args: Vec<&std::ffi::OsStr> = vec!["report".as_ref(), "--json".as_ref()];
    args.extend(files.iter().map(|f| f.as_os_str()));
    let out = strobe(&args);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let fr = &v["flight_recorder"];
    assert_eq!(fr["ranks"].as_array().unwrap().len(), 4);
    assert_eq!(fr["mismatches"][0]["kind"], "missing");
    assert_eq!(fr["mismatches"][0]["ranks"], serde_json::json!([3]));
    assert_eq!(fr["stuck"][0]["seq"], 7);
    assert_eq!(fr["last_completed_everywhere"][0]["seq"], 6);
}

#[test]
fn a_truncated_dump_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let real = std::fs::read(sample("flight_recorder/gloo_missing/rank_1")).unwrap();
    let cut = dir.path().join("rank_1");
    std::fs::write(&cut, &real[..real.len() / 2]).unwrap();
    let out = strobe(&["report".as_ref(), sample("flight_recorder/gloo_missing/rank_0").as_os_str(), cut.as_os_str()]);
    assert_ne!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("rank_1") && err.contains("pickle byte"), "{err}");
}
