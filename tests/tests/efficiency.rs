//! Per-op efficiency from recorded shapes (docs/efficiency.md) against the independent
//! oracle `tests/expected/efficiency_expected.py` (FLOPs and bytes from the trace's shapes,
//! GPU time from the kernels' External ids), a GEMM's efficiency on the H200 by hand, MFU,
//! recomputation on the activation-checkpointing MI300X trace, and overrides.

mod common;
use common::*;
use strobe_analysis::efficiency::{efficiency, op_runs, Bound, PeakOverride, Unit};

#[test]
fn gpt_ops_match_the_oracle() {
    let store = load("gpt_train.json.gz");
    let e = efficiency(&store, PeakOverride::default());
    let x = expected("gpt_train.efficiency.json");
    let x = x.as_object().unwrap();
    assert!(x.len() >= 5);
    for (name, want) in x {
        let o = e.ops.iter().find(|o| &o.name == name).unwrap_or_else(|| panic!("{name} missing"));
        assert_eq!(o.count, want["count"].as_u64().unwrap(), "{name}: count");
        assert_eq!(o.flops, want["flops"].as_f64().unwrap(), "{name}: flops");
        assert_eq!(o.bytes, want["bytes"].as_f64().unwrap(), "{name}: bytes");
        assert_eq!(o.gpu_ns, want["gpu_ns"].as_i64().unwrap(), "{name}: gpu_ns");
        assert_eq!(o.source, "shapes", "{name}");
    }
    assert_eq!(e.device.matched.as_deref(), Some("H200 SXM"));
    assert_eq!(e.device.source, "published");
    // Ranked by time lost.
    assert!(e.ops.windows(2).all(|w| w[0].figures.lost_ns >= w[1].figures.lost_ns));
    // Every kernel of an op with a formula is in the kernel table, with the op's work.
    let k_flops: f64 = e.kernels.iter().map(|k| k.flops).sum();
    let o_flops: f64 = e.ops.iter().map(|o| o.flops).sum();
    assert!((k_flops / o_flops - 1.0).abs() < 1e-9);
}

/// One `aten::addmm` of the MLP (bias [4096], x [8192, 1024], W [1024, 4096], bf16) on the
/// H200 SXM (989 TFLOP/s dense bf16, 4.8 TB/s), by hand:
/// FLOPs = 2·8192·1024·4096 = 68,719,476,736; bytes = (4096 + 8192·1024 + 1024·4096 +
/// 8192·4096)·2 = 92,282,880; compute time = 68,719,476,736 / 989e12 s = 69,483.8 ns; memory
/// time = 92,282,880 / 4.8e12 s = 19,225.6 ns; so compute-bound (arithmetic intensity 744.7 >
/// ridge 989e12 / 4.8e12 = 206) with theoretical time 69,483.8 ns; efficiency = that / the
/// kernel's measured time.
#[test]
fn gemm_efficiency_on_h200_by_hand() {
    let store = load("gpt_train.json.gz");
    let e = efficiency(&store, PeakOverride::default());
    let runs = op_runs(&store);
    let r = runs
        .iter()
        .find(|r| r.name == "aten::addmm" && r.work.as_ref().is_some_and(|w| w.flops == 68_719_476_736.0))
        .expect("an MLP addmm");
    let w = r.work.as_ref().unwrap();
    assert_eq!(w.bytes, 92_282_880.0);
    assert_eq!(w.unit, Unit::TensorBf16);
    // The GEMM kernel (and cuBLAS's workspace memset): the union of their intervals.
    assert!(!r.gpu_spans.is_empty());
    let measured = r.gpu_ns as f64;
    let f = strobe_analysis::efficiency::figures(
        &e.device,
        w.unit,
        w.flops,
        w.bytes,
        r.gpu_ns,
        strobe_analysis::efficiency::theoretical_ns(&e.device, w.unit, w.flops, w.bytes),
    );
    let theo = 68_719_476_736.0 / 989e12 * 1e9;
    assert!((f.theoretical_ns.unwrap() - theo).abs() < 1e-6, "{:?}", f.theoretical_ns);
    assert!((theo - 69_483.8).abs() < 0.1);
    assert_eq!(f.bound, Some(Bound::Compute));
    assert!((f.efficiency.unwrap() - theo / measured).abs() < 1e-12);
    assert!((f.lost_ns.unwrap() - (measured - theo)).abs() < 1e-6);
    assert!((f.tflops_per_s.unwrap() - 68_719_476_736.0 / measured / 1e3).abs() < 1e-9);
    assert!((f.arithmetic_intensity.unwrap() - 68_719_476_736.0 / 92_282_880.0).abs() < 1e-9);
}

#[test]
fn gpt_mfu_per_step() {
    let store = load("gpt_train.json.gz");
    let e = efficiency(&store, PeakOverride::default());
    assert_eq!(e.steps.len(), 3);
    // The same model and batch every step: the same model FLOPs; no checkpointing replay.
    let f0 = e.steps[0].model_flops;
    assert!(e.steps.iter().all(|s| (s.model_flops - f0).abs() < 1e-6 * f0));
    // ≈ 6 · 110M params · 8192 tokens + causal attention ≈ 5.7 TFLOP (README of the traces).
    assert!((5.0e12..6.5e12).contains(&f0), "{f0}");
    for s in &e.steps {
        assert_eq!(s.unit, Unit::TensorBf16);
        let mfu = s.mfu.unwrap();
        assert!((mfu - s.model_flops / (s.dur_ns as f64 * 1e-9 * 989e12)).abs() < 1e-12);
        assert!(s.hfu.is_none());
    }
}

#[test]
fn recomputation_on_the_checkpointed_mi300x_trace() {
    let store = load("tracelens_mi300_resnet_act_checkpoint.json.gz");
    let e = efficiency(&store, PeakOverride::default());
    assert_eq!(e.device.matched.as_deref(), Some("MI300X"));
    let runs = op_runs(&store);
    // Activation checkpointing replays forward convolutions in the backward pass.
    let replayed = runs.iter().filter(|r| r.recompute && r.name.contains("convolution")).count();
    assert!(replayed > 0);
    assert!(e.steps.iter().any(|s| s.hfu.is_some_and(|h| h > s.mfu.unwrap())));
    assert!(e.ops.iter().any(|o| o.name == "aten::miopen_convolution" && o.flops > 0.0));
}

#[test]
fn overrides_replace_the_ceilings() {
    let store = load("gpt_train.json.gz");
    let e = efficiency(&store, PeakOverride { tflops: Some(500.0), gbps: Some(2000.0) });
    assert_eq!(e.device.source, "published+override");
    let mm = e.ops.iter().find(|o| o.name == "aten::mm").unwrap();
    let pct = mm.figures.tflops_per_s.unwrap() / 500.0 * 100.0;
    assert!((mm.figures.pct_of_peak.unwrap() - pct).abs() < 1e-9);
    // A trace with no device table: no peaks, and a note saying how to give them.
    let store = load("hta_sampled_rank0.json.gz");
    let e = efficiency(&store, PeakOverride::default());
    assert_eq!(e.device.source, "none");
    assert!(e.notes.iter().any(|n| n.contains("--peak-tflops")), "{:?}", e.notes);
    assert!(e.ops.iter().all(|o| o.figures.efficiency.is_none()));
}

/// An nsys report has no CPU ops, so no step's FLOPs are known: MFU is absent for every step
/// (an empty sum's sign would show as "MFU -0.0%"), not zero.
#[test]
fn steps_without_modeled_ops_have_no_mfu() {
    let store = load("nsys_gpt_single.sqlite");
    let e = efficiency(&store, PeakOverride::default());
    assert!(!e.steps.is_empty(), "the sample's NVTX steps");
    for s in &e.steps {
        assert_eq!(s.mfu, None, "{}", s.name);
        assert!(s.model_flops == 0.0 && s.model_flops.is_sign_positive(), "{}: {}", s.name, s.model_flops);
    }
}

/// A report whose steps come from `--steps` gives MFU for those steps, not the built-in ones:
/// `forward` ranges here, each with the FLOPs of the modeled ops that started in it.
#[test]
fn mfu_is_per_step_of_the_reports_own_rule() {
    let store = load("gpt_train.json.gz");
    let rule = strobe_analysis::steps::StepRule::from_pattern("forward").unwrap();
    let r = strobe_analysis::report::report_with(&store, 10, &rule, PeakOverride::default());
    assert!(r.steps.len() >= 2 && r.steps.iter().all(|s| s.name.starts_with("forward (")));
    let mfu = &r.efficiency.steps;
    assert_eq!(mfu.len(), r.steps.len());
    let runs = op_runs(&store);
    for (s, m) in r.steps.iter().zip(mfu) {
        assert_eq!((m.name.as_str(), m.dur_ns), (s.name.as_str(), s.dur_ns));
        let within = |t: i64| t >= s.start_ns && t < s.start_ns + s.dur_ns;
        let flops: f64 = runs
            .iter()
            .filter(|o| !o.recompute && within(store.span_start(o.span)))
            .filter_map(|o| o.work.as_ref().map(|w| w.flops))
            .sum();
        assert!(flops > 0.0);
        assert_eq!(m.model_flops, flops + 0.0, "{}", s.name);
    }
}
