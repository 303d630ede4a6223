//! Per-op efficiency and MFU on an Nsight Systems export whose NVTX ranges are PyTorch's
//! `emit_nvtx(record_shapes=True)` op ranges, against the independent oracle
//! `tests/expected/nsys_emit_nvtx_expected.py`.
//!
//! `nsys_emit_nvtx_gpt.sqlite` is a real capture (H100, PyTorch 2.11, the bundled nsys) made by
//! `tests/tools/record_emit_nvtx.py`: a 2-layer GPT under autocast, steps 2..5 captured as NVTX
//! ranges `step_N`. The counts below come from the export itself (sqlite3): 3 776 push/pop
//! ranges = 4 steps + 3 760 op ranges + 12 CUB ranges (domain `CCCL`, registered strings).

mod common;
use common::*;
use strobe_analysis::efficiency::{efficiency, OpClass, PeakOverride};
use strobe_model::SpanKind;

const FIXTURE: &str = "nsys_emit_nvtx_gpt.sqlite";

#[test]
fn ops_from_nvtx_ranges_match_the_oracle() {
    let store = load(FIXTURE);
    let e = efficiency(&store, PeakOverride::default());
    let x = expected("nsys_emit_nvtx_gpt.efficiency.json");
    let ops = x["ops"].as_object().unwrap();
    assert_eq!(ops.len(), 5);
    for (name, want) in ops {
        let o = e.ops.iter().find(|o| &o.name == name).unwrap_or_else(|| panic!("{name} missing"));
        assert_eq!(o.count, want["count"].as_u64().unwrap(), "{name}: count");
        assert_eq!(o.flops, want["flops"].as_f64().unwrap(), "{name}: flops");
        assert_eq!(o.bytes, want["bytes"].as_f64().unwrap(), "{name}: bytes");
        assert_eq!(o.gpu_ns, want["gpu_ns"].as_i64().unwrap(), "{name}: gpu_ns");
        assert_eq!(o.source, "shapes", "{name}");
    }
    // GEMMs and attention on the bf16 tensor unit (no kernel name of theirs says bf16: the
    // trace's autocast casts do), layer norm in fp32 (its kernels say `float`)
    let unit = |n: &str| e.ops.iter().find(|o| o.name == n).unwrap().unit.as_str();
    assert_eq!(unit("aten::mm"), "tensor_bf16");
    assert_eq!(unit("aten::_cudnn_attention_forward"), "tensor_bf16");
    assert_eq!(unit("aten::native_layer_norm"), "fp32");
    assert!(e.notes.iter().any(|n| n.contains("emit_nvtx") && n.contains("dtypes")), "{:?}", e.notes);
    assert!(e.notes.iter().any(|n| n.contains("causal")), "{:?}", e.notes);
    assert!(!e.notes.iter().any(|n| n.contains("correlation flows")), "{:?}", e.notes);
}

#[test]
fn mfu_per_nvtx_step() {
    let store = load(FIXTURE);
    let r = strobe_analysis::report::report(&store, 5);
    let x = expected("nsys_emit_nvtx_gpt.efficiency.json");
    let steps = &r.efficiency.steps;
    assert_eq!(steps.len(), 4);
    let runs = strobe_analysis::efficiency::op_runs(&store);
    let (starts, _) = store.span_times();
    for s in steps {
        let want = x["steps"][&s.name].as_f64().unwrap_or_else(|| panic!("{}", s.name));
        let step = r.steps.iter().find(|t| t.name == s.name).unwrap();
        // the matrix FLOPs of the ops whose range started in the step
        let matrix: f64 = runs
            .iter()
            .filter(|o| (step.start_ns..step.end_ns()).contains(&starts[o.span as usize]))
            .filter_map(|o| o.work.as_ref())
            .filter(|w| matches!(w.class, OpClass::Gemm | OpClass::Attention))
            .map(|w| w.flops)
            .sum();
        assert_eq!(matrix, want, "{}", s.name);
        assert!(s.model_flops >= want);
        let mfu = s.mfu.unwrap();
        assert!((mfu - s.model_flops / (s.dur_ns as f64 * 1e-9 * 989e12)).abs() < 1e-12, "{}", s.name);
    }
}

#[test]
fn op_ranges_are_cpu_ops_on_the_launching_thread() {
    let store = load(FIXTURE);
    let n = |k: SpanKind| (0..store.span_count() as u32).filter(|&s| store.span_kind(s) == k).count();
    assert_eq!(n(SpanKind::CpuOp), 3760);
    // the step ranges and CUB's own ranges stay NVTX ranges
    assert_eq!(n(SpanKind::Nvtx), 4 + 12);
    assert!((0..store.span_count() as u32)
        .any(|s| store.span_name(s) == "cub::DeviceRadixSort" && store.span_kind(s) == SpanKind::Nvtx));
    let mm = (0..store.span_count() as u32).find(|&s| store.span_name(s) == "aten::mm").unwrap();
    let args: serde_json::Value = serde_json::from_str(&store.span_args(mm)).unwrap();
    assert_eq!(args["Input Dims"].as_array().unwrap().len(), 2);
    assert!(args["Record function id"].as_i64().unwrap() > 0);
    assert!(store.meta.load.notes.iter().any(|n| n.contains("3760 NVTX ranges are PyTorch ops")));
}

/// Malformed texts, huge numbers, unbalanced brackets and op ranges that launched nothing:
/// read without a panic, the ops kept with what could be read, and a note.
#[test]
fn bad_op_ranges_are_noted_not_fatal() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.sqlite");
    std::fs::copy(sample(FIXTURE), &path).unwrap();
    let c = rusqlite::Connection::open(&path).unwrap();
    let tid: i64 = c.query_row("SELECT globalTid FROM NVTX_EVENTS WHERE text = 'step_2'", [], |r| r.get(0)).unwrap();
    let t0: i64 = c.query_row("SELECT min(start) FROM NVTX_EVENTS", [], |r| r.get(0)).unwrap();
    let texts = [
        "aten::mm, seq = 1, op_id = 900001, sizes = [[8192, 1024], [1024",
        "aten::mm, op_id = 900002, sizes = [[99999999999999999999999, 2], [2, 2]]",
        "aten::mm, op_id = 900003, sizes = [[8192, 1024]], [1024, 4096]]",
        "aten::mm, op_id = 900004, sizes = [[9223372036854775807, 9223372036854775807], [9223372036854775807, 9223372036854775807]]",
        "aten::addmm, op_id = 900005, sizes = [[[1]]]",
        ", sizes = [[2, 2]]",
    ];
    for (i, t) in texts.iter().enumerate() {
        // before the first launch: ranges that hold no kernel launch
        let s = t0 - 1_000_000 + i as i64 * 1000;
        c.execute(
            "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) VALUES (?1, ?2, 59, ?3, ?4, 0)",
            rusqlite::params![s, s + 500, t, tid],
        )
        .unwrap();
    }
    drop(c);
    let store = load_in(&path, dir.path()).unwrap_or_else(|e| panic!("{e}"));
    let notes = &store.meta.load.notes;
    assert!(notes.iter().any(|n| n.contains("3765 NVTX ranges are PyTorch ops")), "{notes:?}");
    assert!(
        notes.iter().any(|n| n.contains("4 op ranges (emit_nvtx) had text that could not all be read")),
        "{notes:?}"
    );
    let e = efficiency(&store, PeakOverride::default());
    let want = expected("nsys_emit_nvtx_gpt.efficiency.json");
    // the ops that launched nothing change no figure
    let mm = e.ops.iter().find(|o| o.name == "aten::mm").unwrap();
    assert_eq!(mm.count, want["ops"]["aten::mm"]["count"].as_u64().unwrap());
    assert_eq!(mm.flops, want["ops"]["aten::mm"]["flops"].as_f64().unwrap());
    // the nameless range old PyTorch wrote stays an NVTX range
    assert!((0..store.span_count() as u32).any(|s| store.span_name(s) == ", sizes = [[2, 2]]"));
}
