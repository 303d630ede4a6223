//! `strobe report snapshot.pickle --json` carries the peak's breakdown, and `strobe diff` of two
//! snapshots compares them (figures checked against the oracle in tests/tests/memory_*.rs; here,
//! what the command line gives).

use std::path::PathBuf;
use std::process::Command;

fn sample(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../sample-traces").join(name)
}

fn json(args: &[&std::ffi::OsStr]) -> serde_json::Value {
    let cache = tempfile::tempdir().unwrap();
    let out =
        Command::new(env!("CARGO_BIN_EXE_strobe")).args(args).arg("--cache-dir").arg(cache.path()).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn report_and_diff_of_snapshots() {
    let (a, b) = (sample("mem_adamw_b8.pickle"), sample("mem_adamw_b16.pickle"));
    let r = json(&["report".as_ref(), a.as_os_str(), "--json".as_ref()]);
    let dev = &r["devices"][0];
    let bd = &dev["peak_breakdown"];
    let sum: i64 = bd["categories"].as_array().unwrap().iter().map(|c| c["bytes"].as_i64().unwrap()).sum();
    assert_eq!(sum, dev["peak_allocated_bytes"].as_i64().unwrap());
    let first = &bd["by_source"][0];
    for k in ["frame", "bytes", "count", "category"] {
        assert!(!first[k].is_null(), "by_source has {k}");
    }
    let d = json(&["diff".as_ref(), a.as_os_str(), b.as_os_str(), "--json".as_ref()]);
    let dd = &d["devices"][0];
    let delta = dd["peak_allocated_delta"].as_i64().unwrap();
    let b_peak = json(&["report".as_ref(), b.as_os_str(), "--json".as_ref()])["devices"][0]["peak_allocated_bytes"]
        .as_i64()
        .unwrap();
    assert_eq!(delta, b_peak - dev["peak_allocated_bytes"].as_i64().unwrap());
    let by_source: i64 = dd["by_source"].as_array().unwrap().iter().map(|s| s["delta"].as_i64().unwrap()).sum();
    assert_eq!(by_source, delta);
    // a snapshot against a trace is refused, naming the file
    let trace = sample("gpt_train.json.gz");
    let out = Command::new(env!("CARGO_BIN_EXE_strobe")).arg("diff").arg(&a).arg(&trace).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("gpt_train.json.gz"));
}
