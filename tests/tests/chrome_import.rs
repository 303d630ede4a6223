//! Generic chrome traces (B/E, unclosed slices, flows, open arrays) against
//! tests/expected/chrome_expected.py, an independent Python reading of the format.

mod common;
use common::*;
use std::collections::BTreeMap;
use strobe_model::{flags, IdKey, LaneKind};
use strobe_store::Store;

fn id(v: &serde_json::Value) -> IdKey {
    match v.as_i64() {
        Some(n) => IdKey::Num(n),
        None => IdKey::Str(v.as_str().unwrap().to_string()),
    }
}

/// (ts, dur or -1, depth, name) of every slice of one thread lane, in (ts, longer first) order.
fn thread_slices(s: &Store, pid: &IdKey, tid: &IdKey) -> Vec<(i64, i64, u32, String)> {
    let Some(lane) = s.lanes.iter().position(|l| l.kind == LaneKind::CpuThread { pid: pid.clone(), tid: tid.clone() })
    else {
        return Vec::new();
    };
    let v = s.lane_view(lane as u32);
    (0..v.starts.len())
        .map(|k| {
            let sid = v.span[k];
            let m = s.span_meta(sid);
            let dur = if m.flags & flags::UNCLOSED as u8 != 0 { -1 } else { v.ends[k] - v.starts[k] };
            (v.starts[k], dur, v.depth[k], s.string(m.name).to_string())
        })
        .collect()
}

fn check_threads(file: &str, stem: &str) {
    let s = load(file);
    let exp = expected(&format!("{stem}.chrome.json"));
    assert_eq!(s.meta.load.events, exp["events"].as_u64().unwrap(), "{file}: events");
    for t in exp["threads"].as_array().unwrap() {
        let (pid, tid) = (id(&t["pid"]), id(&t["tid"]));
        let got = thread_slices(&s, &pid, &tid);
        assert_eq!(got.len() as u64, t["slices"].as_u64().unwrap(), "{file} {pid}/{tid}: slices");
        let unclosed = got.iter().filter(|x| x.1 == -1).count() as u64;
        assert_eq!(unclosed, t["unclosed"].as_u64().unwrap(), "{file} {pid}/{tid}: unclosed");
        let mut depth_counts: BTreeMap<String, u64> = BTreeMap::new();
        for x in &got {
            *depth_counts.entry(x.2.to_string()).or_default() += 1;
        }
        let exp_dc: BTreeMap<String, u64> = serde_json::from_value(t["depth_counts"].clone()).unwrap();
        assert_eq!(depth_counts, exp_dc, "{file} {pid}/{tid}: depth counts");
        let sum: i64 = got.iter().filter(|x| x.1 >= 0).map(|x| x.1).sum();
        assert_eq!(sum, t["sum_dur_ns"].as_i64().unwrap(), "{file} {pid}/{tid}: Σ dur");
        if let Some(list) = t.get("list") {
            let exp_list: Vec<(i64, i64, u32, String)> = serde_json::from_value(list.clone()).unwrap();
            assert_eq!(got, exp_list, "{file} {pid}/{tid}");
        }
    }
}

fn check_flows(file: &str, stem: &str) {
    let s = load(file);
    let exp = expected(&format!("{stem}.chrome.json"));
    let mut want: Vec<(String, i64, String, i64)> = serde_json::from_value(exp["flows"].clone()).unwrap();
    let mut got: Vec<(String, i64, String, i64)> = s
        .flows()
        .iter()
        .filter(|f| f.kind == strobe_store::FLOW_EXPLICIT)
        .map(|f| {
            (s.span_name(f.from).to_string(), s.span_start(f.from), s.span_name(f.to).to_string(), s.span_start(f.to))
        })
        .collect();
    want.sort();
    got.sort();
    assert_eq!(got.len(), want.len(), "{file}: flow count");
    assert_eq!(got, want, "{file}");
}

#[test]
fn begin_end_nesting_and_flows_catapult() {
    check_threads("catapult_flow.json", "catapult_flow");
    check_flows("catapult_flow.json", "catapult_flow");
}

#[test]
fn unclosed_slices_are_kept_and_marked() {
    check_threads("catapult_main_thread_has_unclosed_slices.json", "catapult_main_thread_has_unclosed_slices");
    let s = load("catapult_main_thread_has_unclosed_slices.json");
    assert!(s.meta.load.notes.iter().any(|n| n.contains("4 B event(s) without E")), "{:?}", s.meta.load.notes);
}

#[test]
fn array_without_closing_bracket() {
    check_threads("speedscope_trace-event_simple-partial.json", "speedscope_trace-event_simple-partial");
    let s = load("speedscope_trace-event_simple-partial.json");
    assert_eq!(s.meta.load.skipped.get("X event without dur"), Some(&1));
    assert!(s.meta.load.notes.iter().any(|n| n.contains("closing ']'")));
}

#[test]
fn perfetto_flow_binding_v1() {
    check_threads("perfetto_flow_events_json_v1.json", "perfetto_flow_events_json_v1");
    check_flows("perfetto_flow_events_json_v1.json", "perfetto_flow_events_json_v1");
}

#[test]
fn every_phase_lthi() {
    let s = load("catapult_lthi_cats.json.gz");
    let exp = expected("catapult_lthi_cats.chrome.json");
    let by_phase: BTreeMap<String, u64> = serde_json::from_value(exp["by_phase"].clone()).unwrap();
    assert_eq!(s.meta.load.by_phase, by_phase);
    check_flows("catapult_lthi_cats.json.gz", "catapult_lthi_cats");
    // phases Strobe does not draw are counted, not silently dropped
    for ph in ["D", "N", "O", "T", "p"] {
        let n = by_phase[ph];
        assert_eq!(s.meta.load.skipped.get(&format!("phase '{ph}' is not shown")), Some(&n), "{ph}");
    }
    assert_eq!(s.meta.load.skipped.get("X event without dur"), Some(&13));
    assert_eq!(s.meta.load.skipped.get("E without a matching B"), Some(&1));
    assert!(!s.counters.is_empty());
}

/// Count in the load summary's nesting note, e.g. `"… 135 ending after their parent …"`.
fn nesting_counts(s: &Store) -> (u64, u64) {
    let Some(n) = s.meta.load.notes.iter().find(|n| n.starts_with("improperly nested slices")) else {
        return (0, 0);
    };
    let num = |after: &str| -> u64 {
        let head = &n[..n.find(after).unwrap()];
        head.trim_end().rsplit(' ').next().unwrap().parse().unwrap()
    };
    (num(" ending after their parent"), num(" starting inside a slice"))
}

/// Depth is true nesting depth: CPU threads of real Kineto traces and a synthetic
/// trace of near-miss ends, ranges opened inside calls and chains of overlaps, against the
/// oracle's independent reading of the rule (tests/expected/README.md, "Nesting").
#[test]
fn nesting_as_it_really_is() {
    for (file, stem) in [
        ("nesting_near_miss.json", "nesting_near_miss"),
        ("gpt_train.json.gz", "gpt_train"),
        ("ddp_rank0.json.gz", "ddp_rank0"),
    ] {
        let s = load(file);
        let exp = expected(&format!("{stem}.chrome.json"));
        let mut checked = 0;
        for t in exp["threads"].as_array().unwrap() {
            let (pid, tid) = (id(&t["pid"]), id(&t["tid"]));
            let got = thread_slices(&s, &pid, &tid);
            if t["slices"] == 0 {
                continue; // only global/process-scope instants there (not thread slices in the oracle)
            }
            if got.is_empty() {
                // GPU streams (packed rows, not nesting) and process-scope instants are no CPU thread
                let gpu = s
                    .lanes
                    .iter()
                    .any(|l| matches!(&l.kind, LaneKind::GpuStream { device, .. } if IdKey::Num(*device) == pid));
                assert!(gpu || t["pid"] == "", "{file}: thread {pid}/{tid} of the oracle has no lane");
                continue;
            }
            checked += 1;
            let mut dc: BTreeMap<String, u64> = BTreeMap::new();
            for x in &got {
                *dc.entry(x.2.to_string()).or_default() += 1;
            }
            let want: BTreeMap<String, u64> = serde_json::from_value(t["depth_counts"].clone()).unwrap();
            assert_eq!(dc, want, "{file} {pid}/{tid}: depth counts");
            if let Some(list) = t.get("list") {
                let want: Vec<(i64, i64, u32, String)> = serde_json::from_value(list.clone()).unwrap();
                assert_eq!(got, want, "{file} {pid}/{tid}");
            }
            // every ProfilerStep#N of a thread on one row
            let steps: Vec<u32> = got.iter().filter(|x| x.3.starts_with("ProfilerStep#")).map(|x| x.2).collect();
            assert!(steps.windows(2).all(|w| w[0] == w[1]), "{file} {pid}/{tid}: step depths {steps:?}");
        }
        assert!(checked > 0, "{file}: no CPU thread checked");
        let n = &exp["notes"];
        let want = (
            n["nested_end_after_parent_clipped"].as_u64().unwrap_or(0),
            n["nested_mostly_after_reparented"].as_u64().unwrap_or(0),
        );
        assert_eq!(nesting_counts(&s), want, "{file}: counted in the load summary");
    }
    // the Kineto steps sit right under the script's frames, not one level deeper per step
    let s = load("gpt_train.json.gz");
    let main = thread_slices(&s, &IdKey::Num(632), &IdKey::Num(632));
    let steps: Vec<u32> = main.iter().filter(|x| x.3.starts_with("ProfilerStep#")).map(|x| x.2).collect();
    assert_eq!(steps.len(), 3);
    assert!(steps[0] <= 3, "{steps:?}");
}

/// `import_bytes` (the fuzz entry point) is the file importer on bytes: the same spans,
/// args, lanes and load summary, plain and gzipped, a gzip cut short included.
#[test]
fn import_bytes_matches_import_from_file() {
    use strobe_import::{chrome_json, Progress};
    use strobe_store::StoreBuilder;
    let open = |b: StoreBuilder, meta: &strobe_model::TraceMeta| {
        strobe_store::cache::open_built(b.finish(meta).unwrap()).unwrap()
    };
    let dir = tempfile::tempdir().unwrap();
    let gz = std::fs::read(sample("hta_sampled_rank0.json.gz")).unwrap();
    let cut = dir.path().join("cut.json.gz");
    std::fs::write(&cut, &gz[..gz.len() / 2]).unwrap();
    for path in [sample("hta_sampled_rank0.json.gz"), sample("catapult_flow.json"), cut] {
        let mut from_file = StoreBuilder::in_memory();
        let meta_file = chrome_json::import(&path, &mut from_file, &Progress::default()).unwrap();
        let mut from_bytes = StoreBuilder::in_memory();
        let bytes = std::fs::read(&path).unwrap();
        let meta_bytes = chrome_json::import_bytes(&path, &bytes, &mut from_bytes, &Progress::default()).unwrap();
        assert_eq!(
            serde_json::to_value(&meta_file.load).unwrap(),
            serde_json::to_value(&meta_bytes.load).unwrap(),
            "{}",
            path.display()
        );
        let (a, b) = (open(from_file, &meta_file), open(from_bytes, &meta_bytes));
        assert!(a.span_count() > 0);
        assert_eq!(a.span_count(), b.span_count());
        assert_eq!(a.lanes.len(), b.lanes.len());
        for s in 0..a.span_count() as u32 {
            assert_eq!(
                (a.span_start(s), a.span_end(s), a.span_name(s)),
                (b.span_start(s), b.span_end(s), b.span_name(s))
            );
            assert_eq!(a.span_args(s), b.span_args(s), "{}: span {s}", path.display());
        }
    }
}
