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
