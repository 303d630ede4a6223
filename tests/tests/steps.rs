//! Steps, step anomalies and ranks from Nsight Systems, against figures computed
//! independently: tests/expected/steps_expected.py (stdlib Python over the export's own
//! tables) and plain SQL counts.

mod common;
use common::*;
use strobe_analysis::steps::{find_steps, StepRule, StepSource};

fn altered(sql: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("nsys_gpt_single.sqlite");
    std::fs::copy(sample("nsys_gpt_single.sqlite"), &p).unwrap();
    let c = rusqlite::Connection::open(&p).unwrap();
    c.execute_batch(sql).unwrap();
    drop(c);
    (dir, p)
}

#[test]
fn gpt_single_steps_from_nvtx_and_the_slow_step() {
    let s = load("nsys_gpt_single.sqlite");
    let exp = expected("nsys_gpt_single.steps.json");
    let r = strobe_analysis::report::report(&s, 5);
    let es = exp["steps"].as_array().unwrap();
    assert_eq!(r.steps.len(), es.len());
    for (a, e) in r.steps.iter().zip(es) {
        assert_eq!(a.name, e["name"].as_str().unwrap());
        assert_eq!((a.start_ns, a.dur_ns), (e["start_ns"].as_i64().unwrap(), e["dur_ns"].as_i64().unwrap()));
        assert_eq!(a.source, StepSource::Nvtx);
    }
    assert_eq!(r.window.covers, "steps");
    let ea = exp["step_anomalies"].as_array().unwrap();
    assert_eq!(r.step_anomalies.len(), ea.len());
    for (a, e) in r.step_anomalies.iter().zip(ea) {
        assert_eq!(a.step, e["step"].as_str().unwrap());
        assert_eq!(a.typical_ns, e["typical_ns"].as_i64().unwrap());
        assert!((a.score - e["score"].as_f64().unwrap()).abs() < 1e-9);
        assert_eq!(a.rank, None);
    }
    // step_3's 8 ms CPU sleep leaves the GPU idle (traces README): the evidence says so
    let a = &r.step_anomalies[0];
    assert!(a.gpu_idle_ns - a.typical_gpu_idle_ns > 6_000_000, "{}", a.evidence);
    // the steps' usual variation from the oracle's durations: max(MAD, median // 100, 1)
    let durs: Vec<i64> = es.iter().map(|e| e["dur_ns"].as_i64().unwrap()).collect();
    let med = |mut v: Vec<i64>| {
        v.sort();
        let n = v.len();
        if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2
        }
    };
    let m = med(durs.clone());
    let mad = med(durs.iter().map(|d| (d - m).abs()).collect()).max(m / 100).max(1);
    assert_eq!(a.variation_ns, mad);
    // no kernel of step_3 ran more than a few µs longer than in the typical step (the sleep is
    // on the CPU): nothing to list, and the evidence says why
    for k in &a.kernel_changes {
        assert!(k.total_step_ns - k.total_typical_ns >= mad, "{}", a.evidence);
    }
    assert!(!a.evidence.contains("kernels up"), "{}", a.evidence);
    assert!(a.evidence.contains("usual variation"), "{}", a.evidence);
    let v = serde_json::to_value(&r).unwrap();
    assert_eq!(v["steps"][0]["source"], "nvtx");
    assert!(v["step_anomalies"][0]["rank"].is_null());
    assert_eq!(v["step_anomalies"][0]["kind"], "outlier");
}

/// Without NVTX the period comes from the kernels: each NVTX step of this export launches the
/// same number of kernels (steps_expected.py counts them by launch), so an inferred step holds
/// that many.
#[test]
fn gpt_single_without_nvtx_infers_the_period() {
    let exp = expected("nsys_gpt_single.steps.json");
    let per: Vec<i64> = exp["steps"].as_array().unwrap().iter().map(|s| s["kernels"].as_i64().unwrap()).collect();
    assert!(per.windows(2).all(|w| w[0] == w[1]), "the export's steps are alike: {per:?}");
    let (d, p) = altered("DELETE FROM NVTX_EVENTS;");
    let s = load_in(&p, d.path()).unwrap();
    let steps = find_steps(&s, &StepRule::default());
    assert!(steps.len() >= 4, "{steps:?}");
    for st in &steps {
        assert_eq!(st.source, StepSource::Inferred);
        let n = strobe_analysis::diff::diff_windows(&s, (st.start_ns, st.end_ns()), &s, (0, 0))
            .kernels
            .iter()
            .map(|r| r.count_a as i64)
            .sum::<i64>();
        assert_eq!(n, per[0], "{}", st.name);
    }
}

/// A user pattern replaces the built-in rules; a repeated name is numbered.
#[test]
fn user_pattern() {
    let s = load("nsys_gpt_single.sqlite");
    let steps = find_steps(&s, &StepRule::from_pattern("optimizer").unwrap());
    let names: Vec<&str> = steps.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, (1..=6).map(|k| format!("optimizer ({k})")).collect::<Vec<_>>());
    assert!(find_steps(&s, &StepRule::from_pattern("no_such_range").unwrap()).is_empty());
}

/// cudaProfilerStart/Stop bracket: steps outside the capture range are left out. The export
/// has no such calls, so two are planted as runtime rows around step_2..step_4.
#[test]
fn capture_range_is_honoured() {
    let exp = expected("nsys_gpt_single.steps.json");
    let st = exp["steps"].as_array().unwrap();
    let t = |i: usize, k: &str| st[i][k].as_i64().unwrap();
    let (a, b) = (t(2, "start_ns") - 1000, t(4, "start_ns") + t(4, "dur_ns") + 1000);
    let sql = format!(
        "INSERT INTO StringIds(id, value) VALUES (999001, 'cudaProfilerStart_v4000'), (999002, 'cudaProfilerStop_v4000');
         INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME(start, end, eventClass, globalTid, correlationId, nameId, returnValue)
           SELECT {a} - 500, {a}, eventClass, globalTid, 0, 999001, 0 FROM CUPTI_ACTIVITY_KIND_RUNTIME LIMIT 1;
         INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME(start, end, eventClass, globalTid, correlationId, nameId, returnValue)
           SELECT {b}, {b} + 500, eventClass, globalTid, 0, 999002, 0 FROM CUPTI_ACTIVITY_KIND_RUNTIME LIMIT 1;"
    );
    let (d, p) = altered(&sql);
    let s = load_in(&p, d.path()).unwrap();
    let r = strobe_analysis::report::report(&s, 5);
    let names: Vec<&str> = r.steps.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["step_2", "step_3", "step_4"]);
    let c = r.window.capture.as_ref().unwrap();
    assert_eq!((c.start_ns, c.end_ns), (a, b));
}

/// Two processes in one report: the export's process duplicated as a second one on device 1
/// (its rows copied with another pid). Each process is one rank, numbered by device; each
/// view holds exactly its process's kernels (SQL count per pid) and finds its own steps.
#[test]
fn two_processes_in_one_report_are_two_ranks() {
    let dup = "globalPid + (1 << 24)";
    let sql = format!(
        "CREATE TEMP TABLE k AS SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL;
         UPDATE k SET globalPid = {dup}, deviceId = 1;
         INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL SELECT * FROM k;
         CREATE TEMP TABLE r AS SELECT * FROM CUPTI_ACTIVITY_KIND_RUNTIME;
         UPDATE r SET globalTid = globalTid + (1 << 24);
         INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME SELECT * FROM r;
         CREATE TEMP TABLE n AS SELECT * FROM NVTX_EVENTS;
         UPDATE n SET globalTid = globalTid + (1 << 24);
         INSERT INTO NVTX_EVENTS SELECT * FROM n;"
    );
    let (d, p) = altered(&sql);
    let c = rusqlite::Connection::open(&p).unwrap();
    let counts: Vec<(i64, i64)> = c
        .prepare("SELECT (globalPid >> 24) & 16777215, count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL GROUP BY 1 ORDER BY 1")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    drop(c);
    let procs = strobe_import::nsys_sqlite::gpu_processes(&p).unwrap();
    assert_eq!(procs.len(), 2);
    assert_eq!(procs.iter().map(|p| (p.rank, p.devices.clone())).collect::<Vec<_>>(), [(0, vec![0]), (1, vec![1])]);
    assert!(procs.iter().all(|p| p.rank_from == "device order"));
    let opts = strobe_import::LoadOptions::cached_in(d.path().to_path_buf());
    let stores: Vec<_> = procs.iter().map(|q| strobe_import::load_nsys_process(&p, q, &opts).unwrap()).collect();
    for (q, s) in procs.iter().zip(&stores) {
        let want = counts.iter().find(|c| c.0 == q.pid as i64).unwrap().1;
        let got: u64 = strobe_analysis::report::report(s, 1).gpus.iter().map(|g| g.kernels).sum();
        assert_eq!(got as i64, want, "pid {}", q.pid);
        assert_eq!(find_steps(s, &StepRule::default()).len(), 6);
    }
    let names = ["a".to_string(), "b".to_string()];
    let traces: Vec<(&str, &strobe_store::Store)> = names.iter().map(String::as_str).zip(&stores).collect();
    let r = strobe_analysis::ranks::report::multi_rank_report(
        &traces,
        strobe_analysis::ranks::align::Alignment::Recorded,
        5,
    );
    let v = serde_json::to_value(&r).unwrap();
    assert_eq!(v["ranks"][0]["rank_from"], "device_order");
    assert_eq!(v["ranks"][1]["devices"], serde_json::json!([1]));
    assert_eq!(v["ranks"][1]["pid"].as_i64(), Some(procs[1].pid as i64));
    assert_eq!(r.steps.len(), 6);
    assert_eq!(r.steps[0].per_rank.len(), 2);
}

/// A real 2-process report (tests/tools/record_ddp_2proc.py on one H200: two gloo ranks on
/// GPU 0, rank 1 slowed in step_3 by 200 extra matmuls, cudaProfilerStart/Stop around
/// steps 2..7) against tests/expected/nsys_2proc_expected.py: a rank per process in pid
/// order, each with its own captured NVTX steps and durations, and the same outliers.
#[test]
fn recorded_two_process_report() {
    let exp = expected("nsys_ddp_2proc.json");
    let p = sample("nsys_ddp_2proc.sqlite");
    let procs = strobe_import::nsys_sqlite::gpu_processes(&p).unwrap();
    let want_pids: Vec<u64> = exp["ranks"].as_array().unwrap().iter().map(|r| r["pid"].as_u64().unwrap()).collect();
    assert_eq!(procs.iter().map(|q| q.pid as u64).collect::<Vec<_>>(), want_pids);
    assert!(procs.iter().all(|q| q.devices == [0] && q.rank_from == "process order"), "both ranks share GPU 0");
    let dir = tempfile::tempdir().unwrap();
    let opts = strobe_import::LoadOptions::cached_in(dir.path().to_path_buf());
    let stores: Vec<_> = procs.iter().map(|q| strobe_import::load_nsys_process(&p, q, &opts).unwrap()).collect();
    let names: Vec<String> = procs.iter().map(|q| format!("{}#pid{}", p.display(), q.pid)).collect();
    let pairs: Vec<(&str, &strobe_store::Store)> = names.iter().map(String::as_str).zip(stores.iter()).collect();
    let r = strobe_analysis::ranks::report::multi_rank_report(
        &pairs,
        strobe_analysis::ranks::align::Alignment::Recorded,
        5,
    );
    let j = serde_json::to_value(&r).unwrap();
    for (ri, er) in exp["ranks"].as_array().unwrap().iter().enumerate() {
        let want: Vec<(String, i64)> = er["steps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| (s["name"].as_str().unwrap().to_string(), s["dur_ns"].as_i64().unwrap()))
            .collect();
        let got: Vec<(String, i64)> = j["steps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| (s["name"].as_str().unwrap().to_string(), s["per_rank"][ri]["dur_ns"].as_i64().unwrap()))
            .collect();
        assert_eq!(got, want, "rank {ri}'s captured steps");
        let mut flagged: Vec<&str> = j["step_anomalies"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|a| a["rank"] == ri as i64 && a["kind"] == "outlier")
            .map(|a| a["step"].as_str().unwrap())
            .collect();
        flagged.sort();
        let want_out: Vec<&str> = er["outliers"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
        assert_eq!(flagged, want_out, "rank {ri}'s outliers");
    }
    // the planted slowdown is the evidence: 200 more launches of the matmul kernel in rank 1's step_3
    let a = j["step_anomalies"].as_array().unwrap().iter().find(|a| a["rank"] == 1 && a["step"] == "step_3").unwrap();
    let top = &a["kernel_changes"][0];
    assert_eq!(top["count_step"].as_i64().unwrap() - top["count_typical"].as_i64().unwrap(), 200, "{top}");
}
