//! XSpace profiles (`.xplane.pb`) and JAX's Chrome JSON against figures computed
//! independently by tests/expected/xspace_expected.py (a hand-written protobuf decoder).

mod common;
use common::*;
use serde_json::Value;
use strobe_model::{LaneKind, SpanKind};

fn check(file: &str) {
    let stem = file.strip_suffix(".xplane.pb").unwrap();
    let store = load(file);
    assert_eq!(store.meta.format.as_str(), "xspace", "{file}");
    let r = strobe_analysis::report::report(&store, 20);
    let exp = expected(&format!("{stem}.xspace.json"));
    let gpus = exp["gpus"].as_array().unwrap();
    assert_eq!(r.gpus.len(), gpus.len(), "{file}: devices with work");
    for (g, e) in r.gpus.iter().zip(gpus) {
        assert_eq!(g.device, e["device"].as_i64().unwrap(), "{file}");
        assert_eq!(g.kernels, e["kernels"].as_u64().unwrap(), "{file}: kernels on GPU {}", g.device);
        assert_eq!(g.memcpy, e["memcpy"].as_u64().unwrap(), "{file}: copies on GPU {}", g.device);
        assert_eq!(g.busy_ns, e["busy_ns"].as_i64().unwrap(), "{file}: busy on GPU {}", g.device);
        let streams: Vec<i64> = r.streams.iter().filter(|s| s.device == g.device).map(|s| s.stream).collect();
        let want: Vec<i64> = e["streams"].as_array().unwrap().iter().map(|s| s.as_i64().unwrap()).collect();
        assert_eq!(streams, want, "{file}: streams of GPU {}", g.device);
    }
    // all device work whose launch the host recorded (same correlation id) is linked to it
    let launch = |k: SpanKind| matches!(k, SpanKind::CudaRuntime | SpanKind::CudaDriver);
    let linked = store.flows().iter().filter(|f| launch(store.span_kind(f.from))).count();
    assert_eq!(linked as u64, exp["linked_launches"].as_u64().unwrap(), "{file}: launches linked to their work");

    let steps = exp["steps"].as_array().unwrap();
    if steps.is_empty() {
        // no StepTraceAnnotation: any steps are inferred from the GPU work's period
        assert!(r.steps.iter().all(|s| s.source == strobe_analysis::steps::StepSource::Inferred), "{file}");
        return check_host(file, &store, &exp);
    }
    assert_eq!(r.steps.len(), steps.len(), "{file}: steps");
    for (s, e) in r.steps.iter().zip(steps) {
        assert_eq!(s.name, e["name"].as_str().unwrap(), "{file}");
        assert_eq!(s.start_ns, e["start_ns"].as_i64().unwrap(), "{file}: {}", s.name);
        assert_eq!(s.dur_ns, e["dur_ns"].as_i64().unwrap(), "{file}: {}", s.name);
        assert_eq!(s.gpu_idle_ns, e["gpu_idle_ns"].as_i64().unwrap(), "{file}: {} GPU idle", s.name);
    }
    check_host(file, &store, &exp);
}

/// The HLO ops whose GPU work carries XLA's cost stats: an op row each (source `xla`), its
/// FLOPs and bytes XLA's, its GPU time its kernels'.
fn check_xla_costs(file: &str, store: &strobe_store::Store, exp: &Value) {
    let eff = strobe_analysis::efficiency::efficiency(store, Default::default());
    let got: std::collections::BTreeMap<String, (u64, f64, f64, i64)> = eff
        .ops
        .iter()
        .filter(|o| o.source == "xla")
        .map(|o| (o.name.clone(), (o.count, o.flops, o.bytes, o.gpu_ns)))
        .collect();
    let want: std::collections::BTreeMap<String, (u64, f64, f64, i64)> = exp["xla_ops"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| {
            let n = |f: &str| v[f].as_f64().unwrap();
            (k.clone(), (v["count"].as_u64().unwrap(), n("flops"), n("bytes"), v["gpu_ns"].as_i64().unwrap()))
        })
        .collect();
    assert_eq!(got, want, "{file}: HLO ops with XLA's costs");
}

fn check_host(file: &str, store: &strobe_store::Store, exp: &Value) {
    check_xla_costs(file, store, exp);
    let ops = (0..store.span_count() as u32).filter(|&s| store.span_kind(s) == SpanKind::CpuOp).count();
    assert_eq!(ops as u64, exp["host_xla_ops"].as_u64().unwrap(), "{file}: XLA ops run on host threads");
    if let Some(want) = exp["longest_sleep_ns"].as_i64() {
        let (starts, ends) = store.span_times();
        let got = (0..store.span_count())
            .filter(|&s| store.span_name(s as u32).contains("sleep"))
            .map(|s| ends[s] - starts[s])
            .max();
        assert_eq!(got, Some(want), "{file}: the planted host stall");
    }
}

#[test]
fn rocm_eight_gpu_profile_matches_the_oracle() {
    check("jax_rocm_conv_8gpu.xplane.pb");
}

#[test]
fn rocm_fused_attention_profile_matches_the_oracle() {
    check("jax_rocm_te_fused_attn.xplane.pb");
    // a plane that is no GPU or host timeline is named in the notes, not dropped silently
    let store = load("jax_rocm_te_fused_attn.xplane.pb");
    let notes = &store.meta.load.notes;
    assert!(notes.iter().any(|n| n.contains("/device:CUSTOM:Megascale Trace") && n.contains("not shown")), "{notes:?}");
    assert_eq!(store.meta.base_time_ns, Some(1_779_266_702_889_805_563), "Task Environment's profile start");
}

#[test]
fn cpu_training_loops_match_the_oracle() {
    check("jax_cpu_transformer.xplane.pb");
    check("jax_cpu_stall.xplane.pb");
}

#[test]
fn the_planted_stall_is_the_odd_step() {
    let store = load("jax_cpu_stall.xplane.pb");
    let r = strobe_analysis::report::report(&store, 20);
    let odd: Vec<&str> = r.step_anomalies.iter().map(|a| a.step.as_str()).collect();
    assert_eq!(odd, ["train 3"]);
}

#[test]
fn streams_are_named_as_xla_names_them_and_kernels_keep_their_details() {
    let store = load("jax_rocm_conv_8gpu.xplane.pb");
    let lane = store
        .lanes
        .iter()
        .position(|d| d.kind == LaneKind::GpuStream { device: 1, stream: 19 })
        .expect("GPU 1's stream 19");
    assert_eq!(store.lanes[lane].name, "GPU 1 · Stream #19(Kernel)");
    let span = store.lane_spans(lane as u32).span[0];
    let args: Value = serde_json::from_str(&store.span_args(span)).unwrap();
    assert_eq!(args["hlo_module"], "jit_forward_3d_conv");
    assert_eq!(args["hlo_op"], "loop_transpose_fusion");
    assert_eq!(args["grid"], serde_json::json!([1280, 1, 1]));
    assert_eq!(args["block"], serde_json::json!([256, 1, 1]));
    assert_eq!(store.meta.devices.len(), 8);
    assert_eq!(store.meta.devices[0].sm_count, Some(304));
    assert_eq!(store.meta.devices[0].compute_capability.as_deref(), Some("9.4"));
}

#[test]
fn jax_chrome_json_opens_with_the_same_gpu_work_as_its_xspace() {
    // the JSON is JAX's own export of the same XSpace (ProfilerSession.export)
    let x = strobe_analysis::report::report(&load("jax_rocm_conv_8gpu.xplane.pb"), 20);
    let j = strobe_analysis::report::report(&load("jax_rocm_conv_8gpu.trace.json.gz"), 20);
    let v = |r: &strobe_analysis::report::Report, k: &str| serde_json::to_value(r).unwrap()[k].clone();
    for k in ["gpus", "top_kernels", "streams", "idle_breakdown"] {
        assert_eq!(v(&x, k), v(&j, k), "{k}");
    }
    let exp = expected("jax_rocm_conv_8gpu.xspace.json");
    assert_eq!(j.gpus.len(), exp["gpus"].as_array().unwrap().len());
    // the CPU run's JSON: the same steps as its XSpace
    let x = strobe_analysis::report::report(&load("jax_cpu_stall.xplane.pb"), 20);
    let j = strobe_analysis::report::report(&load("jax_cpu_stall.trace.json.gz"), 20);
    assert_eq!(serde_json::to_value(&x.steps).unwrap(), serde_json::to_value(&j.steps).unwrap());
}

#[test]
fn a_profile_directory_opens_its_newest_run_one_rank_per_host() {
    let t = tempfile::tempdir().unwrap();
    let run = t.path().join("plugins/profile/2026_12_07_04_15_26");
    let newer = t.path().join("plugins/profile/2026_12_07_05_15_26");
    std::fs::create_dir_all(&run).unwrap();
    std::fs::create_dir_all(&newer).unwrap();
    std::fs::copy(sample("jax_cpu_stall.xplane.pb"), run.join("old.xplane.pb")).unwrap();
    for h in ["hostA", "hostB"] {
        std::fs::copy(sample("jax_cpu_stall.xplane.pb"), newer.join(format!("{h}.xplane.pb"))).unwrap();
        std::fs::copy(sample("jax_cpu_stall.trace.json.gz"), newer.join(format!("{h}.trace.json.gz"))).unwrap();
    }
    let files = strobe_import::trace_files_in(t.path()).unwrap();
    assert_eq!(files, vec![newer.join("hostA.xplane.pb"), newer.join("hostB.xplane.pb")]);
}

#[test]
fn damaged_profiles_say_what_is_wrong_and_never_panic() {
    let t = tempfile::tempdir().unwrap();
    let whole = std::fs::read(sample("jax_rocm_conv_8gpu.xplane.pb")).unwrap();
    // cut in the middle: the whole planes before the cut are read, the cut is reported
    let cut = t.path().join("cut.xplane.pb");
    std::fs::write(&cut, &whole[..whole.len() * 9 / 10]).unwrap();
    let s = load_in(&cut, &t.path().join("c1")).unwrap();
    let tr = s.meta.load.truncated.as_ref().expect("a cut file says so");
    assert!(tr.what.contains("whole plane"), "{}", tr.what);
    assert!(s.span_count() > 0);
    // not protobuf at all, under an XSpace name
    let junk = t.path().join("junk.xplane.pb");
    std::fs::write(&junk, b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff").unwrap();
    let e = load_in(&junk, &t.path().join("c2")).err().expect("junk is refused").to_string();
    assert!(e.contains("junk.xplane.pb") && e.contains("XSpace"), "{e}");
    // gzipped: opens like the plain file
    let gz = t.path().join("conv.xplane.pb.gz");
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut enc, &whole).unwrap();
    std::fs::write(&gz, enc.finish().unwrap()).unwrap();
    let a = load_in(&gz, &t.path().join("c3")).unwrap();
    assert_eq!(a.span_count(), load("jax_rocm_conv_8gpu.xplane.pb").span_count());
    // every prefix of the start of a file: an error naming it or a store, never a panic
    for n in (0..400).step_by(7) {
        let p = t.path().join(format!("p{n}.xplane.pb"));
        std::fs::write(&p, &whole[..n]).unwrap();
        if let Err(e) = strobe_import::xspace::import_to_memory(&p) {
            assert!(e.to_string().contains(&format!("p{n}.xplane.pb")), "{e}");
        }
    }
}

/// Protobuf encoding, enough to write a small XSpace by hand.
mod pb {
    pub fn varint(mut v: u64, out: &mut Vec<u8>) {
        loop {
            let b = (v & 0x7f) as u8;
            v >>= 7;
            if v == 0 {
                out.push(b);
                return;
            }
            out.push(b | 0x80);
        }
    }
    pub fn bytes(field: u64, payload: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        varint(field << 3 | 2, &mut out);
        varint(payload.len() as u64, &mut out);
        out.extend_from_slice(payload);
        out
    }
    pub fn num(field: u64, v: u64) -> Vec<u8> {
        let mut out = Vec::new();
        varint(field << 3, &mut out);
        varint(v, &mut out);
        out
    }
    /// A map entry (key 1, value 2) of an int64 key to a message.
    pub fn entry(field: u64, key: u64, value: &[u8]) -> Vec<u8> {
        bytes(field, &[num(1, key), bytes(2, value)].concat())
    }
}

#[test]
fn xla_step_markers_on_the_device_are_the_steps() {
    use pb::*;
    // a GPU plane as XProf leaves it: a stream of kernels and its derived `Steps` line, one
    // event per step group (named by the group id, with a `group_id` stat), no host steps
    let stat_md = [entry(5, 1, &[num(1, 1), bytes(2, b"group_id")].concat())].concat();
    let ev_md = [
        entry(4, 1, &[num(1, 1), bytes(2, b"gemm_kernel")].concat()),
        entry(4, 2, &[num(1, 2), bytes(2, b"4")].concat()),
        entry(4, 3, &[num(1, 3), bytes(2, b"5")].concat()),
    ]
    .concat();
    let event = |md: u64, off_ps: u64, dur_ps: u64, stats: &[u8]| {
        bytes(4, &[num(1, md), num(2, off_ps), num(3, dur_ps), stats.to_vec()].concat())
    };
    let group = |g: u64| bytes(4, &[num(1, 1), num(4, g)].concat());
    let stream = [
        num(1, 7),
        bytes(2, b"Stream #7(Compute)"),
        num(3, 1_000),
        event(1, 100_000, 400_000, b""),
        event(1, 2_100_000, 400_000, b""),
    ]
    .concat();
    let steps = [
        num(1, 9_000),
        bytes(2, b"Steps"),
        num(3, 1_000),
        event(2, 0, 2_000_000, &group(4)),
        event(3, 2_000_000, 1_500_000, &group(5)),
    ]
    .concat();
    let plane = [num(1, 1), bytes(2, b"/device:GPU:0"), bytes(3, &stream), bytes(3, &steps), ev_md, stat_md].concat();
    let t = tempfile::tempdir().unwrap();
    let f = t.path().join("steps.xplane.pb");
    std::fs::write(&f, bytes(1, &plane)).unwrap();
    let s = load_in(&f, &t.path().join("c")).unwrap();
    let got: Vec<(String, i64, i64)> =
        strobe_analysis::steps::steps(&s).into_iter().map(|x| (x.name, x.start_ns, x.dur_ns)).collect();
    // line at 1 µs; offsets and durations in ps
    assert_eq!(got, [("step 4".to_string(), 1_000, 2_000), ("step 5".to_string(), 3_000, 1_500)]);
    // the kernels stay kernels, on their stream
    assert_eq!((0..s.span_count() as u32).filter(|&i| s.span_kind(i) == SpanKind::Kernel).count(), 2);
}
