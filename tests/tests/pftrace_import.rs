//! Perfetto protobuf traces against tests/expected/pftrace_expected.py, which decodes the
//! same files with the `perfetto` package's protobuf classes: spans, kernels, copies,
//! flows, counters, GPU counters (series of their GPU) and steps; gzipped and renamed copies
//! open the same.

mod common;
use common::*;
use std::collections::BTreeMap;
use std::io::Write;
use strobe_model::SpanKind;
use strobe_store::Store;

fn check(s: &Store, exp: &serde_json::Value, what: &str) {
    let mut spans: BTreeMap<String, (u64, i64)> = BTreeMap::new();
    let mut kernels: BTreeMap<String, (u64, i64)> = BTreeMap::new();
    let (mut memcpy, mut instants) = (0u64, 0u64);
    for i in 0..s.span_count() as u32 {
        let (kind, name, dur) = (s.span_kind(i), s.span_name(i).to_string(), s.span_end(i) - s.span_start(i));
        if kind == SpanKind::Instant {
            instants += 1;
            continue;
        }
        let e = spans.entry(name.clone()).or_default();
        e.0 += 1;
        e.1 += dur;
        match kind {
            SpanKind::Kernel => {
                let e = kernels.entry(name).or_default();
                e.0 += 1;
                e.1 += dur;
            }
            SpanKind::Memcpy => memcpy += 1,
            _ => {}
        }
    }
    let want: BTreeMap<String, (u64, i64)> = serde_json::from_value(exp["spans"].clone()).unwrap();
    assert_eq!(spans, want, "{what}: spans by name (count, Σ duration ns)");
    let want: BTreeMap<String, (u64, i64)> = serde_json::from_value(exp["kernels"].clone()).unwrap();
    assert_eq!(kernels, want, "{what}: kernels by name");
    assert_eq!(memcpy, exp["memcpy"].as_u64().unwrap(), "{what}: copies");
    assert_eq!(instants, exp["instants"].as_u64().unwrap(), "{what}: instants");
    let flows = &exp["flows"];
    let want_flows: u64 = ["track_event", "launch", "graph"].iter().map(|k| flows[k].as_u64().unwrap()).sum();
    let got_flows = s.flows().iter().filter(|f| f.kind == strobe_store::FLOW_EXPLICIT).count() as u64;
    assert_eq!(got_flows, want_flows, "{what}: arrows");
    // every launch arrow goes from a host launch to GPU work
    let launches = s
        .flows()
        .iter()
        .filter(|f| f.kind == strobe_store::FLOW_EXPLICIT && s.string(f.cat) == "ac2g")
        .inspect(|f| {
            assert_eq!(s.span_kind(f.from), SpanKind::CudaRuntime, "{what}: a launch arrow's start");
            assert!(matches!(s.span_kind(f.to), SpanKind::Kernel | SpanKind::Memcpy), "{what}: a launch arrow's end");
        })
        .count() as u64;
    assert_eq!(launches, flows["launch"].as_u64().unwrap(), "{what}: launch arrows");
    for (name, c) in exp["counters"].as_object().unwrap() {
        let series = s.counters.iter().find(|x| &x.name == name).unwrap_or_else(|| panic!("{what}: counter {name}"));
        let (_, v) = s.counter_points(series);
        assert_eq!(v.len() as u64, c["count"].as_u64().unwrap(), "{what}: {name} points");
        assert!((v.iter().sum::<f64>() - c["sum"].as_f64().unwrap()).abs() < 1e-6, "{what}: {name} sum");
        assert_eq!(*v.last().unwrap(), c["last"].as_f64().unwrap(), "{what}: {name} last");
    }
    for (name, c) in exp["gpu_counters"].as_object().unwrap() {
        let series =
            s.counters.iter().find(|x| &x.name == name && x.device == Some(0)).unwrap_or_else(|| {
                panic!("{what}: GPU counter {name} of GPU 0 (a series of the GPU, drawn in its group)")
            });
        let (_, v) = s.counter_points(series);
        assert_eq!(v.len() as u64, c["count"].as_u64().unwrap(), "{what}: {name} samples");
        assert!((v.iter().sum::<f64>() - c["sum"].as_f64().unwrap()).abs() < 1e-6, "{what}: {name} sum");
        let min = v.iter().cloned().fold(f64::INFINITY, f64::min);
        let max = v.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        assert_eq!((min, max), (c["min"].as_f64().unwrap(), c["max"].as_f64().unwrap()), "{what}: {name} range");
    }
    let skipped = &s.meta.load.skipped;
    let count = |k: &str| skipped.get(k).copied().unwrap_or(0);
    assert_eq!(
        count("packet needing incremental state its sequence never set"),
        exp["dropped_packets"].as_u64().unwrap(),
        "{what}: dropped packets"
    );
    assert_eq!(
        count("slice end without a begin on its track"),
        exp["ends_without_begin"].as_u64().unwrap(),
        "{what}: ends without a begin"
    );
}

#[test]
fn a_torch_shaped_trace_matches_the_oracle() {
    let s = load("pftrace_torch_train.pftrace");
    let exp = expected("pftrace_torch_train.pftrace.json");
    check(&s, &exp, "torch");
    // the steps are ProfilerStep slices, as in a Kineto trace
    let steps = strobe_analysis::steps::steps(&s);
    let want: Vec<(String, i64)> = serde_json::from_value(exp["steps"].clone()).unwrap();
    let got: Vec<(String, i64)> = steps.iter().map(|st| (st.name.clone(), st.dur_ns)).collect();
    assert_eq!(got, want, "steps");
    // kernels sit on stream lanes of GPU 0, named by the queue's stream
    let streams: Vec<i64> = s
        .lanes
        .iter()
        .filter_map(|l| match l.kind {
            strobe_model::LaneKind::GpuStream { device: 0, stream } => Some(stream),
            _ => None,
        })
        .collect();
    assert_eq!(streams.len(), 2, "{streams:?}");
    assert!(streams.contains(&7) && streams.contains(&20), "{streams:?}");
}

#[test]
fn a_rocprof_shaped_trace_matches_the_oracle() {
    let s = load("pftrace_rocprof_style.pftrace");
    check(&s, &expected("pftrace_rocprof_style.pftrace.json"), "rocprof");
}

#[test]
fn gzipped_and_renamed_copies_open_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let exp = expected("pftrace_torch_train.pftrace.json");
    let bytes = std::fs::read(sample("pftrace_torch_train.pftrace")).unwrap();
    let gz = dir.path().join("train.pftrace.gz");
    let mut e = flate2::write::GzEncoder::new(std::fs::File::create(&gz).unwrap(), flate2::Compression::fast());
    e.write_all(&bytes).unwrap();
    e.finish().unwrap();
    let renamed = dir.path().join("trace.bin");
    std::fs::write(&renamed, &bytes).unwrap();
    for f in [gz, renamed] {
        let s = load_in(&f, &dir.path().join("cache")).unwrap_or_else(|e| panic!("{e}"));
        check(&s, &exp, &f.display().to_string());
    }
}

#[test]
fn perfettos_own_flow_tests_give_perfettos_arrows() {
    // two of Perfetto's trace processor diff tests (converted from text proto by
    // tests/tools/perfetto_textproto.py): v2 flow ids on slices, instants and slice ends,
    // and render-stage submissions, waits and dependencies
    let exp = expected("perfetto_diff_tests.flows.json");
    for file in ["perfetto_flow_events_track_event.pftrace", "perfetto_gpu_render_stages_flow.pftrace"] {
        let s = load(file);
        let mut want: Vec<(String, String)> = serde_json::from_value(exp[file].clone()).unwrap();
        let mut got: Vec<(String, String)> = s
            .flows()
            .iter()
            .filter(|f| f.kind == strobe_store::FLOW_EXPLICIT)
            .map(|f| (s.span_name(f.from).to_string(), s.span_name(f.to).to_string()))
            .collect();
        want.sort();
        got.sort();
        assert_eq!(got, want, "{file}");
    }
}
