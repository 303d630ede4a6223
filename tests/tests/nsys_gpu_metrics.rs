//! Sampled GPU metrics of a real Nsight Systems export (H100, `--gpu-metrics-devices=0
//! --gpu-metrics-frequency=1000`; `tests/tools/trim_nsys_gpu_metrics.py` made the sample),
//! against the independent oracle `tests/expected/nsys_gpu_metrics_expected.py`.

mod common;
use common::*;
use strobe_analysis::efficiency::PeakOverride;
use strobe_analysis::report::{report_with, to_text};
use strobe_analysis::steps::StepRule;

const FIXTURE: &str = "nsys_gpu_metrics_h100.sqlite";
/// The recording's NVTX phases, taken as its steps.
const PHASES: &str = "gemm_bf16|copy_bandwidth|small_grids|host_sleep|graph_capture|graph_replay";

/// `SMs Active [Throughput %]` → (`SMs Active`, `%`), as the report names a metric.
fn split(full: &str) -> (String, String) {
    let (name, unit) = full.trim_end_matches(']').rsplit_once(" [").unwrap();
    let unit = if unit.ends_with('%') { "%" } else { unit };
    (name.to_string(), unit.to_string())
}

fn close(a: f64, b: f64, what: &str) {
    assert!((a - b).abs() <= 1e-9 * b.abs().max(1.0), "{what}: {a} vs {b}");
}

fn report() -> strobe_analysis::report::Report {
    let store = load(FIXTURE);
    report_with(&store, 10, &StepRule::from_pattern(PHASES).unwrap(), PeakOverride::default())
}

#[test]
fn every_sample_becomes_a_point_of_its_gpu_and_metric() {
    let store = load(FIXTURE);
    let x = expected("nsys_gpu_metrics_h100.gpu_metrics.json");
    let series: Vec<_> = store.counters.iter().filter(|c| c.name == strobe_model::gpu_metrics::NAME).collect();
    assert_eq!(series.len(), 22);
    assert!(series.iter().all(|c| c.device == Some(0)));
    let points: u64 = series.iter().map(|c| c.end - c.begin).sum();
    assert_eq!(points, x["samples"].as_u64().unwrap());
    let notes = store.meta.load.notes.join("\n");
    assert!(notes.contains("GPU metrics: 22 metrics on GPU 0"), "{notes}");
    assert_eq!(store.meta.load.by_category.get("GPU_METRICS"), Some(&14894));
}

#[test]
fn each_metric_over_the_gpu_window_and_per_step_matches_the_oracle() {
    let r = report();
    let x = expected("nsys_gpu_metrics_h100.gpu_metrics.json");
    let d = &x["devices"]["0"];
    let g = r.gpus.iter().find(|g| g.device == 0).unwrap();
    assert_eq!([g.start_ns, g.end_ns], [d["window"][0].as_i64().unwrap(), d["window"][1].as_i64().unwrap()]);
    let want = d["metrics"].as_object().unwrap();
    assert_eq!(g.metrics.len(), want.len());
    // the usual ones first, in their order
    let first: Vec<&str> = g.metrics.iter().take(7).map(|m| m.name.as_str()).collect();
    assert_eq!(
        first,
        [
            "SMs Active",
            "SM Issue",
            "Tensor Active",
            "DRAM Read Bandwidth",
            "DRAM Write Bandwidth",
            "PCIe RX Throughput",
            "PCIe TX Throughput"
        ]
    );
    for (full, w) in want {
        let (name, unit) = split(full);
        let m = g.metrics.iter().find(|m| m.name == name && m.unit == unit).unwrap_or_else(|| panic!("{full} missing"));
        assert_eq!(m.samples, w["samples"].as_u64().unwrap(), "{full}: samples");
        close(m.mean, w["mean"].as_f64().unwrap(), &format!("{full}: mean"));
        close(m.p50, w["p50"].as_f64().unwrap(), &format!("{full}: p50"));
        close(m.p90, w["p90"].as_f64().unwrap(), &format!("{full}: p90"));
        let steps = &d["steps"];
        let with_samples: Vec<&String> =
            steps.as_object().unwrap().iter().filter(|(_, s)| s.get(full).is_some()).map(|(k, _)| k).collect();
        assert_eq!(m.steps.len(), with_samples.len(), "{full}: steps with samples");
        for s in &m.steps {
            let ws = &steps[&s.step][full];
            assert_eq!(s.samples, ws["samples"].as_u64().unwrap(), "{full} in {}: samples", s.step);
            close(s.mean, ws["mean"].as_f64().unwrap(), &format!("{full} in {}: mean", s.step));
            close(s.p50, ws["p50"].as_f64().unwrap(), &format!("{full} in {}: p50", s.step));
            close(s.p90, ws["p90"].as_f64().unwrap(), &format!("{full} in {}: p90", s.step));
        }
    }
    // the phase with no sample inside its 0.46 ms is left out
    assert!(g.metrics[0].steps.iter().all(|s| s.step != "graph_replay"));
}

#[test]
fn busy_time_and_kernels_measured_by_the_metrics_match_the_oracle() {
    let r = report();
    let x = expected("nsys_gpu_metrics_h100.gpu_metrics.json");
    let d = &x["devices"]["0"];
    let g = r.gpus.iter().find(|g| g.device == 0).unwrap();
    let b = g.busy_not_working.as_ref().unwrap();
    assert_eq!(b.busy_ns, d["busy_not_working"]["busy_ns"].as_i64().unwrap());
    assert_eq!(b.low_ns, d["busy_not_working"]["low_ns"].as_i64().unwrap());
    assert_eq!(b.sm_count, Some(132));
    // the recording's GEMMs keep nearly every SM active: nothing busy-but-idle to report
    assert!(b.stretches.is_empty());
    let want = d["kernels"].as_object().unwrap();
    for (name, w) in want {
        let k = g.kernel_metrics.iter().find(|k| &k.name == name).unwrap_or_else(|| panic!("{name} missing"));
        assert_eq!(k.gpu_ns, w["gpu_ns"].as_i64().unwrap(), "{name}");
        assert_eq!(k.count, w["count"].as_u64().unwrap(), "{name}");
        close(k.sms_active.unwrap(), w["sms_active"].as_f64().unwrap(), name);
    }
    // microsecond kernels under millisecond sampling are not judged
    let tiny = g.kernel_metrics.iter().find(|k| k.count == 3000).unwrap();
    assert!(tiny.coverage < 0.5 && tiny.memory_bound.is_none() && !tiny.low_dram, "{tiny:?}");
}

#[test]
fn the_report_carries_the_metrics_in_json_and_text() {
    let r = report();
    let v = serde_json::to_value(&r).unwrap();
    let m = &v["gpus"][0]["metrics"][0];
    assert_eq!(m["name"], "SMs Active");
    assert_eq!(m["unit"], "%");
    for k in ["mean", "p50", "p90", "samples"] {
        assert!(m[k].is_number(), "{k}: {m}");
    }
    assert!(m["steps"][0]["step"].is_string());
    let text = to_text(&r);
    let line = text.lines().find(|l| l.contains("metrics (mean / p90")).unwrap_or_else(|| panic!("{text}"));
    assert!(line.contains("SMs Active 33.7% / 99.0%"), "{line}");
    assert!(line.contains("15 more in --json"), "{line}");
}
