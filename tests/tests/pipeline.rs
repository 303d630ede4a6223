//! Pipeline parallelism on the recorded 4-stage gloo traces (GPipe; 1F1B with the
//! stages on ranks 1, 3, 0, 2), against figures computed independently by
//! tests/expected/pipeline_expected.py from the raw Kineto events; and a DDP pair, which has
//! no pipeline.

mod common;
use common::*;
use serde_json::Value;
use strobe_analysis::pipeline::microbatch::{MicrobatchRule, MicrobatchSource};
use strobe_analysis::pipeline::{analyze, Pipeline};
use strobe_analysis::ranks::align::Alignment;
use strobe_analysis::ranks::report::multi_rank_report;
use strobe_analysis::ranks::{rank_steps, sorted_ranks, RankTrace};
use strobe_analysis::steps::{Step, StepRule};
use strobe_store::Store;

fn i(v: &Value) -> i64 {
    v.as_i64().unwrap_or_else(|| panic!("not an integer: {v}"))
}

fn run(stores: &[Store], rule: &MicrobatchRule) -> Option<Pipeline> {
    let steps: Vec<Vec<Step>> = stores.iter().map(|s| rank_steps(s, &StepRule::default())).collect();
    let ranks: Vec<RankTrace> = stores
        .iter()
        .zip(&steps)
        .map(|(s, st)| RankTrace {
            rank: s.meta.distributed.as_ref().and_then(|d| d.rank).unwrap(),
            source: "t",
            store: s,
            steps: st,
        })
        .collect();
    analyze(&sorted_ranks(&ranks), rule)
}

fn stores(set: &str) -> Vec<Store> {
    (0..4).map(|r| load(&format!("pp4_{set}_rank{r}.json.gz"))).collect()
}

fn check(set: &str, schedule: &str) {
    let want = expected(&format!("pp4_{set}.pipeline.json"));
    let p = run(&stores(set), &MicrobatchRule::default()).expect("a pipeline");
    let r = &p.report;
    let order: Vec<i64> = want["stage_order"].as_array().unwrap().iter().map(i).collect();
    assert_eq!(r.stage_order, order, "stage order");
    assert_eq!(r.stages as i64, i(&want["stages"]));
    assert_eq!(r.schedule.as_str(), want["schedule"].as_str().unwrap());
    assert_eq!(r.schedule.as_str(), schedule, "the schedule the recording ran");
    assert_eq!(r.microbatches as i64, i(&want["microbatches"]));
    assert_eq!(r.microbatch_source, MicrobatchSource::Annotation);
    let theo = r.theoretical_bubble_pct.unwrap();
    assert!((theo - want["theoretical_bubble_pct"].as_f64().unwrap()).abs() < 1e-9);
    assert_eq!(r.bottleneck_stage.map(|s| s as i64), Some(i(&want["bottleneck_stage"])));
    assert_eq!(r.bottleneck_rank, Some(i(&want["bottleneck_rank"])));
    let wsteps = want["steps"].as_array().unwrap();
    assert_eq!(r.steps.len(), wsteps.len());
    for (s, w) in r.steps.iter().zip(wsteps) {
        assert_eq!(s.name, w["name"].as_str().unwrap());
        for (row, wr) in s.stages.iter().zip(w["stages"].as_array().unwrap()) {
            let ctx = format!("{set} {} stage {}", s.name, row.stage);
            assert_eq!(row.stage as i64, i(&wr["stage"]), "{ctx}");
            assert_eq!(row.rank, i(&wr["rank"]), "{ctx}");
            assert_eq!(row.step_ns, i(&wr["step_ns"]), "{ctx} step");
            assert_eq!(row.work_ns, i(&wr["work_ns"]), "{ctx} work");
            assert_eq!(row.bubble_ns, i(&wr["bubble_ns"]), "{ctx} bubble");
            assert!((row.bubble_pct - wr["bubble_pct"].as_f64().unwrap()).abs() < 1e-9, "{ctx}");
            assert_eq!(row.warmup_ns, i(&wr["warmup_ns"]), "{ctx} warm-up");
            assert_eq!(row.cooldown_ns, i(&wr["cooldown_ns"]), "{ctx} cool-down");
            assert_eq!(row.p2p_wait_ns, i(&wr["p2p_wait_ns"]), "{ctx} p2p wait");
            assert_eq!(row.forward as i64, i(&wr["forward"]), "{ctx}");
            assert_eq!(row.backward as i64, i(&wr["backward"]), "{ctx}");
            assert_eq!(row.other_idle_ns, row.bubble_ns - row.warmup_ns - row.cooldown_ns - row.p2p_wait_ns);
        }
    }
    // every send has its receive: 2 neighbours each way, 8 microbatches, 3 steps
    assert_eq!(p.pairs.len(), 2 * 3 * 8 * 3);
    for l in &r.p2p {
        assert_eq!(l.to_stage.abs_diff(l.from_stage), 1, "links join neighbours only");
        assert_eq!(l.pairs, 24);
        assert_eq!(l.bytes, 24 * 4 * 128 * 512 * 4, "24 float tensors of 4×128×512");
    }
}

#[test]
fn gpipe_matches_the_oracle() {
    check("gpipe", "gpipe");
}

#[test]
fn one_f_one_b_matches_the_oracle_in_stage_order() {
    check("1f1b", "1f1b");
}

#[test]
fn report_json_names_the_pipeline_or_null() {
    let s = stores("gpipe");
    let traces: Vec<(&str, &Store)> = s.iter().map(|x| ("t", x)).collect();
    let r = multi_rank_report(&traces, Alignment::Recorded, 5);
    let v = serde_json::to_value(&r).unwrap();
    let p = &v["pipeline"];
    for k in ["stage_order", "schedule", "microbatches", "theoretical_bubble_pct", "bottleneck_stage", "steps"] {
        assert!(!p[k].is_null(), "pipeline.{k}");
    }
    let row = &p["steps"][0]["stages"][0];
    for k in ["stage", "rank", "work_ns", "bubble_ns", "bubble_pct", "p2p_wait_ns", "forward", "backward"] {
        assert!(!row[k].is_null(), "stage row .{k}");
    }
    // a DDP pair: all-reduce, no point-to-point
    let (a, b) = (load("ddp_rank0.json.gz"), load("ddp_rank1.json.gz"));
    let r = multi_rank_report(&[("a", &a), ("b", &b)], Alignment::Recorded, 5);
    assert!(serde_json::to_value(&r).unwrap()["pipeline"].is_null());
}

#[test]
fn without_annotations_microbatches_come_from_the_transfers() {
    // a user pattern that matches nothing leaves only the transfers to go by
    let rule = MicrobatchRule::from_pattern("(?P<phase>nothing)(?P<mb>x)").unwrap();
    for set in ["gpipe", "1f1b"] {
        let want = expected(&format!("pp4_{set}.pipeline.json"));
        let p = run(&stores(set), &rule).expect("a pipeline");
        assert_eq!(p.report.microbatch_source, MicrobatchSource::Transfers);
        let order: Vec<i64> = want["stage_order"].as_array().unwrap().iter().map(i).collect();
        assert_eq!(p.report.stage_order, order);
        assert_eq!(p.report.microbatches as i64, i(&want["microbatches"]), "{set}");
        for (s, w) in p.report.steps.iter().zip(want["steps"].as_array().unwrap()) {
            for (row, wr) in s.stages.iter().zip(w["stages"].as_array().unwrap()) {
                let ctx = format!("{set} {} stage {}", s.name, row.stage);
                assert_eq!(row.forward as i64, i(&wr["forward"]), "{ctx} forwards");
                assert_eq!(row.backward as i64, i(&wr["backward"]), "{ctx} backwards");
            }
        }
    }
}
