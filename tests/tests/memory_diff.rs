//! Two snapshots compared (`strobe diff A.pickle B.pickle`): the same model recorded at batch 8
//! and 16, each peak's parts from the independent oracle
//! (`tests/expected/memory_categories_expected.py`), the deltas theirs.

mod common;
use common::{expected, sample};
use strobe_analysis::memory::{analyse_with_breakdown, diff};
use strobe_import::memory_snapshot;

#[test]
fn batch_8_against_16_per_category_and_source_line() {
    let open = |stem: &str| memory_snapshot::import(&sample(&format!("{stem}.pickle"))).unwrap();
    let (a, b) = (open("mem_adamw_b8"), open("mem_adamw_b16"));
    let (ra, rb) = (analyse_with_breakdown(&a), analyse_with_breakdown(&b));
    let d = diff::diff("b8", (&a, &ra), "b16", (&b, &rb));
    let dev = &d.devices[0];
    let wa = &expected("mem_adamw_b8.categories.json")["devices"]["0"]["peak"];
    let wb = &expected("mem_adamw_b16.categories.json")["devices"]["0"]["peak"];
    let peak = |w: &serde_json::Value| w["allocated_bytes"].as_i64().unwrap();
    assert_eq!((dev.peak_allocated_a, dev.peak_allocated_b), (peak(wa), peak(wb)));
    assert_eq!(dev.peak_allocated_delta, peak(wb) - peak(wa));
    assert!(dev.peak_allocated_delta > 0, "a larger batch holds more at its peak");
    let cat = |w: &serde_json::Value, c: &str| w["categories"].get(c).map_or(0, |v| v[0].as_i64().unwrap());
    for c in &dev.categories {
        let n = c.category.as_str();
        assert_eq!((c.a_bytes, c.b_bytes, c.delta), (cat(wa, n), cat(wb, n), cat(wb, n) - cat(wa, n)), "{n}");
    }
    // the parameters and the optimizer state do not grow with the batch; the activations do
    let delta = |n: &str| dev.categories.iter().find(|c| c.category.as_str() == n).unwrap().delta;
    assert_eq!((delta("parameter"), delta("optimizer_state")), (0, 0));
    assert!(delta("activation") > 0);
    let src = |w: &serde_json::Value, f: &str| w["by_source"].get(f).map_or(0, |v| v[0].as_i64().unwrap());
    let mut frames: Vec<&String> =
        wa["by_source"].as_object().unwrap().keys().chain(wb["by_source"].as_object().unwrap().keys()).collect();
    frames.sort();
    frames.dedup();
    assert_eq!(dev.by_source.len(), frames.len());
    for s in &dev.by_source {
        assert_eq!((s.a_bytes, s.b_bytes), (src(wa, &s.frame), src(wb, &s.frame)), "{}", s.frame);
        assert_eq!(s.delta, s.b_bytes - s.a_bytes);
    }
    // both lists add up to the difference of the peaks
    assert_eq!(dev.categories.iter().map(|c| c.delta).sum::<i64>(), dev.peak_allocated_delta);
    assert_eq!(dev.by_source.iter().map(|s| s.delta).sum::<i64>(), dev.peak_allocated_delta);
    assert!(dev.by_source.windows(2).all(|w| w[0].delta.abs() >= w[1].delta.abs()), "largest change first");
    // segments: each side's own, those only one side has summed
    let segs = |s: &strobe_model::memory::MemorySnapshot| s.segments.iter().filter(|g| g.device == 0).count();
    assert_eq!((dev.segments.a_count, dev.segments.b_count), (segs(&a), segs(&b)));
    let added: u64 = dev.segments.added.iter().map(|g| g.total_size).sum();
    assert_eq!(added, dev.segments.added_bytes);
    let total = |s: &strobe_model::memory::MemorySnapshot| -> i128 {
        s.segments.iter().filter(|g| g.device == 0).map(|g| g.total_size as i128).sum()
    };
    assert_eq!(total(&b) - total(&a), dev.segments.added_bytes as i128 - dev.segments.removed_bytes as i128);
    let fig = |n: &str| dev.side_by_side.iter().find(|f| f.name == n).unwrap();
    assert_eq!(fig("reserved_bytes").a, ra.devices[0].reserved_bytes as f64);
    assert_eq!(fig("fragmentation").b, rb.devices[0].fragmentation);
}
