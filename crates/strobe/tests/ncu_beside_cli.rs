//! `strobe report TRACE NCU`: the report's kernels with their detail, and the gains per step
//! of the trace against the oracle `tests/expected/ncu_gain_expected.py` (time per step per
//! kernel name) and the detail oracle's ncu estimates.

use std::path::PathBuf;
use std::process::Command;

fn root(p: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..").join(p)
}

fn expected(name: &str) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(root("tests/expected").join(name)).unwrap()).unwrap()
}

#[test]
fn report_of_a_trace_and_its_ncu_report_weighs_the_kernels_against_the_steps() {
    let cache = tempfile::tempdir().unwrap();
    // either order
    for files in [["gpt_train.json.gz", "ncu_gpt.ncu-rep.gz"], ["ncu_gpt.ncu-rep.gz", "gpt_train.json.gz"]] {
        let out = Command::new(env!("CARGO_BIN_EXE_strobe"))
            .arg("report")
            .args(files.map(|f| root("sample-traces").join(f)))
            .arg("--json")
            .arg("--cache-dir")
            .arg(cache.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["format"], "ncu");
        let kernels = v["kernels"].as_array().unwrap();
        assert_eq!(kernels.len(), 20);
        assert!(kernels.iter().all(|k| k["occupancy"]["theoretical_pct"].is_number() && k["rules"].is_array()));
        let per_step = expected("gpt_train.kernel_per_step.json");
        let detail = expected("ncu_gpt.detail.json");
        let g = &v["gains"];
        assert_eq!(g["steps"], 3);
        assert!((g["step_ns"].as_f64().unwrap() - per_step["step_ns"].as_f64().unwrap()).abs() < 1.0);
        let gains = g["kernels"].as_array().unwrap();
        assert!(gains.len() >= 10);
        for k in gains {
            let name = k["timeline_name"].as_str().unwrap();
            let ns = per_step["kernels"][name]["ns_per_step"].as_f64().unwrap();
            assert!((k["ns_per_step"].as_f64().unwrap() - ns).abs() <= 1e-6 * ns + 1.0, "{name}");
            let (mut num, mut den) = (0.0, 0.0);
            for i in k["launches"].as_array().unwrap() {
                let i = i.as_u64().unwrap() as usize;
                if let Some(p) = detail["kernels"][i]["estimated_speedup"]["pct"][0].as_f64() {
                    let d = kernels[i]["duration_ns"].as_f64().unwrap();
                    num += p * d;
                    den += d;
                }
            }
            if den > 0.0 {
                let want = ns * num / den / 100.0;
                assert!((k["gain_ns"].as_f64().unwrap() - want).abs() <= 1e-4 * ns + 1.0, "{name}");
            }
        }
    }
    // The text names the list.
    let text = Command::new(env!("CARGO_BIN_EXE_strobe"))
        .arg("report")
        .arg(root("sample-traces/gpt_train.json.gz"))
        .arg(root("sample-traces/ncu_gpt.ncu-rep.gz"))
        .arg("--cache-dir")
        .arg(cache.path())
        .output()
        .unwrap();
    let s = String::from_utf8_lossy(&text.stdout);
    assert!(s.contains("where a faster kernel pays most, per step of"), "{s}");
    assert!(s.contains("% on this kernel = "), "{s}");
}
