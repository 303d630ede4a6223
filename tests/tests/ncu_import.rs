//! Nsight Compute CSV import and the SOL/roofline analysis, against the independent Python
//! oracle `tests/expected/ncu_expected.py` (`tests/expected/<stem>.ncu.json`).

mod common;
use common::*;
use serde_json::Value;
use strobe_analysis::roofline::{analyse, RooflineReport};
use strobe_import::{detect, ncu_csv, Format};

const SAMPLES: [&str; 7] = [
    "ncu_raw.csv",
    "ncu_details.csv",
    "ncu_xplacer_cfd_097K.log",
    "ncu_llmperf_details.csv",
    "ncu_llmperf_metrics.csv",
    "ncu_llmperf_section_occupancy.csv",
    "ncu_llmperf_section_roofline.csv",
];

fn report(name: &str) -> RooflineReport {
    let r = ncu_csv::import(&sample(name)).unwrap_or_else(|e| panic!("{e}"));
    analyse(&r)
}

fn stem(name: &str) -> &str {
    name.rsplit_once('.').map(|(s, _)| s).unwrap_or(name)
}

/// Floats agree to 1e-9 relative (the oracle does the same arithmetic in another order).
fn close(a: Option<f64>, b: &Value, what: &str) {
    match (a, b.as_f64()) {
        (None, None) => {}
        (Some(x), Some(y)) => {
            let tol = 1e-9 * x.abs().max(y.abs()).max(1e-300);
            assert!((x - y).abs() <= tol, "{what}: strobe {x} vs oracle {y}");
        }
        (x, _) => panic!("{what}: strobe {x:?} vs oracle {b}"),
    }
}

#[test]
fn matches_the_oracle() {
    for name in SAMPLES {
        let r = report(name);
        let e = expected(&format!("{}.ncu.json", stem(name)));
        let ek = e["kernels"].as_array().unwrap();
        assert_eq!(r.kernels.len(), ek.len(), "{name}: launches");
        assert_eq!(serde_json::to_value(r.layout).unwrap(), e["layout"], "{name}: layout");
        for (k, x) in r.kernels.iter().zip(ek) {
            let w = format!("{name} launch {}", k.id);
            assert_eq!(k.id, x["id"].as_u64().unwrap(), "{w}");
            assert_eq!(k.name, x["name"].as_str().unwrap(), "{w}");
            assert_eq!(k.duration_ns, x["duration_ns"].as_i64(), "{w}: duration_ns");
            close(k.sm_pct, &x["sm_pct"], &format!("{w}: sm_pct"));
            close(k.memory_pct, &x["memory_pct"], &format!("{w}: memory_pct"));
            close(k.dram_pct, &x["dram_pct"], &format!("{w}: dram_pct"));
            close(k.flops_per_s, &x["flops_per_s"], &format!("{w}: flops_per_s"));
            close(k.tensor_flops, &x["tensor_flops"], &format!("{w}: tensor_flops"));
            close(k.dram_bytes, &x["dram_bytes"], &format!("{w}: dram_bytes"));
            close(k.arithmetic_intensity, &x["arithmetic_intensity"], &format!("{w}: arithmetic_intensity"));
            assert_eq!(k.verdict.map(|v| v.as_str()), x["verdict"].as_str(), "{w}: verdict");
        }
        let en = e["by_name"].as_array().unwrap();
        assert_eq!(r.by_name.len(), en.len(), "{name}: kernel names");
        for (a, x) in r.by_name.iter().zip(en) {
            let w = format!("{name} kernel {}", a.name);
            assert_eq!(a.name, x["name"].as_str().unwrap(), "{name}: by_name order");
            assert_eq!(a.launches as u64, x["launches"].as_u64().unwrap(), "{w}");
            assert_eq!(a.duration_ns, x["duration_ns"].as_i64(), "{w}: duration_ns");
            close(a.sm_pct, &x["sm_pct"], &format!("{w}: sm_pct"));
            close(a.memory_pct, &x["memory_pct"], &format!("{w}: memory_pct"));
            close(a.dram_pct, &x["dram_pct"], &format!("{w}: dram_pct"));
            close(a.dram_bytes, &x["dram_bytes"], &format!("{w}: dram_bytes"));
            assert_eq!(a.verdict.map(|v| v.as_str()), x["verdict"].as_str(), "{w}: verdict");
        }
    }
}

/// Figures a reader can check by eye in the H200 raw export.
#[test]
fn h200_raw_figures() {
    let r = report("ncu_raw.csv");
    assert_eq!(r.kernels.len(), 20);
    assert_eq!(r.by_name.len(), 13);
    let d = &r.device;
    assert_eq!(d.cc, "9.0");
    assert_eq!(d.peaks_source, "export");
    assert_eq!(d.name.as_deref(), Some("H200 SXM"));
    // 1504 byte/cycle × ~3.2 GHz ≈ 4.8 TB/s (the H200's published 4.8 TB/s).
    let dram = d.peak_dram_bytes_per_s.unwrap();
    assert!((4.7e12..4.9e12).contains(&dram), "{dram}");
    // 16896 FFMA/cycle × 2 × ~1.98 GHz ≈ 67 TFLOP/s (published 67 TFLOPS FP32).
    let fp32 = d.peak_flops_per_s.unwrap();
    assert!((6.4e13..7.0e13).contains(&fp32), "{fp32}");
    // log_softmax: the longest launch, memory-bound (memory 81.1 %).
    let soft = &r.kernels[19];
    assert!(soft.name.contains("cunn_SoftMaxForward"));
    assert_eq!(soft.duration_ns, Some(794_496));
    assert_eq!(soft.verdict.unwrap().as_str(), "memory_bound");
    // The LM-head GEMM (8192 × 1024 × 32768, bf16): no FMA instructions, all tensor work.
    // By hand from the raw row: sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum
    // = 552,977,039,360 operations (2·M·N·K = 549,755,813,888; ncu's count is 0.59 % higher),
    // .sum.per_cycle_elapsed = 458,350.25 × sm__cycles_elapsed.avg.per_second 1.673024 GHz
    // = 766.83 TFLOP/s (= 552.977 GFLOP / 721.12 µs); peak 540,672/cycle × 1.673024 GHz =
    // 904.6 TFLOP/s, so 84.77 % of it — the tensor pipe's 84.77 %.
    let gemm = &r.kernels[16];
    assert!(gemm.name.starts_with("nvjet_sm90_tst_320x128"));
    assert_eq!(gemm.fp_flops_per_s, Some(0.0));
    assert_eq!(gemm.tensor_flops, Some(552_977_039_360.0));
    let rate = 458_350.25 * 1.673024e9;
    assert!((gemm.flops_per_s.unwrap() / rate - 1.0).abs() < 1e-6, "{:?}", gemm.flops_per_s);
    assert!((gemm.flops.unwrap() / 552_977_039_360.0 - 1.0).abs() < 1e-3);
    let pct = gemm.flops_per_s.unwrap() / (540_672.0 * 1.673024e9) * 100.0;
    assert!((pct - gemm.tensor_pipe_pct.unwrap()).abs() < 0.01, "{pct}");
    // SM 84.8 %, tensor pipe 84.8 %, memory 89.1 % (L1): compute-bound, not memory-bound, since
    // its arithmetic intensity (~770 FLOP/B) is past the tensor ridge (~222 FLOP/B).
    assert_eq!(gemm.verdict.unwrap().as_str(), "compute_bound");
    let ridge = d.tensor_ridge_point.unwrap();
    assert!(gemm.arithmetic_intensity.unwrap() > ridge && (200.0..250.0).contains(&ridge), "{ridge}");
    assert_eq!(d.tensor_family.as_deref(), Some("op_hgmma_src_bf16_dst_fp32_sparsity_off"));
    // 540,672 ops/cycle (132 SMs × 4096) × ~1.98 GHz ≈ 1.07 PFLOP/s dense bf16 at this clock.
    let t = d.peak_tensor_flops_per_s.unwrap();
    assert!((1.0e15..1.1e15).contains(&t), "{t}");
    assert!(r.notes.iter().any(|n| n.contains("tensor-core")));
    assert_eq!(r.kernels[0].block, Some([64, 1, 1]));
    assert_eq!(r.kernels[0].grid, Some([16, 1, 1]));
    assert_eq!(r.kernels[0].stream, Some(7));
}

/// The raw and details exports of the same 20 launches agree (details values are rounded
/// for display: durations to 10 ns, percentages to 0.01).
#[test]
fn h200_raw_and_details_agree() {
    let raw = report("ncu_raw.csv");
    let det = report("ncu_details.csv");
    assert_eq!(raw.kernels.len(), det.kernels.len());
    for (a, b) in raw.kernels.iter().zip(&det.kernels) {
        assert_eq!(a.id, b.id);
        assert_eq!(a.name, b.name);
        assert_eq!(a.grid, b.grid);
        assert_eq!(a.block, b.block);
        assert_eq!(a.stream, b.stream);
        let (da, db) = (a.duration_ns.unwrap(), b.duration_ns.unwrap());
        assert!((da - db).abs() <= 5, "launch {}: {da} vs {db}", a.id);
        for (x, y, w) in
            [(a.sm_pct, b.sm_pct, "sm"), (a.memory_pct, b.memory_pct, "memory"), (a.dram_pct, b.dram_pct, "dram")]
        {
            let (x, y) = (x.unwrap(), y.unwrap());
            assert!((x - y).abs() <= 0.0051, "launch {} {w}: {x} vs {y}", a.id);
        }
        // Raw: read + write bytes; details: DRAM bandwidth × duration.
        let (x, y) = (a.dram_bytes.unwrap(), b.dram_bytes.unwrap());
        assert!((x - y).abs() <= 0.01 * x.max(y) + 2000.0, "launch {} dram bytes: {x} vs {y}", a.id);
        // The details export lacks the tensor and roofline counters: where both SOL figures
        // pass 80 % the raw export's roofline side decides and the two may differ.
        let both_high = a.memory_pct.unwrap() > 80.0 && a.sm_pct.unwrap().max(a.tensor_pipe_pct.unwrap_or(0.0)) > 80.0;
        if !both_high {
            assert_eq!(a.verdict, b.verdict, "launch {}", a.id);
        }
    }
    // The details export has no roofline counters: peaks come from the published table.
    assert_eq!(det.device.peaks_source, "known");
    assert_eq!(det.device.name.as_deref(), Some("H200 SXM"));
    assert!(det.kernels.iter().all(|k| k.flops_per_s.is_none()));
}

#[test]
fn json_schema() {
    let v = serde_json::to_value(report("ncu_raw.csv")).unwrap();
    assert_eq!(v["format"], "ncu");
    assert!(v["device"]["peak_flops_per_s"].is_number());
    assert!(v["device"]["peak_dram_bytes_per_s"].is_number());
    for k in v["kernels"].as_array().unwrap() {
        for key in [
            "id",
            "name",
            "duration_ns",
            "sm_pct",
            "memory_pct",
            "dram_pct",
            "flops_per_s",
            "dram_bytes",
            "arithmetic_intensity",
            "verdict",
        ] {
            assert!(k.get(key).is_some(), "kernel lacks {key}");
        }
        let verdict = k["verdict"].as_str().unwrap();
        assert!(["under_saturated", "memory_bound", "compute_bound", "balanced"].contains(&verdict));
    }
}

#[test]
fn old_ncu_log_with_application_output() {
    let r = report("ncu_xplacer_cfd_097K.log");
    assert_eq!(r.kernels.len(), 100);
    assert_eq!(r.by_name.len(), 3);
    let k = &r.kernels[0];
    assert_eq!(k.name, "cuda_compute_step_factor(int,float*,float*,float*)");
    assert_eq!(k.duration_ns, Some(8992)); // "Duration","nsecond","8992"
    assert_eq!(k.sm_pct, Some(22.48)); // "SM [%]"
    assert_eq!(k.memory_pct, Some(46.47)); // "Memory [%]"
    assert_eq!(k.dram_pct, Some(46.47)); // "SOL FB"
    assert_eq!(k.block, Some([192, 1, 1])); // Launch Statistics "Block Size"
    assert_eq!(k.grid, Some([506, 1, 1]));
    let raw = ncu_csv::import(&sample("ncu_xplacer_cfd_097K.log")).unwrap();
    let l = &raw.launches[0];
    assert_eq!(l.kernel_time.as_deref(), Some("2020-May-29 12:02:46"));
    assert_eq!(l.value("dram__cycles_elapsed.avg.per_second"), Some(768683274.02));
    // cycle/second
}

#[test]
fn newer_ncu_exports_with_rules_and_labels() {
    // Thousands separators ("13,485"), rule columns, short rule rows.
    let raw = ncu_csv::import(&sample("ncu_llmperf_details.csv")).unwrap();
    let l = &raw.launches[0];
    assert_eq!(l.cc, "12.0");
    assert_eq!(l.value("gpc__cycles_elapsed.max"), Some(13485.0));
    assert_eq!(l.value("dram__bytes_read.sum"), Some(2.33e6)); // Mbyte
    assert_eq!(l.value("gpu__time_duration.sum"), Some(6750.0)); // us → ns
    assert_eq!(l.value("dram__bytes.sum.per_second"), Some(345.14e9)); // Gbyte/s
    assert!(l.name.contains(", cublasGemvParamsEx<int,"), "kernel name with commas: {}", l.name);
    // "Body Item Label" section export: FLOP/s and device peaks from the roofline rows.
    let r = report("ncu_llmperf_section_roofline.csv");
    let f = r.kernels[0].flops_per_s.unwrap();
    assert!((f - (1.97 + 0.0 + 2.0 * 79.06) * 2.15e9).abs() < 1.0, "{f}");
    assert_eq!(r.device.peaks_source, "export");
    assert!((r.device.peak_flops_per_s.unwrap() - 21760.0 * 2.0 * 2.15e9).abs() < 1.0);
    assert!((r.device.peak_dram_bytes_per_s.unwrap() - 128.0 * 13.72e9).abs() < 1.0);
}

#[test]
fn detected_as_ncu_and_refused_as_a_trace() {
    for name in SAMPLES.iter().chain(["ncu_llmperf_raw_error_only.csv"].iter()) {
        assert_eq!(detect(&sample(name)).unwrap(), Some(Format::NcuCsv), "{name}");
    }
    let cache = tempfile::tempdir().unwrap();
    let err = load_in(&sample("ncu_raw.csv"), cache.path()).err().expect("an ncu CSV is not a trace").to_string();
    assert!(err.contains("ncu_raw.csv") && err.contains("Nsight Compute export"), "{err}");
    assert!(cache_files(cache.path()).is_empty());
    // Traces are still what they were.
    assert_eq!(detect(&sample("gpt_train.json.gz")).unwrap(), Some(Format::ChromeJson));
    assert_eq!(detect(&sample("nsys_gpt_single.sqlite")).unwrap(), Some(Format::NsysSqlite));
    let dir = tempfile::tempdir().unwrap();
    let rep = dir.path().join("x.ncu-rep");
    std::fs::write(&rep, b"\x00\x01binary").unwrap();
    assert_eq!(detect(&rep).unwrap(), Some(Format::NcuRep));
}

fn import_err(name: &str, bytes: &[u8]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join(name);
    std::fs::write(&p, bytes).unwrap();
    let err = match ncu_csv::import(&p) {
        Ok(r) => panic!("{name}: imported {} launches", r.launches.len()),
        Err(e) => e.to_string(),
    };
    assert!(err.contains(name), "error does not name the file: {err}");
    err
}

#[test]
fn malformed_inputs_give_clear_errors() {
    let e = ncu_csv::import(&sample("ncu_llmperf_raw_error_only.csv")).unwrap_err().to_string();
    assert!(e.contains("ncu_llmperf_raw_error_only.csv") && e.contains("only errors"), "{e}");
    assert!(e.contains("did not match any section"), "quotes ncu's error: {e}");

    let raw = std::fs::read(sample("ncu_raw.csv")).unwrap();
    let header_only: Vec<u8> = raw.split(|&b| b == b'\n').next().unwrap().to_vec();
    let e = import_err("header_only.csv", &header_only);
    assert!(e.contains("no kernel rows"), "{e}");

    let e = import_err("garbage.csv", &[0xff, 0x00, 0x13, 0x37, b'\n', b'x', b',', b'y']);
    assert!(e.contains("not an Nsight Compute CSV"), "{e}");
    let e = import_err("empty.csv", b"");
    assert!(e.contains("not an Nsight Compute CSV"), "{e}");

    // An unterminated quoted field after the header.
    let mut bad = header_only.clone();
    bad.extend_from_slice(b"\n\"0\",\"1\",\"p");
    let _ = ncu_csv::parse(&bad);

    // Truncated at every 7919th byte: an error or the launches read so far, never a panic.
    for cut in (100..raw.len()).step_by(7919) {
        if let Ok(r) = ncu_csv::parse(&raw[..cut]) {
            assert!(r.launches.len() <= 20);
            let _ = analyse(&r);
        }
    }
    let det = std::fs::read(sample("ncu_details.csv")).unwrap();
    for cut in (100..det.len()).step_by(15013) {
        if let Ok(r) = ncu_csv::parse(&det[..cut]) {
            let _ = analyse(&r);
        }
    }
}

#[test]
fn ncu_rep_without_ncu_says_how_to_export() {
    let on_path =
        std::env::var_os("PATH").map(|p| std::env::split_paths(&p).any(|d| d.join("ncu").is_file())).unwrap_or(false);
    if on_path {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let rep = dir.path().join("report.ncu-rep");
    std::fs::write(&rep, b"\x00binary").unwrap();
    let e = ncu_csv::import_rep(&rep).unwrap_err().to_string();
    assert!(e.contains("report.ncu-rep") && e.contains("--csv --page raw"), "{e}");
}
