#![allow(dead_code)]
//! Helpers shared by the end-to-end tests.

use std::path::{Path, PathBuf};

pub fn sample(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join("sample-traces").join(name)
}

pub fn expected(name: &str) -> serde_json::Value {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("expected").join(name);
    serde_json::from_slice(&std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))).unwrap()
}

/// Loads a file into a store cached in `dir`.
pub fn load_in(path: &Path, dir: &Path) -> Result<strobe_store::Store, strobe_import::ImportError> {
    let opts = strobe_import::LoadOptions::cached_in(dir.to_path_buf());
    strobe_import::load(path, &opts)
}

pub fn load(name: &str) -> strobe_store::Store {
    let dir = tempfile::tempdir().unwrap();
    load_in(&sample(name), dir.path()).unwrap_or_else(|e| panic!("{e}"))
}

/// Files left in a cache dir (a failed load must leave none).
pub fn cache_files(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|r| r.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default()
}

/// Every query the analyses make of a store, asked of both: `done` the reference, `pending`
/// a store made another way (before its file is written, or read from compressed sections).
pub fn assert_same_reads(done: &strobe_store::Store, pending: &strobe_store::Store, what: &str) {
    assert_eq!(done.span_count(), pending.span_count(), "{what}");
    assert_eq!(done.span_metas(), pending.span_metas(), "{what}");
    assert_eq!(done.span_times(), pending.span_times(), "{what}");
    for s in 0..done.span_count() as u32 {
        assert_eq!(done.span_args(s), pending.span_args(s), "{what}: span {s}");
        assert_eq!(done.span_name(s), pending.span_name(s), "{what}: span {s}");
    }
    assert_eq!(done.string_count(), pending.string_count(), "{what}");
    assert_eq!(done.flows(), pending.flows(), "{what}");
    assert_eq!(done.launch_table(), pending.launch_table(), "{what}");
    for s in (0..done.span_count() as u32).step_by(7) {
        let a: Vec<_> = done.flows_from(s).collect();
        let b: Vec<_> = pending.flows_from(s).collect();
        assert_eq!(a, b, "{what}: flows from {s}");
    }
    let (a, b) = (serde_json::to_value(&done.meta).unwrap(), serde_json::to_value(&pending.meta).unwrap());
    assert_eq!(a, b, "{what}");
    assert_eq!(serde_json::to_value(&done.lanes).unwrap(), serde_json::to_value(&pending.lanes).unwrap());
    assert_eq!(serde_json::to_value(&done.names).unwrap(), serde_json::to_value(&pending.names).unwrap());
    assert_eq!(done.counters.len(), pending.counters.len(), "{what}");
    for (c, d) in done.counters.iter().zip(&pending.counters) {
        assert_eq!(done.counter_points(c), pending.counter_points(d), "{what}: counter {}", c.name);
    }
    for lane in 0..done.lanes.len() as u32 {
        // read before the lane view decodes the lane: a scan's three columns, and one member's
        // span alone, as the timeline reads it
        let s = pending.lane_spans(lane);
        let whole = done.lane_view(lane);
        assert_eq!((s.starts, s.ends, s.span), (whole.starts, whole.ends, whole.span), "{what}: lane {lane}");
        for (m, &span) in whole.span.iter().enumerate().step_by(13) {
            assert_eq!(pending.member_span(lane, m as u32), Some(span), "{what}: lane {lane} member {m}");
        }
        assert_eq!(pending.member_span(lane, whole.span.len() as u32), None, "{what}: lane {lane}");
        let (a, b) = (done.lane_view(lane), pending.lane_view(lane));
        assert_eq!((a.starts, a.ends, a.max_end), (b.starts, b.ends, b.max_end), "{what}: lane {lane}");
        assert_eq!((a.span, a.depth, a.max_depth), (b.span, b.depth, b.max_depth), "{what}: lane {lane}");
        // below the finest stored level both fold the raw spans: the same items
        let (Some(&t0), Some(&t1)) = (a.starts.first(), a.max_end.last()) else { continue };
        let mut x = Vec::new();
        let mut y = Vec::new();
        done.lod_query(lane, t0, t1 + 1, 100, |d, it| x.push((d, it)));
        pending.lod_query(lane, t0, t1 + 1, 100, |d, it| y.push((d, it)));
        assert_eq!(x, y, "{what}: lane {lane}");
        // coarser, the pending store folds the spans directly: every span is still counted
        let (mut n_done, mut n_pending) = (0u64, 0u64);
        let coarse = ((t1 - t0) / 1000).max(1 << 12);
        done.lod_query(lane, t0, t1 + 1, coarse, |_, it| n_done += it.count as u64);
        pending.lod_query(lane, t0, t1 + 1, coarse, |_, it| n_pending += it.count as u64);
        assert_eq!(n_done, n_pending, "{what}: lane {lane}");
    }
}
