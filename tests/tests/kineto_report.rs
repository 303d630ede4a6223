//! `strobe report` on real Kineto traces against figures computed independently by
//! tests/expected/kineto_expected.py (plain Python, exact decimals).

mod common;
use common::*;
use serde_json::Value;

fn check(file: &str, stem: &str) {
    let store = load(file);
    let r = strobe_analysis::report::report(&store, 20);
    let exp = expected(&format!("{stem}.report.json"));

    assert_eq!(r.events, exp["events"].as_u64().unwrap(), "{file}: events");
    let by_phase: std::collections::BTreeMap<String, u64> = serde_json::from_value(exp["by_phase"].clone()).unwrap();
    assert_eq!(r.load.by_phase, by_phase, "{file}: by_phase");
    let by_cat: std::collections::BTreeMap<String, u64> = serde_json::from_value(exp["by_category"].clone()).unwrap();
    assert_eq!(r.load.by_category, by_cat, "{file}: by_category");

    let gpus = exp["gpus"].as_array().unwrap();
    assert_eq!(r.gpus.len(), gpus.len(), "{file}: device count");
    for (g, e) in r.gpus.iter().zip(gpus) {
        let f = |k: &str| e[k].as_i64().unwrap();
        assert_eq!(g.device, f("device"), "{file}");
        assert_eq!(g.window_ns, f("window_ns"), "{file}: window");
        assert_eq!(g.busy_ns, f("busy_ns"), "{file}: busy");
        assert_eq!(g.idle_ns, f("idle_ns"), "{file}: idle");
        assert_eq!(g.compute_ns, f("compute_ns"), "{file}: compute");
        assert_eq!(g.comm_ns, f("comm_ns"), "{file}: comm");
        assert_eq!(g.memory_ns, f("memory_ns"), "{file}: memory");
        assert_eq!(g.comm_overlapped_ns, f("comm_overlapped_ns"), "{file}: overlap");
        assert_eq!(g.kernels, e["kernels"].as_u64().unwrap(), "{file}: kernels");
        // the idle breakdown splits exactly the oracle's idle time (its gaps are the busy
        // union's, computed from the same scan of GPU activity)
        let b = r.idle_breakdown.iter().find(|b| b.device == g.device).expect("a breakdown per device");
        assert_eq!(b.idle_ns, f("idle_ns"), "{file}: breakdown idle");
        assert_eq!(b.host_wait_ns + b.kernel_wait_ns + b.other_ns, f("idle_ns"), "{file}: breakdown parts");
        assert!((g.overlap_pct - e["overlap_pct"].as_f64().unwrap()).abs() < 1e-9);
        // the memory water level's peaks (profile_memory=True traces), or none
        let want = &e["memory"];
        match &g.memory {
            None => assert!(want.is_null(), "{file}: no water level, the oracle has {want}"),
            Some(m) => assert_eq!(serde_json::to_value(m).unwrap(), *want, "{file}: memory"),
        }
    }

    let tk = exp["top_kernels"].as_array().unwrap();
    assert_eq!(r.top_kernels.len(), tk.len().min(20));
    for (k, e) in r.top_kernels.iter().zip(tk) {
        assert_eq!(k.name, e["name"].as_str().unwrap(), "{file}");
        assert_eq!(k.count, e["count"].as_u64().unwrap(), "{file}: {}", k.name);
        assert_eq!(k.total_ns, e["total_ns"].as_i64().unwrap(), "{file}: {}", k.name);
        assert_eq!(k.mean_ns, e["mean_ns"].as_i64().unwrap());
        assert_eq!(k.min_ns, e["min_ns"].as_i64().unwrap());
        assert_eq!(k.max_ns, e["max_ns"].as_i64().unwrap());
        assert!((k.pct_kernel_time - e["pct_kernel_time"].as_f64().unwrap()).abs() < 1e-9);
    }

    let st = exp["streams"].as_array().unwrap();
    assert_eq!(r.streams.len(), st.len(), "{file}: streams");
    for (s, e) in r.streams.iter().zip(st) {
        assert_eq!((s.device, s.stream), (e["device"].as_i64().unwrap(), e["stream"].as_i64().unwrap()));
        assert_eq!(s.kernels, e["kernels"].as_u64().unwrap());
        assert_eq!(s.busy_ns, e["busy_ns"].as_i64().unwrap());
    }

    // Steps are CPU ranges; GPU-side copies (ROCm traces have them) are not steps twice.
    let steps: Vec<&Value> =
        exp["steps"].as_array().unwrap().iter().filter(|s| s["cat"] != "gpu_user_annotation").collect();
    assert_eq!(r.steps.len(), steps.len(), "{file}: steps");
    for (s, e) in r.steps.iter().zip(steps) {
        assert_eq!(s.name, e["name"].as_str().unwrap());
        assert_eq!(s.start_ns, e["start_ns"].as_i64().unwrap());
        assert_eq!(s.dur_ns, e["dur_ns"].as_i64().unwrap());
    }
}

#[test]
fn single_gpu_gpt() {
    check("gpt_train.json.gz", "gpt_train");
}

#[test]
fn ddp_rank0() {
    check("ddp_rank0.json.gz", "ddp_rank0");
}

#[test]
fn ddp_rank1() {
    check("ddp_rank1.json.gz", "ddp_rank1");
}

#[test]
fn hta_nccl_a100() {
    check("hta_nccl_data.json.gz", "hta_nccl_data");
}

#[test]
fn old_categories_tb_plugin() {
    check("kineto_tbplugin_resnet50.json.gz", "kineto_tbplugin_resnet50");
}

#[test]
fn rocm_mi300() {
    check("tracelens_mi300_resnet_act_checkpoint.json.gz", "tracelens_mi300_resnet_act_checkpoint");
}

/// torch 2.11 on an H100, asked for a `.pftrace`: it has no Perfetto backend and writes
/// Kineto JSON (starting "\n  {", whose newline is also a protobuf packet tag) under that
/// name. It opens as the Kineto trace it is, with all its figures.
#[test]
fn torch_kineto_json_named_pftrace() {
    let f = "pftrace_torch211_h100.pftrace";
    assert_eq!(strobe_import::detect(&sample(f)).unwrap(), Some(strobe_import::Format::ChromeJson));
    check(f, "pftrace_torch211_h100");
}

#[test]
fn hta_sampled_rank_without_device_properties() {
    check("hta_sampled_rank0.json.gz", "hta_sampled_rank0");
}

#[test]
fn ddp_metadata_and_flows() {
    let s = load("ddp_rank1.json.gz");
    let d = s.meta.distributed.as_ref().expect("distributedInfo");
    assert_eq!((d.rank, d.world_size, d.backend.as_deref()), (Some(1), Some(2), Some("nccl")));
    assert_eq!(s.meta.devices.len(), 2);
    assert_eq!(s.meta.devices[1].name, "NVIDIA H200");
    assert_eq!(s.meta.devices[1].sm_count, Some(132));
    assert_eq!(s.meta.base_time_ns, Some(1790857026000000000));
    // every kernel is reached from a CPU launch (explicit ac2g flow or correlation id)
    let mut kernels = 0;
    for id in 0..s.span_count() as u32 {
        if s.span_kind(id) == strobe_model::SpanKind::Kernel {
            kernels += 1;
            let from: Vec<_> = s.flows_to(id).collect();
            assert!(!from.is_empty(), "kernel {} has no launch", s.span_name(id));
            let k = s.span_kind(from[0].from);
            assert!(matches!(k, strobe_model::SpanKind::CudaRuntime | strobe_model::SpanKind::CudaDriver), "{k:?}");
        }
    }
    assert_eq!(kernels, 1290);
    // copy engines: a second index over the same copy spans
    let names: Vec<&str> = s.lanes.iter().map(|l| l.name.as_str()).collect();
    assert!(names.contains(&"GPU 1 · copy D2H"), "{names:?}");
    assert!(names.contains(&"GPU 1 · stream 17"), "{names:?}");
}

/// PyTorch writes `"displayTimeUnit": "ns"` for nanosecond-resolution traces whose `ts`/`dur`
/// are still microseconds: the key is a display hint and must not change a single figure.
#[test]
fn display_time_unit_ns_changes_nothing() {
    use std::io::{Read, Write};
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(sample("gpt_train.json.gz")).unwrap())
        .read_to_string(&mut text)
        .unwrap();
    let n = text.matches("\"displayTimeUnit\": \"ms\"").count();
    assert_eq!(n, 1, "the sample declares displayTimeUnit ms once");
    let dir = tempfile::tempdir().unwrap();
    let ns = dir.path().join("gpt_train_ns.json");
    std::fs::File::create(&ns)
        .unwrap()
        .write_all(text.replace("\"displayTimeUnit\": \"ms\"", "\"displayTimeUnit\": \"ns\"").as_bytes())
        .unwrap();
    let a = strobe_analysis::report::report(&load("gpt_train.json.gz"), 20);
    let b = strobe_analysis::report::report(&load_in(&ns, dir.path()).unwrap(), 20);
    let exp = expected("gpt_train.report.json");
    assert_eq!(b.gpus[0].window_ns, exp["gpus"][0]["window_ns"].as_i64().unwrap());
    assert_eq!(serde_json::to_value(&a.gpus).unwrap(), serde_json::to_value(&b.gpus).unwrap());
    assert_eq!(serde_json::to_value(&a.steps).unwrap(), serde_json::to_value(&b.steps).unwrap());
    assert_eq!(serde_json::to_value(&a.top_kernels).unwrap(), serde_json::to_value(&b.top_kernels).unwrap());
}
