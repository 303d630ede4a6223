//! Busy but not working on a real Nsight Systems export (H100, `--gpu-metrics-devices=0
//! --gpu-metrics-frequency=10000`, recorded by `tests/tools/record_gpu_metrics_idle_sms.py`):
//! a one-block spin, a spin followed by a queued chain of 4-block reductions, bf16 GEMMs and a
//! memory-bound elementwise add, each an NVTX phase. Figures from the independent oracle
//! `tests/expected/nsys_gpu_metrics_expected.py`.

mod common;
use common::*;
use strobe_analysis::efficiency::PeakOverride;
use strobe_analysis::report::{report_with, to_text, Report};
use strobe_analysis::steps::StepRule;

const FIXTURE: &str = "nsys_gpu_metrics_idle_sms.sqlite";
const PHASES: &str = "one_block_spin|small_grid_chain|full_gemm|elementwise_stream";

fn close(a: f64, b: f64, what: &str) {
    assert!((a - b).abs() <= 1e-9 * b.abs().max(1.0), "{what}: {a} vs {b}");
}

fn report() -> Report {
    let store = load(FIXTURE);
    report_with(&store, 10, &StepRule::from_pattern(PHASES).unwrap(), PeakOverride::default())
}

/// Each phase's NVTX range `[start, end)`, from the export's own step detection.
fn phase(r: &Report, name: &str) -> (i64, i64) {
    let s = r.steps.iter().find(|s| s.name == name).unwrap_or_else(|| panic!("no step {name}"));
    (s.start_ns, s.end_ns())
}

#[test]
fn the_metrics_over_the_gpu_window_and_each_phase_match_the_oracle() {
    let r = report();
    let x = expected("nsys_gpu_metrics_idle_sms.gpu_metrics.json");
    let d = &x["devices"]["0"];
    let g = r.gpus.iter().find(|g| g.device == 0).unwrap();
    assert_eq!([g.start_ns, g.end_ns], [d["window"][0].as_i64().unwrap(), d["window"][1].as_i64().unwrap()]);
    assert_eq!(g.metrics.len(), d["metrics"].as_object().unwrap().len());
    for m in &g.metrics {
        let full =
            if m.unit == "%" { format!("{} [Throughput %]", m.name) } else { format!("{} [{}]", m.name, m.unit) };
        let w = &d["metrics"][&full];
        assert!(w.is_object(), "{full} not in the oracle");
        assert_eq!(m.samples, w["samples"].as_u64().unwrap(), "{full}");
        close(m.mean, w["mean"].as_f64().unwrap(), &format!("{full}: mean"));
        close(m.p50, w["p50"].as_f64().unwrap(), &format!("{full}: p50"));
        close(m.p90, w["p90"].as_f64().unwrap(), &format!("{full}: p90"));
        assert_eq!(m.steps.len(), 4, "{full}: every phase has samples at 10 kHz");
        for s in &m.steps {
            let ws = &d["steps"][&s.step][&full];
            assert_eq!(s.samples, ws["samples"].as_u64().unwrap(), "{full} in {}", s.step);
            close(s.mean, ws["mean"].as_f64().unwrap(), &format!("{full} in {}: mean", s.step));
            close(s.p90, ws["p90"].as_f64().unwrap(), &format!("{full} in {}: p90", s.step));
        }
    }
}

#[test]
fn the_spin_and_the_small_grids_are_busy_but_not_working_and_the_gemms_are_not() {
    let r = report();
    let x = expected("nsys_gpu_metrics_idle_sms.gpu_metrics.json");
    let want = &x["devices"]["0"]["busy_not_working"];
    let g = r.gpus.iter().find(|g| g.device == 0).unwrap();
    let b = g.busy_not_working.as_ref().expect("kernel-busy periods");
    assert_eq!(b.busy_ns, want["busy_ns"].as_i64().unwrap());
    assert_eq!(b.low_ns, want["low_ns"].as_i64().unwrap());
    assert_eq!(b.sm_count, Some(132));
    let ws = want["stretches"].as_array().unwrap();
    assert_eq!(b.stretches.len(), ws.len());
    for (s, w) in b.stretches.iter().zip(ws) {
        assert_eq!(s.start_ns, w["start_ns"].as_i64().unwrap());
        assert_eq!(s.end_ns, w["end_ns"].as_i64().unwrap());
        assert_eq!(s.samples, w["samples"].as_u64().unwrap());
        close(s.sms_active, w["sms_active"].as_f64().unwrap(), "stretch SMs Active");
        assert_eq!(s.kernel.as_deref(), w["kernel"].as_str());
        assert_eq!(s.kernel_ns, w["kernel_ns"].as_i64().unwrap());
        assert_eq!(s.grid_blocks, w["grid_blocks"].as_u64());
    }
    // where the stretches lie: one in each low phase, none in the GEMMs or the add
    let inside = |(a, z): (i64, i64)| b.stretches.iter().filter(|s| s.start_ns >= a && s.end_ns <= z).count();
    let touches = |(a, z): (i64, i64)| b.stretches.iter().any(|s| s.start_ns < z && s.end_ns > a);
    assert_eq!(inside(phase(&r, "one_block_spin")), 1);
    assert_eq!(inside(phase(&r, "small_grid_chain")), 1);
    assert!(!touches(phase(&r, "full_gemm")));
    assert!(!touches(phase(&r, "elementwise_stream")));
    // the whole kernel-busy time of the two low phases is low, none of the GEMMs'
    let steps = &want["steps"];
    for (name, low) in [("one_block_spin", true), ("small_grid_chain", true), ("full_gemm", false)] {
        let busy = steps[name]["busy_ns"].as_i64().unwrap();
        assert!(busy > 0, "{name}");
        assert_eq!(steps[name]["low_ns"].as_i64().unwrap(), if low { busy } else { 0 }, "{name}");
    }
    // the small-grid phase's stretch runs through its queued reductions to their end, not
    // only through the spin before them (gaps of ~1 µs between them are the GPU's turnaround)
    let small = phase(&r, "small_grid_chain");
    let s = b.stretches.iter().find(|s| s.start_ns >= small.0 && s.end_ns <= small.1).unwrap();
    assert!(s.end_ns - s.start_ns > 65_000_000, "{s:?}");
    let text = to_text(&r);
    let line = text.lines().find(|l| l.contains("busy but not working")).unwrap_or_else(|| panic!("{text}"));
    assert!(line.contains("(1 blocks for 132 SMs: a grid too small to fill the GPU)"), "{line}");
}

#[test]
fn the_memory_bound_add_near_the_dram_bandwidth_is_not_flagged() {
    let r = report();
    let x = expected("nsys_gpu_metrics_idle_sms.gpu_metrics.json");
    let g = r.gpus.iter().find(|g| g.device == 0).unwrap();
    for (name, w) in x["devices"]["0"]["kernels"].as_object().unwrap() {
        let k = g.kernel_metrics.iter().find(|k| &k.name == name).unwrap_or_else(|| panic!("{name} missing"));
        assert_eq!(k.gpu_ns, w["gpu_ns"].as_i64().unwrap(), "{name}");
        assert_eq!(k.count, w["count"].as_u64().unwrap(), "{name}");
        close(k.sms_active.unwrap(), w["sms_active"].as_f64().unwrap(), name);
    }
    let add = g.kernel_metrics.iter().find(|k| k.name.contains("vectorized_elementwise_kernel")).unwrap();
    assert_eq!(add.memory_bound.as_deref(), Some("measured"), "{add:?}");
    assert!(add.dram_pct.unwrap() > 80.0 && !add.low_dram, "{add:?}");
    let gemm = g.kernel_metrics.iter().find(|k| k.name.contains("nvjet")).unwrap();
    assert!(gemm.memory_bound.is_none() && !gemm.low_dram, "{gemm:?}");
    assert!(g.kernel_metrics.iter().all(|k| !k.low_dram));
}
