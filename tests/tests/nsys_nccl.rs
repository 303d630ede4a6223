//! Collectives from an nsys export's NCCL NVTX ranges (a one-rank NCCL job recorded on an H100
//! by tests/tools/record_nccl_nsys.py), against tests/expected/nsys_nccl_expected.py: with the
//! payload values exported (`--include-json=true`) each collective has the bytes the rank
//! logged, by nccl-tests' convention, and its bandwidth; without them, its size is unknown
//! and a note says how to export it.

mod common;
use common::*;
use strobe_analysis::ranks::comm_ops::{comm_ops, TimedBy};
use strobe_analysis::ranks::span_bandwidth::span_bandwidth;

fn close(got: f64, want: f64) -> bool {
    (got - want).abs() <= 1e-9 * want.abs().max(1.0)
}

#[test]
fn payload_sizes_give_bytes_and_bandwidth() {
    let want = expected("nsys_nccl.expected.json");
    let store = load("nsys_nccl_1rank_json.sqlite");
    let ops = comm_ops(&store);
    let w = want["json"].as_array().unwrap();
    assert_eq!(ops.len(), w.len(), "one collective per NCCL range");
    for (k, (op, w)) in ops.iter().zip(w).enumerate() {
        // the range launched no NCCL kernel (one rank): it is timed by the call
        assert_eq!(op.timed_by, TimedBy::Call, "#{k}");
        assert_eq!(store.span_name(op.span), w["name"].as_str().unwrap(), "#{k}");
        assert_eq!(op.group.as_deref(), w["group"].as_str(), "#{k}: communicator");
        let b = span_bandwidth(&store, op.span).unwrap_or_else(|| panic!("#{k}: no bandwidth"));
        assert_eq!(b.kind, w["kind"].as_str().unwrap(), "#{k}");
        assert_eq!(b.bytes, w["bytes"].as_u64(), "#{k}: bytes ({:?})", b.size_unknown);
        assert_eq!(b.group_size, w["group_size"].as_u64().map(|n| n as usize), "#{k}: group size");
        assert_eq!(b.dur_ns, w["dur_ns"].as_i64().unwrap(), "#{k}: duration");
        let alg = b.algbw_gbps.unwrap_or_else(|| panic!("#{k}: no algbw"));
        assert!(close(alg, w["algbw_gbps"].as_f64().unwrap()), "#{k}: algbw {alg} vs {}", w["algbw_gbps"]);
    }
    // every kind the rank logged with a range has the logged bytes, in order
    for (kind, bytes) in want["issued"].as_object().unwrap() {
        if want["issued_without_range"].get(kind).is_some() {
            continue;
        }
        let got: Vec<u64> = ops
            .iter()
            .filter_map(|o| span_bandwidth(&store, o.span))
            .filter(|b| &b.kind == kind)
            .map(|b| b.bytes.unwrap())
            .collect();
        let w: Vec<u64> = bytes.as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect();
        assert_eq!(got, w, "{kind}");
    }
    let notes = &store.meta.load.notes;
    assert!(notes.iter().any(|n| n.contains("12 NCCL collective ranges")), "{notes:?}");
    assert!(!notes.iter().any(|n| n.contains("no payload values") || n.contains("could not be read")), "{notes:?}");
}

#[test]
fn without_payload_values_sizes_are_unknown() {
    let want = expected("nsys_nccl.expected.json");
    let store = load("nsys_nccl_1rank_nojson.sqlite");
    let ops = comm_ops(&store);
    let w = want["nojson"].as_array().unwrap();
    assert_eq!(ops.len(), w.len());
    for (op, w) in ops.iter().zip(w) {
        let b = span_bandwidth(&store, op.span).unwrap();
        assert_eq!(b.kind, w["kind"].as_str().unwrap());
        assert_eq!(b.bytes, None);
        assert!(b.size_unknown.is_some());
        assert_eq!(b.algbw_gbps, None);
        assert_eq!(b.dur_ns, w["dur_ns"].as_i64().unwrap());
    }
    let notes = &store.meta.load.notes;
    assert!(
        notes
            .iter()
            .any(|n| n.contains("12 NCCL collective ranges carry no payload values")
                && n.contains("--include-json=true")),
        "{notes:?}"
    );
}

/// A payload that is not JSON, lacks the size or gives a negative one: the collective is kept,
/// its size unknown, and a note names the first problem.
#[test]
fn bad_payloads_give_notes() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("bad.sqlite");
    std::fs::copy(sample("nsys_nccl_1rank_json.sqlite"), &p).unwrap();
    {
        let c = rusqlite::Connection::open(&p).unwrap();
        let ids: Vec<i64> = c
            .prepare("SELECT e.rowid FROM NVTX_EVENTS e JOIN StringIds s ON s.id = e.textId WHERE s.value = 'ncclAllReduce' ORDER BY e.start")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        for (id, text) in
            ids.iter().zip(["not json {", r#"{"NCCL communicator ID":1}"#, r#"{"Message size [bytes]":-4}"#])
        {
            c.execute("UPDATE NVTX_EVENTS SET jsonText = ?1 WHERE rowid = ?2", rusqlite::params![text, id]).unwrap();
        }
    }
    let store = load_in(&p, dir.path()).unwrap();
    let ops = comm_ops(&store);
    assert_eq!(ops.len(), 12);
    let unknown = ops.iter().filter(|o| span_bandwidth(&store, o.span).unwrap().bytes.is_none()).count();
    assert_eq!(unknown, 3);
    let notes = &store.meta.load.notes;
    assert!(
        notes.iter().any(|n| n.contains("3 NCCL collective ranges had a payload that could not be read")
            && n.contains("not a JSON object")),
        "{notes:?}"
    );
}
