//! Process groups, peers, pipelines on real groups and collective bandwidth, against
//! tests/expected/comm_expected.py: the recordings of tests/tools/record_comm_groups.py (per-pair
//! groups, pipeline × data parallel, torch.distributed.pipelining's three schedules), whose
//! truth is each rank's own schedule log, and the DDP pair, from its raw kernel args.

mod common;
use common::*;
use serde_json::Value;
use std::collections::BTreeMap;
use strobe_analysis::ranks::align::Alignment;
use strobe_analysis::ranks::report::{multi_rank_report, MultiRankReport};
use strobe_store::Store;

fn i(v: &Value) -> i64 {
    v.as_i64().unwrap_or_else(|| panic!("not an integer: {v}"))
}

fn ints(v: &Value) -> Vec<i64> {
    v.as_array().unwrap().iter().map(i).collect()
}

fn report(name: &str, n: usize) -> MultiRankReport {
    let stores: Vec<Store> = (0..n).map(|r| load(&format!("{name}_rank{r}.json.gz"))).collect();
    let names: Vec<String> = (0..n).map(|r| format!("{name}_rank{r}")).collect();
    let traces: Vec<(&str, &Store)> = names.iter().map(|s| s.as_str()).zip(&stores).collect();
    multi_rank_report(&traces, Alignment::CollectiveEnd, 5)
}

fn check_pipeline(name: &str, r: &MultiRankReport, want: &Value) {
    let p = r.pipeline.as_ref().unwrap_or_else(|| panic!("{name}: no pipeline"));
    let lines = want["pipelines"].as_array().unwrap();
    assert_eq!(p.pipelines.len(), lines.len(), "{name}: pipelines");
    for (got, w) in p.pipelines.iter().zip(lines) {
        assert_eq!(got.stage_order, ints(&w["stage_order"]), "{name}: stage order");
        let dp: Vec<Vec<i64>> = w["dp_peers"].as_array().unwrap().iter().map(ints).collect();
        assert_eq!(got.dp_peers, dp, "{name}: data-parallel peers");
    }
    assert_eq!(p.schedule.as_str(), want["schedule"].as_str().unwrap(), "{name}: schedule");
    assert_eq!(p.microbatches as i64, i(&want["microbatches"]), "{name}: microbatches");
    assert_eq!(p.virtual_stages as i64, i(&want["virtual_stages"]), "{name}: virtual stages");
    assert!(p.peer_notes.is_empty(), "{name}: {:?}", p.peer_notes);
    assert!(p.peers.iter().all(|x| x.peer.is_some()), "{name}: every peer resolved");
    if let Some(peers) = want.get("peers") {
        // per rank, direction and global peer: how many transfers
        let mut got: BTreeMap<(i64, &str, i64), usize> = BTreeMap::new();
        for x in &p.peers {
            let dir = if x.dir == strobe_analysis::pipeline::p2p::Dir::Send { "send" } else { "recv" };
            *got.entry((x.rank, dir, x.peer.unwrap())).or_default() += x.ops;
        }
        let want: BTreeMap<(i64, &str, i64), usize> = peers
            .as_array()
            .unwrap()
            .iter()
            .map(|w| ((i(&w["rank"]), w["dir"].as_str().unwrap(), i(&w["peer"])), i(&w["ops"]) as usize))
            .collect();
        assert_eq!(got, want, "{name}: peers");
    }
    if let Some(links) = want.get("links") {
        let got: Vec<Vec<i64>> = {
            let mut v: Vec<Vec<i64>> = p.p2p.iter().map(|l| vec![l.from_rank, l.to_rank]).collect();
            v.sort();
            v
        };
        let w: Vec<Vec<i64>> = links.as_array().unwrap().iter().map(ints).collect();
        assert_eq!(got, w, "{name}: links");
    }
}

fn check_collectives(name: &str, r: &MultiRankReport, want: &Value) {
    // per group description, kind and bytes: instances and the group's ranks
    let desc: BTreeMap<&str, &str> =
        r.process_groups.iter().map(|g| (g.name.as_str(), g.desc.as_deref().unwrap_or(""))).collect();
    let mut got: BTreeMap<(String, String, u64), (Vec<i64>, i64)> = BTreeMap::new();
    for c in &r.group_collectives {
        let e = got
            .entry((desc[c.group.as_str()].to_string(), c.kind.clone(), c.bytes.unwrap()))
            .or_insert((c.ranks.clone(), 0));
        e.1 += 1;
    }
    for w in want["collectives"].as_array().unwrap() {
        let key =
            (w["group"].as_str().unwrap().to_string(), w["kind"].as_str().unwrap().to_string(), i(&w["bytes"]) as u64);
        let g = got.get(&key).unwrap_or_else(|| panic!("{name}: no instance of {key:?}; have {got:?}"));
        assert_eq!(g.0, ints(&w["ranks"]), "{name}: {key:?} ranks");
        assert_eq!(g.1, i(&w["instances"]), "{name}: {key:?} instances");
    }
    // and nothing else: no instance on a group the logs do not name
    let want_total: i64 = want["collectives"].as_array().unwrap().iter().map(|w| i(&w["instances"])).sum();
    assert_eq!(r.group_collectives.len() as i64, want_total, "{name}: instances in all; have {got:?}");
}

#[test]
fn per_pair_groups_pipeline_and_collectives() {
    let want = expected("comm.expected.json");
    let r = report("pairs", 4);
    check_pipeline("pairs", &r, &want["pairs"]);
    check_collectives("pairs", &r, &want["pairs"]);
    // four groups declared: the world and one per stage pair
    assert_eq!(r.process_groups.len(), 4);
    assert!(r.group_collectives.iter().all(|c| c.group_from == "inferred"), "gloo records no group");
}

#[test]
fn pipeline_times_data_parallel() {
    let want = expected("comm.expected.json");
    let r = report("ppdp", 8);
    check_pipeline("ppdp", &r, &want["ppdp"]);
    // gloo records no group: each collective's group is inferred, and must be the one the
    // ranks' logs name (the data-parallel groups of the two pipelines run alike collectives
    // at once; the order within each group tells them apart)
    check_collectives("ppdp", &r, &want["ppdp"]);
    assert!(r.group_collectives.iter().all(|c| c.group_from == "inferred"));
    assert!(r.comm_notes.is_empty(), "{:?}", r.comm_notes);
    let p = r.pipeline.as_ref().unwrap();
    assert_eq!(p.pipelines[0].dp_groups[0].as_deref(), Some("7 (dp_stage0)"));
    // the world all-reduce is matched on all eight ranks, twice
    let world: Vec<_> = r.group_collectives.iter().filter(|c| c.group == "0").collect();
    assert_eq!(world.len(), 2);
    assert!(world.iter().all(|c| c.ranks == (0..8).collect::<Vec<i64>>() && c.bytes == Some(4096)));
}

#[test]
fn pipelining_schedules() {
    let want = expected("comm.expected.json");
    for s in ["gpipe", "1f1b", "interleaved"] {
        let name = format!("pp_{s}");
        let r = report(&name, 4);
        check_pipeline(&name, &r, &want[name.as_str()]);
    }
}

#[test]
fn ddp_pair_bandwidth() {
    let want = expected("comm.expected.json");
    let stores = [load("ddp_rank0.json.gz"), load("ddp_rank1.json.gz")];
    let r = multi_rank_report(&[("ddp_rank0", &stores[0]), ("ddp_rank1", &stores[1])], Alignment::CollectiveEnd, 5);
    let w = want["ddp"].as_array().unwrap();
    assert_eq!(r.group_collectives.len(), w.len());
    for (c, w) in r.group_collectives.iter().zip(w) {
        assert_eq!(c.group, "0");
        assert_eq!(c.group_from, "recorded");
        assert_eq!(c.occurrence as i64, i(&w["k"]));
        assert_eq!(c.bytes, Some(i(&w["bytes"]) as u64));
        assert_eq!(c.group_size as i64, i(&w["group_size"]));
        assert_eq!(c.transfer_ns, i(&w["transfer_ns"]));
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs().max(1.0);
        assert!(close(c.algbw_gbps.unwrap(), w["algbw_gbps"].as_f64().unwrap()));
        assert!(close(c.busbw_gbps.unwrap(), w["busbw_gbps"].as_f64().unwrap()));
    }
    // one group, two size classes of all-reduce, NVLink 4 for an H200, nobody slow
    assert!(r.comm_groups.iter().all(|g| g.group == "0" && g.kind == "all_reduce" && g.link == "NVLink 4"));
    let total: usize = r.comm_groups.iter().map(|g| g.count).sum();
    assert_eq!(total, w.len());
    assert!(r.slow_links.is_empty());
    assert!(r.comm_notes.is_empty(), "{:?}", r.comm_notes);
}

#[test]
fn summaries_give_the_same_groups_and_bandwidth() {
    use strobe_analysis::ranks::report::{multi_rank_report_with, RankOptions};
    let stores: Vec<Store> = (0..8).map(|r| load(&format!("ppdp_rank{r}.json.gz"))).collect();
    let names: Vec<String> = (0..8).map(|r| format!("ppdp_rank{r}")).collect();
    let traces: Vec<(&str, &Store)> = names.iter().map(|s| s.as_str()).zip(&stores).collect();
    let opts = RankOptions { link_gbps: Some(25.0), ..Default::default() };
    let raw = multi_rank_report_with(&traces, Alignment::CollectiveEnd, 5, &opts);
    let dir = tempfile::tempdir().unwrap();
    strobe_cluster::summarize(&traces, &opts, dir.path()).unwrap();
    let merged = strobe_cluster::merge_dir(dir.path(), Alignment::CollectiveEnd, &opts).unwrap();
    let j = |v: &dyn erased::Ser| v.json();
    assert_eq!(j(&raw.process_groups), j(&merged.process_groups));
    assert_eq!(j(&raw.group_collectives), j(&merged.group_collectives));
    assert_eq!(j(&raw.comm_groups), j(&merged.comm_groups));
    assert_eq!(j(&raw.slow_links), j(&merged.slow_links));
    assert_eq!(j(&raw.comm_notes), j(&merged.comm_notes));
    assert!(!raw.comm_groups.is_empty());
    assert!(raw.comm_groups.iter().all(|g| g.expected_gbps == Some(25.0)));
}

mod erased {
    pub trait Ser {
        fn json(&self) -> String;
    }
    impl<T: serde::Serialize> Ser for T {
        fn json(&self) -> String {
            serde_json::to_string(self).unwrap()
        }
    }
}

/// A rank of a two-rank job whose declarations are odd: a group naming a rank with no trace,
/// a group whose size disagrees with its list, a list that is not one, a send to a group rank
/// out of range, a collective record with fields of the wrong type and fields no version
/// writes.
fn odd_rank(rank: i64) -> String {
    let pg = r#"[{"pg_name": "0", "pg_desc": "default_pg", "pg_size": 2, "ranks": [0, 1]},
        {"pg_name": "1", "pg_desc": "with_absent", "pg_size": 3, "ranks": [0, 1, 7]},
        {"pg_name": "2", "pg_desc": "bad_size", "pg_size": 5, "ranks": [0, 1]},
        {"pg_name": "3", "ranks": "not a list"}, {"no_name": true}]"#;
    format!(
        r#"{{"distributedInfo": {{"backend": "nccl", "rank": {rank}, "world_size": 2, "pg_config": {pg}}},
  "traceEvents": [
   {{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 1000}},
   {{"ph": "X", "cat": "cpu_op", "name": "c10d::send", "pid": 1, "tid": 1, "ts": 10, "dur": 5,
     "args": {{"Concrete Inputs": ["", "", "9", "0"]}}}},
   {{"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 1, "ts": 100, "dur": 5,
     "args": {{"Collective name": "allreduce", "Process Group Name": "1", "Process Group Ranks": "[0, 1, 7]",
              "Group size": "three", "In msg nelems": -4, "dtype": "Quaternion", "Future field": {{"x": [1]}}}}}},
   {{"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 1, "ts": 200, "dur": 5,
     "args": {{"Collective name": "allreduce", "Process Group Name": "0", "Process Group Ranks": "[0, 1]",
              "Group size": 2, "In msg nelems": 1024, "Out msg nelems": 1024, "dtype": "Float"}}}}
  ]}}"#
    )
}

#[test]
fn odd_groups_and_records_are_notes() {
    let dir = tempfile::tempdir().unwrap();
    let stores: Vec<Store> = (0..2)
        .map(|r| {
            let p = dir.path().join(format!("odd_rank{r}.json"));
            std::fs::write(&p, odd_rank(r)).unwrap();
            load_in(&p, dir.path()).unwrap()
        })
        .collect();
    let traces: Vec<(&str, &Store)> = vec![("odd_rank0", &stores[0]), ("odd_rank1", &stores[1])];
    let r = multi_rank_report(&traces, Alignment::Recorded, 3);
    let notes = r.comm_notes.join("\n");
    assert!(notes.contains("ranks [7] have no trace open"), "{notes}");
    assert!(notes.contains("pg_size 5 but 2 ranks listed"), "{notes}");
    assert!(notes.contains("ranks not a list of integers"), "{notes}");
    assert!(notes.contains("has no pg_name"), "{notes}");
    // the odd record is matched on its group, its size unknown and said why
    let odd: Vec<_> = r.group_collectives.iter().filter(|c| c.group == "1").collect();
    assert_eq!(odd.len(), 1);
    assert_eq!(odd[0].bytes, None);
    assert!(odd[0].size_unknown.is_some());
    // the good one has its bytes and a bandwidth
    let good: Vec<_> = r.group_collectives.iter().filter(|c| c.group == "0").collect();
    assert_eq!(good.len(), 1);
    assert_eq!(good[0].bytes, Some(4096));
    let text = strobe_analysis::ranks::report::to_text(&r);
    assert!(text.contains("Process-group notes"), "{text}");
}

/// A collective span's own bandwidth (the details and the tooltip): the DDP pair's first NCCL
/// kernel on rank 0 moves the oracle's bytes over its own duration; a gloo work record of the
/// pipeline × data-parallel job gives the size the rank's log names, with no group recorded.
#[test]
fn a_collective_span_has_its_bytes_and_bandwidth() {
    use strobe_analysis::ranks::span_bandwidth::span_bandwidth;
    let want = expected("comm.expected.json");
    let st = load("ddp_rank0.json.gz");
    let first = (0..st.span_count() as u32)
        .filter(|&s| st.span_kind(s) == strobe_model::SpanKind::Kernel && st.span_name(s).starts_with("nccl"))
        .min_by_key(|&s| (st.span_start(s), st.span_end(s)))
        .expect("an NCCL kernel");
    let b = span_bandwidth(&st, first).expect("a collective");
    let w = &want["ddp"][0];
    assert_eq!(b.kind, "all_reduce");
    assert_eq!(b.bytes, Some(i(&w["bytes"]) as u64));
    assert_eq!(b.group_size, Some(i(&w["group_size"]) as usize));
    assert_eq!(b.group.as_deref(), Some("0 (default_pg)"));
    let dur = st.span_end(first) - st.span_start(first);
    assert_eq!(b.dur_ns, dur);
    let alg = i(&w["bytes"]) as f64 / dur as f64;
    assert!((b.algbw_gbps.unwrap() - alg).abs() < 1e-9 * alg);
    // two ranks: bus = alg × 2(n − 1)/n = alg
    assert!((b.busbw_gbps.unwrap() - alg).abs() < 1e-9 * alg);
    // a compute kernel is no collective
    let gemm = (0..st.span_count() as u32)
        .find(|&s| st.span_kind(s) == strobe_model::SpanKind::Kernel && !st.span_name(s).starts_with("nccl"));
    assert!(span_bandwidth(&st, gemm.unwrap()).is_none());

    let g = load("ppdp_rank1.json.gz");
    let ar = (0..g.span_count() as u32).find(|&s| {
        g.span_name(s) == "gloo:all_reduce" && {
            let b = span_bandwidth(&g, s).unwrap();
            b.bytes != Some(4096)
        }
    });
    let b = span_bandwidth(&g, ar.unwrap()).unwrap();
    let dp = want["ppdp"]["collectives"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["group"] == "dp_stage3" && c["kind"] == "all_reduce")
        .unwrap();
    assert_eq!(b.bytes, Some(i(&dp["bytes"]) as u64));
    assert_eq!(b.group, None);
    assert!(b.algbw_gbps.is_some() && b.busbw_gbps.is_none());
}
