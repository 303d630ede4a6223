//! `strobe report A B …`, `strobe report DIR` and `strobe diff A B` end to end, on the 2-rank
//! DDP sample. The figures themselves are checked against the oracle in tests/tests/ranks.rs;
//! here: the command line, the JSON shape, and that one file still gets the single report.

use std::path::PathBuf;
use std::process::{Command, Output};

fn sample(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../sample-traces").join(name)
}

fn strobe(args: &[&std::ffi::OsStr]) -> Output {
    let cache = tempfile::tempdir().unwrap();
    Command::new(env!("CARGO_BIN_EXE_strobe")).args(args).arg("--cache-dir").arg(cache.path()).output().unwrap()
}

fn json(out: &Output) -> serde_json::Value {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn report_two_ranks_json() {
    let (a, b) = (sample("ddp_rank0.json.gz"), sample("ddp_rank1.json.gz"));
    let v = json(&strobe(&["report".as_ref(), b.as_os_str(), a.as_os_str(), "--json".as_ref()]));
    assert_eq!(v["ranks"].as_array().unwrap().len(), 2);
    assert_eq!(v["ranks"][0]["rank"], 0);
    assert!(v["ranks"][0]["source"].as_str().unwrap().ends_with("ddp_rank0.json.gz"));
    assert_eq!(v["ranks"][1]["gpus"][0]["device"], 1);
    assert_eq!(v["alignment"]["used"], "collective_end");
    let step3 = v["steps"].as_array().unwrap().iter().find(|s| s["name"] == "ProfilerStep#3").unwrap();
    assert_eq!(step3["straggler"], 1);
    assert_eq!(step3["collective_skew_ns"].as_array().unwrap().len(), 10);
    for k in ["rank", "dur_ns", "compute_ns", "comm_ns", "exposed_comm_ns", "idle_ns", "wait_ns"] {
        assert!(step3["per_rank"][0][k].is_i64(), "{k}");
    }
    let s1 = v["stragglers"].as_array().unwrap().iter().find(|s| s["rank"] == 1).unwrap();
    assert_eq!(s1["steps"], serde_json::json!(["ProfilerStep#3"]));
    assert!(s1["evidence"].as_str().unwrap().contains("nvjet_sm90_tst_320x128"));
    for k in
        ["temporal_breakdown", "kernel_breakdown", "comm_overlap", "launch_stats", "queue_length", "memcpy_bandwidth"]
    {
        assert_eq!(v[k].as_array().map(|x| x.len()), Some(2), "{k}");
    }
    // each step's breakdown is printed once: in the top-level list, by rank, not again in
    // each rank's own report, which keeps its critical paths
    let breakdown = v["step_breakdown"].as_array().unwrap();
    for (i, r) in v["ranks"].as_array().unwrap().iter().enumerate() {
        let report = &r["report"];
        assert!(report.get("step_breakdown").is_none() && report["top_kernels"].is_array());
        let paths = report["critical_paths"].as_array().unwrap();
        let own = breakdown.iter().filter(|b| b["rank"] == r["rank"]).count();
        assert!(own > 0 && own == paths.len(), "rank {i}: {own} steps, {} critical paths", paths.len());
    }
}

#[test]
fn report_directory_and_alignment_choice() {
    let dir = tempfile::tempdir().unwrap();
    for f in ["ddp_rank0.json.gz", "ddp_rank1.json.gz"] {
        std::fs::copy(sample(f), dir.path().join(f)).unwrap();
    }
    std::fs::write(dir.path().join("notes.txt"), "not a trace").unwrap();
    let v = json(&strobe(&[
        "report".as_ref(),
        dir.path().as_os_str(),
        "--json".as_ref(),
        "--align".as_ref(),
        "step".as_ref(),
    ]));
    assert_eq!(v["alignment"]["used"], "step_start");
    assert_eq!(v["alignment"]["offsets_ns"], serde_json::json!([0, 627391]));
    let text = strobe(&["report".as_ref(), dir.path().as_os_str()]);
    let t = String::from_utf8_lossy(&text.stdout);
    assert!(t.contains("ProfilerStep#3: rank 1 held the others up (one-off"), "{t}");
    assert!(t.contains("residual"), "{t}");
}

#[test]
fn one_file_keeps_the_single_trace_report() {
    let a = sample("ddp_rank0.json.gz");
    let v = json(&strobe(&["report".as_ref(), a.as_os_str(), "--json".as_ref()]));
    assert_eq!(v["format"], "kineto");
    assert!(v.get("ranks").is_none() && v["top_kernels"].is_array());
}

#[test]
fn diff_json_and_bad_input() {
    let (a, b) = (sample("ddp_rank0.json.gz"), sample("ddp_rank1.json.gz"));
    let v = json(&strobe(&["diff".as_ref(), a.as_os_str(), b.as_os_str(), "--json".as_ref()]));
    assert_eq!(v["kernels"][0]["name"], "nvjet_sm90_tst_320x128_64x3_1x2_h_bz_coopB_NNT");
    assert_eq!(v["kernels"][0]["status"], "added");
    let missing = sample("no_such_rank.json.gz");
    let out = strobe(&["report".as_ref(), a.as_os_str(), missing.as_os_str()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no_such_rank.json.gz"));
}
