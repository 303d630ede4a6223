//! Flight-recorder dumps recorded on gloo with one fault each (tests/tools/record_flight_recorder.py),
//! matched across ranks and compared with the independent oracle
//! (tests/expected/flight_recorder_expected.py); and broken or hostile dumps, which give a
//! note or an error naming the file, never a panic.

mod common;
use common::*;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use strobe_analysis::flight_recorder::{analyse, to_text, FrReport};
use strobe_import::flight_recorder::{dumps_in, import, import_bytes};
use strobe_model::flight_recorder::FrDump;

/// The recorded faults, and a synthetic set of point-to-point faults in NCCL's layout
/// (tests/tools/make_fr_p2p_fixture.py: gloo records no P2P entries), gzipped and with ranks
/// named inside the dumps.
const FAULTS: [&str; 6] = ["gloo_missing", "gloo_desync", "gloo_size", "gloo_p2p", "gloo_desync_json", "synthetic_p2p"];

fn dumps(fault: &str) -> Vec<FrDump> {
    let dir = sample(&format!("flight_recorder/{fault}"));
    let files = dumps_in(&dir).unwrap();
    assert!(!files.is_empty(), "{fault}: no dumps found");
    files.iter().map(|f| import(f).unwrap_or_else(|e| panic!("{e}"))).collect()
}

/// The report in the oracle's shape (dtype majorities are left out: the two languages print a
/// list of strings differently, and the ranks already say who is odd).
fn oracle_shape(r: &FrReport) -> Value {
    let mut mismatches: Vec<Value> = r
        .mismatches
        .iter()
        .map(|m| {
            let mut v =
                json!({"group": m.group, "seq": m.seq, "kind": m.kind, "ranks": m.ranks, "majority": m.majority});
            // a transfer's size and dtype values are each end's own: the ranks say who is odd
            if m.kind == "dtype" || (m.p2p && m.kind == "size") {
                v.as_object_mut().unwrap().remove("majority");
            }
            if m.p2p {
                v["p2p"] = json!(true);
            }
            v
        })
        .collect();
    mismatches.sort_by_key(|m| {
        (
            m["group"].as_str().unwrap().to_string(),
            m["seq"].as_i64(),
            m["kind"].to_string(),
            m.get("p2p").is_some(),
            m["ranks"].as_array().unwrap().iter().map(|x| x.as_i64()).collect::<Vec<_>>(),
        )
    });
    json!({
        "p2p_matched": r.p2p_matched,
        "ranks": r.ranks.iter().map(|k| k.rank).collect::<Vec<_>>(),
        "missing_dumps": r.missing_dumps,
        "groups": r.groups.iter().map(|g| (g.name.clone(), json!(g.members))).collect::<serde_json::Map<_, _>>(),
        "mismatches": mismatches,
        "last_completed_everywhere": r.last_completed_everywhere.iter()
            .map(|l| json!({"group": l.group, "seq": l.seq, "op": l.op})).collect::<Vec<_>>(),
        "stuck": r.stuck.iter().map(|s| json!({
            "group": s.group, "seq": s.seq, "op": s.op, "arrived": s.arrived, "not_completed": s.not_completed,
            "not_arrived": s.not_arrived.iter().map(|b| json!({"rank": b.rank, "last_seq": b.last_seq})).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    })
}

fn without_dtype_majority(mut v: Value) -> Value {
    for m in v["mismatches"].as_array_mut().unwrap() {
        if m["kind"] == "dtype" {
            m.as_object_mut().unwrap().remove("majority");
        }
    }
    v
}

#[test]
fn every_recorded_fault_matches_the_oracle() {
    for fault in FAULTS {
        let r = analyse(&dumps(fault));
        let want = without_dtype_majority(expected(&format!("fr_{fault}.flight_recorder.json")));
        assert_eq!(oracle_shape(&r), want, "{fault}");
        assert!(!r.mismatches.is_empty(), "{fault}: every recording holds a fault");
    }
}

#[test]
fn the_verdicts_name_the_fault() {
    let text = |f: &str| to_text(&analyse(&dumps(f)));
    assert!(text("gloo_missing").contains("at seq 7 on group 0 (default_pg): rank 3 never arrived"));
    assert!(text("gloo_desync")
        .contains("at seq 7 on group 0 (default_pg): desync: rank 1 called all_reduce, the other 3 all_gather"));
    let size = text("gloo_size");
    assert!(
        size.contains("size mismatch: rank 2 passed in [[19]] out [[19]], the other 2 in [[16]] out [[16]]"),
        "{size}"
    );
    assert!(size.contains("no dump from rank 1"), "{size}");
    assert!(text("gloo_p2p").contains("ranks 0, 1 never arrived"));
    let p2p = text("synthetic_p2p");
    assert!(
        p2p.contains("at p2p seq 4 on group 1 (pp_0_1): rank 1 never posted its end of rank 0's send to 1"),
        "{p2p}"
    );
    assert!(
        p2p.contains(
            "at p2p seq 3 on group 1 (pp_0_1): size mismatch: rank 0 send to 1 [[32]], rank 1 recv from 0 [[16]]"
        ),
        "{p2p}"
    );
    assert!(p2p.contains("3 transfer(s) matched send to receive, 4 odd"), "{p2p}");
}

#[test]
fn pickle_and_json_dumps_of_one_fault_read_alike() {
    let p = dumps("gloo_desync");
    let j = dumps("gloo_desync_json");
    assert!(p.iter().all(|d| d.form == "pickle") && j.iter().all(|d| d.form == "json"));
    // the pickle carries Python frames, the JSON form none
    assert!(p[0].entries[0].frames.iter().any(|f| f.name == "all_reduce"));
    let (rp, rj) = (analyse(&p), analyse(&j));
    assert_eq!(rp.mismatches, rj.mismatches);
    assert_eq!(rp.last_completed_everywhere, rj.last_completed_everywhere);
}

#[test]
fn a_dump_is_detected_by_content_not_name() {
    let d = sample("flight_recorder/gloo_missing/rank_0");
    assert_eq!(strobe_import::detect(&d).unwrap(), Some(strobe_import::Format::FlightRecorder));
    let j = sample("flight_recorder/gloo_desync_json/rank_0");
    assert_eq!(strobe_import::detect(&j).unwrap(), Some(strobe_import::Format::FlightRecorder));
    // a memory snapshot pickle stays one
    assert_eq!(strobe_import::detect(&sample("mem_oom.pickle")).unwrap(), Some(strobe_import::Format::MemorySnapshot));
}

// ---- bad inputs ----

fn json_dump() -> Value {
    serde_json::from_slice(&std::fs::read(sample("flight_recorder/gloo_desync_json/rank_1")).unwrap()).unwrap()
}

fn read_json(v: &Value) -> Result<FrDump, String> {
    import_bytes(Path::new("bad/rank_1"), &serde_json::to_vec(v).unwrap(), 1).map_err(|e| e.to_string())
}

fn err_bytes(bytes: &[u8]) -> String {
    let e = import_bytes(Path::new("bad/rank_5"), bytes, 5).expect_err("read without error").to_string();
    assert!(e.contains("bad/rank_5"), "error does not name the file: {e}");
    e
}

#[test]
fn another_version_and_unknown_fields_are_notes() {
    let mut v = json_dump();
    v["version"] = json!("3.1");
    v["new_top_field"] = json!({"x": 1});
    v["entries"][0]["new_entry_field"] = json!([1, 2]);
    let d = read_json(&v).unwrap();
    let notes = d.notes.join("\n");
    assert!(notes.contains("\"3.1\" is not a 2.x layout"), "{notes}");
    assert!(notes.contains("unknown top-level fields ignored: new_top_field"), "{notes}");
    assert!(notes.contains("unknown entry fields ignored: new_entry_field"), "{notes}");
    assert_eq!(d.entries.len(), json_dump()["entries"].as_array().unwrap().len());
}

#[test]
fn an_entry_without_its_fields_is_left_out_with_a_note() {
    let mut v = json_dump();
    v["entries"][2].as_object_mut().unwrap().remove("state");
    v["entries"][3]["collective_seq_id"] = json!("not a number");
    v["entries"][4] = json!(17);
    let d = read_json(&v).unwrap();
    let notes = d.notes.join("\n");
    assert!(notes.contains("entry 2 left out: state None"), "{notes}");
    assert!(notes.contains("entry 3 left out: no `collective_seq_id`"), "{notes}");
    assert!(notes.contains("entry 4 left out: not a dict"), "{notes}");
    assert!(read_json(&json!({"version": "2.10", "entries": 5})).unwrap_err().contains("`entries` is not a list"));
    assert!(read_json(&json!([1, 2])).unwrap_err().contains("top level is not a dict"));
}

#[test]
fn a_group_that_names_ranks_out_of_range_is_ranks_without_a_dump() {
    let dumps: Vec<FrDump> = dumps("gloo_missing")
        .into_iter()
        .map(|mut d| {
            d.groups = vec![strobe_model::flight_recorder::FrGroup {
                name: "1".into(),
                desc: "dp_replica_0".into(),
                ranks: vec![0, 1, 4096],
            }];
            d
        })
        .collect();
    let r = analyse(&dumps);
    assert!(r.missing_dumps.contains(&4096));
    assert_eq!(r.groups.iter().find(|g| g.name == "1").unwrap().members_from, "pg_config");
    // a group rank list that is not one
    let mut v = json_dump();
    v["pg_config"] = json!({"7": {"name": "7", "desc": "pp", "ranks": "[0, -3, x]"}});
    let d = read_json(&v).unwrap();
    assert!(d.notes.iter().any(|n| n.contains("group \"7\": ranks")), "{:?}", d.notes);
}

#[test]
fn truncated_hostile_and_garbage_dumps_are_errors_naming_the_file() {
    let real = std::fs::read(sample("flight_recorder/gloo_missing/rank_0")).unwrap();
    for cut in [3, 40, real.len() / 2, real.len() - 1] {
        let e = err_bytes(&real[..cut]);
        assert!(e.contains("pickle byte"), "{e}");
    }
    // a pickle that would call os.system: refused, never run
    // the real head up to the `pg_config` key (43 bytes), then a GLOBAL where its value goes
    let mut hostile = real[..43].to_vec();
    hostile.extend_from_slice(b"cos\nsystem\n(S'touch /tmp/strobe_pwned'\ntR.");
    let e = err_bytes(&hostile);
    assert!(e.contains("GLOBAL") || e.contains("refused"), "{e}");
    assert!(!Path::new("/tmp/strobe_pwned").exists());
    let e = err_bytes(b"{\"version\": \"2.10\", \"entries\": [{\"record_id\": 1,");
    assert!(e.contains("line 1 column"), "{e}");
    err_bytes(b"{\"pg_config\": {}}");
}

#[test]
fn every_prefix_of_a_real_dump_reads_or_errs_without_panicking() {
    for f in ["gloo_desync/rank_1", "gloo_desync_json/rank_1"] {
        let real = std::fs::read(sample(&format!("flight_recorder/{f}"))).unwrap();
        for cut in (0..real.len()).step_by(7) {
            let _ = import_bytes(Path::new("cut"), &real[..cut], 0);
        }
    }
}

#[test]
fn a_file_name_without_a_rank_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let p: PathBuf = dir.path().join("dump.pickle");
    std::fs::copy(sample("flight_recorder/gloo_missing/rank_0"), &p).unwrap();
    let e = import(&p).unwrap_err().to_string();
    assert!(e.contains("dump.pickle") && e.contains("no rank in the file name"), "{e}");
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut z = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    z.write_all(bytes).unwrap();
    z.finish().unwrap()
}

#[test]
fn gzipped_dumps_and_ranks_named_inside_the_dump() {
    let dir = tempfile::tempdir().unwrap();
    // a gzipped pickle: its rank from the file name
    let pk = std::fs::read(sample("flight_recorder/gloo_desync/rank_2")).unwrap();
    let p = dir.path().join("rank_2.pickle.gz");
    std::fs::write(&p, gzip(&pk)).unwrap();
    assert_eq!(strobe_import::detect(&p).unwrap(), Some(strobe_import::Format::FlightRecorder));
    let d = import(&p).unwrap();
    assert_eq!((d.rank, d.rank_from.as_str(), d.form.as_str()), (2, "file name", "pickle"));
    let plain = import(&sample("flight_recorder/gloo_desync/rank_2")).unwrap();
    assert_eq!(d.entries, plain.entries);
    // a gzipped JSON dump whose name holds no rank, with its own `rank` field
    let mut v = json_dump();
    v["rank"] = json!(1);
    let j = dir.path().join("trace.json.gz");
    std::fs::write(&j, gzip(&serde_json::to_vec(&v).unwrap())).unwrap();
    assert_eq!(strobe_import::detect(&j).unwrap(), Some(strobe_import::Format::FlightRecorder));
    let d = import(&j).unwrap();
    assert_eq!((d.rank, d.rank_from.as_str(), d.form.as_str()), (1, "dump", "json"));
    // the field wins over a name that disagrees, with a note
    let k = dir.path().join("rank_7.json");
    std::fs::write(&k, serde_json::to_vec(&v).unwrap()).unwrap();
    let d = import(&k).unwrap();
    assert_eq!(d.rank, 1);
    assert!(d.notes.iter().any(|n| n.contains("says rank 1 but its file name ends with 7")), "{:?}", d.notes);
    // a folder holds all three; the report reads them as ranks 1 and 2 (rank 1 twice: noted)
    let found = dumps_in(dir.path()).unwrap();
    assert_eq!(found.len(), 3);
    let all: Vec<FrDump> = found.iter().map(|f| import(f).unwrap()).collect();
    let r = analyse(&all);
    assert_eq!(r.ranks.iter().map(|k| k.rank).collect::<Vec<_>>(), vec![1, 2]);
    assert!(r.notes.iter().any(|n| n.contains("two dumps for rank 1")), "{:?}", r.notes);
    // no rank anywhere: an error naming the file; a rank that is not one: a note
    let mut none = json_dump();
    none.as_object_mut().unwrap().remove("rank");
    let n = dir.path().join("trace.json");
    std::fs::write(&n, serde_json::to_vec(&none).unwrap()).unwrap();
    let e = import(&n).unwrap_err().to_string();
    assert!(e.contains("trace.json") && e.contains("no rank"), "{e}");
    v["rank"] = json!([3]);
    let d = read_json(&v).unwrap();
    assert!(d.notes.iter().any(|n| n.contains("`rank` is not a rank number")), "{:?}", d.notes);
    // a gzip that breaks off is an error naming the file
    let z = gzip(&pk);
    let e = err_bytes(&z[..z.len() / 2]);
    assert!(e.contains("gzip"), "{e}");
}

/// A one-rank NCCL job's dump with no fault (an H100, `record_flight_recorder.py --backend nccl
/// --fault none --world 1`): everything matches the oracle, with nothing stuck.
#[test]
fn a_clean_nccl_dump_has_no_fault() {
    let d = dumps("nccl_none");
    assert_eq!(d.len(), 1);
    let r = analyse(&d);
    assert_eq!(oracle_shape(&r), without_dtype_majority(expected("fr_nccl_none.flight_recorder.json")));
    assert!(r.mismatches.is_empty() && r.stuck.is_empty(), "{}", to_text(&r));
}
