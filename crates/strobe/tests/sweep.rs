//! The foreign-file sweep: every file in `sample-traces/` — real files from other
//! projects, other tool versions and the project's own fixtures — opens with `strobe report`.
//! Exit 0 for every profile; exit 2 with a message naming the file only for what is not a
//! profile; and the Kineto ones give the figures of the independent oracle in tests/expected.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Files that are genuinely not a profile: (name, what the error must say).
const NOT_PROFILES: &[(&str, &str)] = &[("ncu_llmperf_raw_error_only.csv", "ncu wrote no results, only errors")];

/// Exit status, stdout and stderr of one `strobe report --json`.
type Outcome = (Option<i32>, Vec<u8>, String);

fn report(file: &Path, cache: &Path) -> Outcome {
    let out = Command::new(env!("CARGO_BIN_EXE_strobe"))
        .arg("report")
        .arg(file)
        .arg("--json")
        .arg("--cache-dir")
        .arg(cache)
        .output()
        .unwrap();
    (out.status.code(), out.stdout, String::from_utf8_lossy(&out.stderr).into_owned())
}

/// The oracle's GPU figures against the report's, for a chrome/Kineto trace.
fn check_against_oracle(name: &str, got: &Value, want: &Value) {
    assert_eq!(got["events"], want["events"], "{name}: events");
    let (g, w) = (got["gpus"].as_array().unwrap(), want["gpus"].as_array().unwrap());
    assert_eq!(g.len(), w.len(), "{name}: devices");
    for (g, w) in g.iter().zip(w) {
        for k in ["device", "window_ns", "busy_ns", "idle_ns", "compute_ns", "comm_ns", "memory_ns", "kernels"] {
            assert_eq!(g[k], w[k], "{name}: GPU {} {k}", w["device"]);
        }
        assert_eq!(g.get("memory").unwrap_or(&Value::Null), w.get("memory").unwrap_or(&Value::Null), "{name}: memory");
    }
    let (gk, wk) = (got["top_kernels"].as_array().unwrap(), want["top_kernels"].as_array().unwrap());
    for (g, w) in gk.iter().zip(wk) {
        assert_eq!((&g["name"], &g["total_ns"], &g["count"]), (&w["name"], &w["total_ns"], &w["count"]), "{name}");
    }
}

#[test]
fn every_sample_opens_with_strobe_report() {
    let dir = root().join("sample-traces");
    // a folder of recordings (one folder of rank dumps each) opens recording by recording
    let mut files: Vec<PathBuf> = Vec::new();
    for p in std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()) {
        let sub: Vec<PathBuf> = match p.is_dir() {
            true => std::fs::read_dir(&p).unwrap().map(|e| e.unwrap().path()).filter(|q| q.is_dir()).collect(),
            false => Vec::new(),
        };
        if sub.is_empty() {
            files.push(p);
        } else {
            files.extend(sub);
        }
    }
    files.sort();
    assert!(files.len() > 40, "{} samples", files.len());
    let cache = tempfile::tempdir().unwrap();
    let results: Vec<(PathBuf, Outcome)> = std::thread::scope(|s| {
        let halves: Vec<_> = files
            .chunks(files.len().div_ceil(2))
            .map(|part| s.spawn(|| part.iter().map(|f| (f.clone(), report(f, cache.path()))).collect::<Vec<_>>()))
            .collect();
        halves.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    let mut oracle_checked = 0;
    for (path, (code, stdout, stderr)) in results {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if let Some((_, what)) = NOT_PROFILES.iter().find(|(n, _)| *n == name) {
            assert_eq!(code, Some(2), "{name}: not a profile, exit 2");
            assert!(stderr.contains(&name) && stderr.contains(what), "{name}: {stderr}");
            continue;
        }
        assert_eq!(code, Some(0), "{name}: {stderr}");
        let v: Value = serde_json::from_slice(&stdout).unwrap_or_else(|e| panic!("{name}: not JSON: {e}"));
        let stem = name.trim_end_matches(".gz").trim_end_matches(".json");
        let oracle = root().join("tests/expected").join(format!("{stem}.report.json"));
        if name.contains(".json") && oracle.exists() {
            let want: Value = serde_json::from_slice(&std::fs::read(&oracle).unwrap()).unwrap();
            check_against_oracle(&name, &v, &want);
            oracle_checked += 1;
        }
    }
    assert!(oracle_checked >= 7, "Kineto samples checked against the oracle: {oracle_checked}");
}
