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
        let why = b.size_unknown.as_deref().unwrap_or_default();
        assert!(why.contains("--include-json=true"), "{why}");
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
    let whys: Vec<String> = ops.iter().filter_map(|o| span_bandwidth(&store, o.span).unwrap().size_unknown).collect();
    assert!(whys.iter().any(|w| w.contains("not a JSON object")), "{whys:?}");
    assert!(whys.iter().any(|w| w.contains("no \"Message size [bytes]\"")), "{whys:?}");
    assert!(whys.iter().any(|w| w.contains("-4")), "{whys:?}");
    let notes = &store.meta.load.notes;
    assert!(
        notes.iter().any(|n| n.contains("3 NCCL collective ranges had a payload that could not be read")
            && n.contains("not a JSON object")),
        "{notes:?}"
    );
}

/// An NCCL kernel launched inside a range (here added to a copy of the export: a one-rank
/// NCCL launches none) is the collective's: it times the collective, and its own details
/// carry the range's bytes.
#[test]
fn kernels_launched_inside_the_range_take_its_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("kernel.sqlite");
    std::fs::copy(sample("nsys_nccl_1rank_json.sqlite"), &p).unwrap();
    // the first all-gather range runs 7823489522..7823531440 on its thread; correlation 4239 is
    // a runtime call inside it that launched nothing
    let (k_start, k_end) = (7_823_500_000_i64, 7_823_528_000_i64);
    {
        let c = rusqlite::Connection::open(&p).unwrap();
        let corr: i64 = c
            .query_row(
                "SELECT correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE correlationId = 4239 AND start >= 7823489522 AND end <= 7823531440",
                [],
                |r| r.get(0),
            )
            .unwrap();
        let id: i64 = c.query_row("SELECT max(id) + 1 FROM StringIds", [], |r| r.get(0)).unwrap();
        c.execute("INSERT INTO StringIds (id, value) VALUES (?1, 'ncclDevKernel_AllGather_RING_LL')", [id]).unwrap();
        c.execute_batch("CREATE TEMP TABLE k AS SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL LIMIT 1").unwrap();
        c.execute(
            "UPDATE k SET correlationId = ?1, shortName = ?2, demangledName = ?2, mangledName = ?2, start = ?3, end = ?4",
            rusqlite::params![corr, id, k_start, k_end],
        )
        .unwrap();
        c.execute_batch("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL SELECT * FROM k").unwrap();
    }
    let store = load_in(&p, dir.path()).unwrap();
    let ops = comm_ops(&store);
    assert_eq!(ops.len(), 12, "the kernel is the range's, not an op of its own");
    let ag: Vec<_> = ops.iter().filter(|o| store.span_name(o.span) == "ncclAllGather").collect();
    assert_eq!(ag[0].timed_by, TimedBy::Kernel);
    assert_eq!(ag[0].end_ns - ag[0].start_ns, k_end - k_start);
    assert!(ag[1..].iter().all(|o| o.timed_by == TimedBy::Call));
    let kernel = (0..store.span_count() as u32)
        .find(|&s| store.span_name(s) == "ncclDevKernel_AllGather_RING_LL")
        .expect("the kernel");
    let b = span_bandwidth(&store, kernel).unwrap();
    assert_eq!((b.kind.as_str(), b.bytes, b.group_size), ("all_gather", Some(1_048_576), Some(1)));
    assert_eq!(b.dur_ns, k_end - k_start);
    assert!(close(b.algbw_gbps.unwrap(), 1_048_576.0 / 28_000.0));
}
