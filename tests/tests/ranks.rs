//! Several ranks side by side on the real 2-rank DDP traces and the public HTA
//! sampled pair, against figures computed independently by tests/expected/ranks_expected.py
//! (plain Python over the raw Kineto events).

mod common;
use common::*;
use serde_json::Value;
use strobe_analysis::ranks::align::{align, Alignment};
use strobe_analysis::ranks::collectives::match_collectives;
use strobe_analysis::ranks::launch::{launch_stats, LaunchParams};
use strobe_analysis::ranks::memcpy_bandwidth::memcpy_bandwidth;
use strobe_analysis::ranks::queue::queue_length;
use strobe_analysis::ranks::report::multi_rank_report;
use strobe_analysis::ranks::step_table::{rank_summaries, step_table};
use strobe_analysis::ranks::straggler::{find_stragglers, StragglerKind, StragglerParams};
use strobe_analysis::ranks::{rank_steps, sorted_ranks, RankTrace};
use strobe_analysis::steps::{Step, StepRule};
use strobe_store::Store;

fn i(v: &Value) -> i64 {
    v.as_i64().unwrap_or_else(|| panic!("not an integer: {v}"))
}

fn ints(v: &Value) -> Vec<i64> {
    v.as_array().unwrap().iter().map(i).collect()
}

fn traces<'a>(stores: &'a [Store], names: &'a [&'a str], steps: &'a [Vec<Step>]) -> Vec<RankTrace<'a>> {
    let ranks: Vec<RankTrace> = stores
        .iter()
        .zip(names)
        .zip(steps)
        .map(|((s, n), steps)| RankTrace {
            rank: s.meta.distributed.as_ref().and_then(|d| d.rank).unwrap(),
            source: n,
            store: s,
            steps,
        })
        .collect();
    sorted_ranks(&ranks)
}

fn steps_of(stores: &[Store]) -> Vec<Vec<Step>> {
    stores.iter().map(|s| rank_steps(s, &StepRule::default())).collect()
}

/// Everything the oracle computes, compared exactly. Files are given in reverse rank order
/// to check that the order given does not matter.
fn check(files: &[&str], stem: &str) {
    let stores: Vec<Store> = files.iter().map(|f| load(f)).collect();
    let steps = steps_of(&stores);
    let ranks = traces(&stores, files, &steps);
    let exp = expected(&format!("{stem}.ranks.json"));
    let er: Vec<i64> = exp["ranks"].as_array().unwrap().iter().map(|r| i(&r["rank"])).collect();
    assert_eq!(ranks.iter().map(|r| r.rank).collect::<Vec<_>>(), er);

    // alignment: each method's offsets
    for (how, key) in [
        (Alignment::Recorded, "recorded"),
        (Alignment::StepStart, "step_start"),
        (Alignment::CollectiveEnd, "collective_end"),
    ] {
        let a = align(&ranks, how);
        assert_eq!(a.used, how, "{stem}: {key} applies");
        assert_eq!(a.offsets_ns, ints(&exp["offsets"][key]), "{stem}: {key} offsets");
        assert_eq!(a.residual_ns, exp["residual"][key].as_i64(), "{stem}: {key} residual");
    }
    let a = align(&ranks, Alignment::CollectiveEnd);

    // collectives
    let cs = match_collectives(&ranks, &a.offsets_ns);
    let ec = exp["collectives"].as_array().unwrap();
    assert_eq!(cs.len(), ec.len(), "{stem}: collectives");
    for (c, e) in cs.iter().zip(ec) {
        assert_eq!(c.name, e["name"].as_str().unwrap());
        assert_eq!(c.occurrence as u64, e["occurrence"].as_u64().unwrap());
        assert_eq!(c.step.as_deref(), e["step"].as_str(), "{stem}: step of {} #{}", c.name, c.occurrence);
        assert_eq!(c.arrival_ns, ints(&e["arrival_ns"]), "{stem}: arrivals #{}", c.occurrence);
        assert_eq!(c.skew_ns, i(&e["skew_ns"]));
        assert_eq!(c.last_ranks, ints(&e["last_ranks"]));
    }

    // the rank–step table and the stragglers
    let mut table = step_table(&ranks, &cs);
    let st = find_stragglers(&ranks, &cs, &mut table, &StragglerParams::default());
    assert_eq!(st.median_step_ns, i(&exp["median_step_ns"]));
    let es = exp["steps"].as_array().unwrap();
    assert_eq!(table.len(), es.len(), "{stem}: steps");
    for (row, e) in table.iter().zip(es) {
        assert_eq!(row.name, e["name"].as_str().unwrap());
        assert_eq!(row.collective_skew_ns, ints(&e["collective_skew_ns"]), "{stem}: {}", row.name);
        assert_eq!(row.straggler, e["straggler"].as_i64(), "{stem}: straggler of {}", row.name);
        assert_eq!(
            row.straggler_kind.map(|k| k.as_str()),
            e["straggler_kind"].as_str(),
            "{stem}: straggler kind of {}",
            row.name
        );
        let ep = e["per_rank"].as_array().unwrap();
        assert_eq!(row.per_rank.len(), ep.len());
        for (p, q) in row.per_rank.iter().zip(ep) {
            let got = [p.rank, p.start_ns, p.dur_ns, p.compute_ns, p.comm_ns, p.exposed_comm_ns, p.idle_ns, p.wait_ns];
            let want: Vec<i64> =
                ["rank", "start_ns", "dur_ns", "compute_ns", "comm_ns", "exposed_comm_ns", "idle_ns", "wait_ns"]
                    .iter()
                    .map(|k| i(&q[*k]))
                    .collect();
            assert_eq!(got.to_vec(), want, "{stem}: {} rank {}", row.name, p.rank);
            assert_eq!(p.exposed_wait_ns, i(&q["exposed_wait_ns"]), "{stem}: {} rank {} exposed", row.name, p.rank);
            let sc = q["score"].as_f64().unwrap();
            assert!((p.score - sc).abs() < 1e-12, "{stem}: {} rank {} score {} vs {sc}", row.name, p.rank, p.score);
        }
    }
    let eb = exp["straggler_steps"].as_array().unwrap();
    assert_eq!(st.by_step.len(), eb.len(), "{stem}: flagged steps");
    for (s, e) in st.by_step.iter().zip(eb) {
        assert_eq!((s.step.as_str(), s.rank), (e["step"].as_str().unwrap(), i(&e["rank"])));
        assert_eq!((s.last_at as i64, s.collectives as i64), (i(&e["last_at"]), i(&e["collectives"])));
        assert_eq!(s.median_others_wait_ns, i(&e["median_others_wait_ns"]));
        assert_eq!(s.own_wait_ns, i(&e["own_wait_ns"]));
        assert_eq!(s.kind.as_str(), e["kind"].as_str().unwrap());
        assert_eq!(
            (s.blamed_exposed_wait_ns, s.own_exposed_wait_ns, s.usual_blamed_ns),
            (i(&e["blamed_exposed_wait_ns"]), i(&e["own_exposed_wait_ns"]), i(&e["usual_blamed_ns"])),
            "{stem}: {} exposed figures",
            s.step
        );
        let b = s.before.as_ref().expect("evidence before the late collective");
        let f = &e["before"];
        assert_eq!(
            (b.collective.as_str(), b.occurrence as i64),
            (f["collective"].as_str().unwrap(), i(&f["occurrence"]))
        );
        assert_eq!((b.window_start_ns, b.window_end_ns), (i(&f["window_start_ns"]), i(&f["window_end_ns"])));
        assert_eq!((b.compute_ns, b.gpu_idle_ns), (i(&f["compute_ns"]), i(&f["gpu_idle_ns"])), "{stem}: {}", s.step);
        let ek = f["top_kernels"].as_array().unwrap();
        assert_eq!(b.top_kernels.len(), ek.len());
        for (k, x) in b.top_kernels.iter().zip(ek) {
            assert_eq!(k.name, x["name"].as_str().unwrap());
            assert_eq!((k.count as i64, k.total_ns, k.max_ns), (i(&x["count"]), i(&x["total_ns"]), i(&x["max_ns"])));
        }
    }

    // HTA parity: launch statistics, queue length, memcpy bytes
    for (r, e) in ranks.iter().zip(exp["ranks"].as_array().unwrap()) {
        let h = &e["hta"];
        let l = launch_stats(r.rank, r.store, &LaunchParams::default());
        let x = &h["launch"];
        assert_eq!(l.paired as i64, i(&x["paired"]), "{stem}: rank {} launches", r.rank);
        for (d, k) in
            [(&l.launch_delay, "launch_delay"), (&l.cpu_duration, "cpu_duration"), (&l.gpu_duration, "gpu_duration")]
        {
            let y = &x[k];
            assert_eq!(
                (d.count as i64, d.median_ns, d.p90_ns, d.max_ns),
                (i(&y["count"]), i(&y["median_ns"]), i(&y["p90_ns"]), i(&y["max_ns"])),
                "{stem}: rank {} {k}",
                r.rank
            );
        }
        assert_eq!(l.mean_launch_delay_ns, i(&x["mean_launch_delay_ns"]));
        let counts = [l.short_kernels, l.shorter_than_launch, l.runtime_outliers, l.launch_delay_outliers];
        let want: Vec<i64> = ["short_kernels", "shorter_than_launch", "runtime_outliers", "launch_delay_outliers"]
            .iter()
            .map(|k| i(&x[*k]))
            .collect();
        assert_eq!(counts.iter().map(|&c| c as i64).collect::<Vec<_>>(), want, "{stem}: rank {}", r.rank);
        let q: Vec<(i64, i64, i64)> = queue_length(r.store).iter().map(|q| (q.device, q.stream, q.max_len)).collect();
        let eq: Vec<(i64, i64, i64)> = h["queue"]
            .as_array()
            .unwrap()
            .iter()
            .map(|y| (i(&y["device"]), i(&y["stream"]), i(&y["max_len"])))
            .collect();
        assert_eq!(q, eq, "{stem}: rank {} queue length", r.rank);
        let m: Vec<(i64, String, u64, u64)> =
            memcpy_bandwidth(r.store).into_iter().map(|b| (b.device, b.name, b.ops, b.bytes)).collect();
        let em: Vec<(i64, String, u64, u64)> = h["memcpy"]
            .as_array()
            .unwrap()
            .iter()
            .map(|y| {
                (
                    i(&y["device"]),
                    y["name"].as_str().unwrap().to_string(),
                    y["ops"].as_u64().unwrap(),
                    y["bytes"].as_u64().unwrap(),
                )
            })
            .collect();
        assert_eq!(m, em, "{stem}: rank {} memcpy", r.rank);
    }

    // per-rank distributions
    let sums = rank_summaries(&ranks, &table);
    for (s, e) in sums.iter().zip(exp["rank_summary"].as_array().unwrap()) {
        assert_eq!(s.rank, i(&e["rank"]));
        for (d, k) in [(&s.step_time, "step_time"), (&s.wait, "wait")] {
            let x = &e[k];
            assert_eq!(
                (d.count as i64, d.median_ns, d.p90_ns, d.max_ns),
                (i(&x["count"]), i(&x["median_ns"]), i(&x["p90_ns"]), i(&x["max_ns"])),
                "{stem}: rank {} {k}",
                s.rank
            );
        }
    }
}

#[test]
fn ddp_pair_against_oracle() {
    check(&["ddp_rank1.json.gz", "ddp_rank0.json.gz"], "ddp");
}

#[test]
fn hta_sampled_pair_against_oracle() {
    check(&["hta_sampled_rank1.json.gz", "hta_sampled_rank0.json.gz"], "hta_sampled");
}

/// The slowed rank of the DDP pair is found where it was slowed, with the cause named.
#[test]
fn ddp_straggler_is_rank1_in_step3_with_evidence() {
    let stores: Vec<Store> = ["ddp_rank0.json.gz", "ddp_rank1.json.gz"].iter().map(|f| load(f)).collect();
    let names: Vec<String> = ["ddp_rank0.json.gz", "ddp_rank1.json.gz"].iter().map(|f| f.to_string()).collect();
    let traces: Vec<(&str, &Store)> = names.iter().map(String::as_str).zip(&stores).collect();
    let r = multi_rank_report(&traces, Alignment::CollectiveEnd, 20);
    let s3 = r.steps.iter().find(|s| s.name == "ProfilerStep#3").unwrap();
    assert_eq!(s3.straggler, Some(1));
    let ev = r.straggler_steps.iter().find(|s| s.step == "ProfilerStep#3").unwrap();
    let before = ev.before.as_ref().unwrap();
    // the 24 extra 8192³ GEMMs, about 33 ms (traces README)
    assert_eq!(before.top_kernels[0].name, "nvjet_sm90_tst_320x128_64x3_1x2_h_bz_coopB_NNT");
    assert_eq!(before.top_kernels[0].count, 24);
    assert!(ev.evidence.contains("rank 1 held the others up (one-off"), "{}", ev.evidence);
    assert!(ev.evidence.contains("it arrived last at 10 of 10"), "{}", ev.evidence);
    assert!(ev.evidence.contains("24× nvjet_sm90_tst_320x128"), "{}", ev.evidence);
    // step 4 is healthy: the ranks wait for each other by turns (rank 0 last at 6 of 10)
    assert_eq!(r.steps.iter().find(|s| s.name == "ProfilerStep#4").unwrap().straggler, None);
    assert_eq!(s3.straggler_kind, Some(StragglerKind::OneOff));
    assert_eq!(v_kind(&r), "one_off");
    let one = r.stragglers.iter().find(|s| s.rank == 1).unwrap();
    assert_eq!(one.steps, vec!["ProfilerStep#3".to_string()]);
    // the JSON shape `strobe report A B --json` prints
    let v = serde_json::to_value(&r).unwrap();
    assert_eq!(v["ranks"][1]["rank"], 1);
    assert!(v["ranks"][0]["gpus"].is_array() && v["ranks"][0]["report"]["top_kernels"].is_array());
    assert_eq!(v["steps"][1]["per_rank"][0]["wait_ns"].as_i64().unwrap(), s3.per_rank[0].wait_ns);
    assert_eq!(v["alignment"]["used"], "collective_end");
    assert!(v["alignment"]["residual_ns"].is_i64());
    assert_eq!(v["steps"][1]["straggler"], 1);
    assert!(v["steps"][1]["per_rank"][0]["exposed_wait_ns"].is_i64());
    assert!(v["ranks"][0]["pid"].is_i64() && v["ranks"][0]["devices"].is_array());
}

fn v_kind(r: &strobe_analysis::ranks::report::MultiRankReport) -> String {
    let v = serde_json::to_value(r).unwrap();
    v["steps"][1]["straggler_kind"].as_str().unwrap_or("").to_string()
}

#[test]
fn ddp_diff_against_oracle() {
    let a = load("ddp_rank0.json.gz");
    let b = load("ddp_rank1.json.gz");
    let d = strobe_analysis::diff::diff(&a, &b);
    let exp = expected("ddp.diff.json");
    for (rows, key) in [(&d.kernels, "kernels"), (&d.cpu_ops, "cpu_ops")] {
        let e = exp[key].as_array().unwrap();
        assert_eq!(rows.len(), e.len(), "{key}: names");
        for (r, x) in rows.iter().zip(e) {
            assert_eq!(r.name, x["name"].as_str().unwrap(), "{key}");
            assert_eq!((r.count_a as i64, r.count_b as i64), (i(&x["count_a"]), i(&x["count_b"])), "{key}: {}", r.name);
            assert_eq!(
                (r.total_a_ns, r.total_b_ns, r.delta_ns),
                (i(&x["total_a_ns"]), i(&x["total_b_ns"]), i(&x["delta_ns"]))
            );
            assert_eq!(serde_json::to_value(r.status).unwrap(), x["status"]);
        }
    }
    // the straggler's extra GEMMs are the largest kernel difference
    assert_eq!(d.kernels[0].name, "nvjet_sm90_tst_320x128_64x3_1x2_h_bz_coopB_NNT");
    assert_eq!(d.kernels[0].count_b - d.kernels[0].count_a, 24);
}
