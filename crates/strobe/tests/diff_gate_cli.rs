//! `strobe diff A B` in the attribution's terms: the median step of each side part by part, the
//! figures those of the independent oracle (tests/expected/attribution_expected.py), and
//! `--fail-if` as a regression gate (exit code 4).

use serde_json::Value;
use std::path::PathBuf;
use std::process::{Command, Output};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn diff(a: &str, b: &str, extra: &[&str]) -> Output {
    let cache = tempfile::tempdir().unwrap();
    Command::new(env!("CARGO_BIN_EXE_strobe"))
        .arg("diff")
        .arg(repo().join("sample-traces").join(a))
        .arg(repo().join("sample-traces").join(b))
        .args(extra)
        .arg("--cache-dir")
        .arg(cache.path())
        .output()
        .unwrap()
}

/// The oracle's step of median duration (the lower middle one), as `attribution::compare` picks it.
fn oracle_median(stem: &str) -> Value {
    let text = std::fs::read_to_string(repo().join(format!("tests/expected/{stem}.attribution.json"))).unwrap();
    let mut steps: Vec<Value> = serde_json::from_str(&text).unwrap();
    steps.sort_by_key(|s| s["dur_ns"].as_i64().unwrap());
    steps[(steps.len() - 1) / 2].clone()
}

#[test]
fn the_median_steps_side_by_side_are_the_oracles() {
    let out = diff("gpt_train.json.gz", "hta_nccl_data.json.gz", &["--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let sb = &v["step_breakdown"];
    let (a, b) = (oracle_median("gpt_train"), oracle_median("hta_nccl_data"));
    assert_eq!(sb["a"]["step"], a["step"]);
    assert_eq!(sb["b"]["step"], b["step"]);
    for p in sb["parts"].as_array().unwrap() {
        let key = p["name"].as_str().unwrap();
        let (ea, eb) = if key == "step" {
            (a["dur_ns"].as_i64().unwrap(), b["dur_ns"].as_i64().unwrap())
        } else {
            (a["parts"][key].as_i64().unwrap(), b["parts"][key].as_i64().unwrap())
        };
        // the oracle rounds fractional shares its own way: 2 ns a part
        assert!((p["a_ns"].as_i64().unwrap() - ea).abs() <= 2, "{key}: A {} vs oracle {ea}", p["a_ns"]);
        assert!((p["b_ns"].as_i64().unwrap() - eb).abs() <= 2, "{key}: B {} vs oracle {eb}", p["b_ns"]);
    }
}

#[test]
fn fail_if_exits_4_naming_the_part_and_0_when_nothing_crossed() {
    // the HTA sample's median step is 7x the GPT one's
    let out =
        diff("gpt_train.json.gz", "hta_nccl_data.json.gz", &["--fail-if", "step>+5%", "--fail-if", "comm_wait>+1ms"]);
    assert_eq!(out.status.code(), Some(4), "{}", String::from_utf8_lossy(&out.stderr));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("step>+5% crossed"), "{err}");
    assert!(!err.contains("comm_wait>+1ms crossed"), "{err}");
    // a trace against itself: nothing grew
    let same = diff("gpt_train.json.gz", "gpt_train.json.gz", &["--fail-if", "step>+0ns", "--fail-if", "gemm>+0%"]);
    assert_eq!(same.status.code(), Some(0), "{}", String::from_utf8_lossy(&same.stderr));
    // a typo is an error (exit 2) before anything loads
    let bad = diff("gpt_train.json.gz", "gpt_train.json.gz", &["--fail-if", "step>+5 parsecs"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--fail-if"));
}
