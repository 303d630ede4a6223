//! The thousand-rank path at test size: synthetic rank summaries scaled from
//! the real DDP rank 0 (`strobe_cluster::synthetic`, written with `strobe summarize`'s writer)
//! with one planted straggler — a kernel `extra` longer before the last collective of steps
//! 40–60 — merged from Parquet alone. The expectations follow from what was planted, not
//! from a run of the merge: the planted rank and only it is flagged, in exactly those steps,
//! one-off (21 of 100 steps), and its evidence shows the others' exposed wait on it ≈ `extra`
//! (within the arrival jitter the generator adds), that it arrived last at the step's last
//! collective about `extra` after the others, and `extra` more compute in the window before.
//! Then 64 real ranks end to end: the DDP pair renumbered 0..63 as a real 64-rank run would
//! name them, summarized and merged, equal to the report on the 64 traces.

mod common;
use common::*;
use strobe_analysis::ranks::align::Alignment;
use strobe_analysis::ranks::report::{multi_rank_report_with, rank_digests, RankOptions};
use strobe_analysis::ranks::straggler::StragglerKind;
use strobe_cluster::synthetic::{write_job, Job};
use strobe_store::Store;

fn template() -> strobe_analysis::ranks::digest::RankDigest {
    let store = load("ddp_rank0.json.gz");
    let traces: Vec<(&str, &Store)> = vec![("ddp_rank0.json.gz", &store)];
    rank_digests(&traces, &RankOptions::default()).remove(0).0
}

#[test]
fn planted_straggler_among_200_ranks_is_found_with_its_evidence() {
    let t = template();
    let job = Job::with_straggler(200, 100, &t);
    let p = job.planted.clone().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let files = write_job(&t, &job, dir.path()).unwrap();
    assert_eq!(files.len(), 6 * 200);
    let r = strobe_cluster::merge_dir(dir.path(), Alignment::CollectiveEnd, &RankOptions::default()).unwrap();
    assert_eq!(r.ranks.len(), 200);
    assert_eq!(r.steps.len(), 100);
    assert!(r.steps.iter().all(|s| s.per_rank.len() == 200));
    assert!(r.alignment.refused.is_none(), "{:?}", r.alignment.refused);
    let jitter = t.comm.iter().map(|c| (c.end - c.start) / 4).max().unwrap();
    // the generator slows the template's busiest compute kernel
    let busiest = t.kernels.iter().filter(|k| k.kind == "compute").max_by_key(|k| k.total_ns).unwrap().name.clone();
    assert_eq!(r.stragglers.len(), 1, "{:?}", r.stragglers.iter().map(|s| (s.rank, s.steps.len())).collect::<Vec<_>>());
    let s = &r.stragglers[0];
    assert_eq!(s.rank, p.rank);
    assert_eq!(s.kind, StragglerKind::OneOff);
    let planted_steps: Vec<String> = p.steps.clone().map(|k| r.steps[k].name.clone()).collect();
    assert_eq!(s.steps, planted_steps);
    assert_eq!(r.straggler_steps.len(), planted_steps.len());
    for e in &r.straggler_steps {
        assert_eq!(e.rank, p.rank);
        assert!(
            (e.blamed_exposed_wait_ns - p.extra_ns).abs() <= 2 * jitter,
            "{}: blamed {}",
            e.step,
            e.blamed_exposed_wait_ns
        );
        assert!(e.own_exposed_wait_ns <= 2 * jitter, "{}: own {}", e.step, e.own_exposed_wait_ns);
        assert!(e.last_at >= 1);
        let late = e.per_collective.iter().filter(|c| c.straggler_last).max_by_key(|c| c.straggler_arrival_ns).unwrap();
        assert!(
            (late.straggler_arrival_ns - p.extra_ns).abs() <= 2 * jitter,
            "{}: arrival {}",
            e.step,
            late.straggler_arrival_ns
        );
        let b = e.before.as_ref().expect("the window before the late collective");
        assert!(b.compute_ns >= p.extra_ns, "{}: window compute {}", e.step, b.compute_ns);
        assert!(b.window_end_ns - b.window_start_ns >= p.extra_ns);
        assert!(!b.top_kernels.is_empty() && b.top_kernels[0].total_ns >= p.extra_ns);
        assert_eq!(b.top_kernels[0].name, busiest, "the slow kernel named");
        assert!(e.evidence.contains(&format!("rank {}", p.rank)));
    }
    // the others: on time
    let others: Vec<i64> = r.rank_summary.iter().filter(|x| x.rank != p.rank).map(|x| x.step_time.max_ns).collect();
    let mine = r.rank_summary.iter().find(|x| x.rank == p.rank).unwrap();
    assert!(others.iter().all(|&m| m <= mine.step_time.max_ns));
}

/// The DDP pair, renumbered: trace i is rank i of 64 (`distributedInfo.rank`, `world_size`).
/// Each source is parsed and written once, with a placeholder for the rank that each copy
/// fills in as text, and the copies are plain JSON: serialising and deflating 64 × 8.5 MB in
/// a debug build took most of this test's time.
fn scaled_64(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    use std::io::Read;
    const RANK: &str = "\"@RANK@\"";
    let templates: Vec<String> = ["ddp_rank0.json.gz", "ddp_rank1.json.gz"]
        .iter()
        .map(|f| {
            let mut s = String::new();
            flate2::read::GzDecoder::new(std::fs::File::open(sample(f)).unwrap()).read_to_string(&mut s).unwrap();
            let mut t: serde_json::Value = serde_json::from_str(&s).unwrap();
            let di = t["distributedInfo"].as_object_mut().unwrap();
            di.insert("rank".into(), "@RANK@".into());
            di.insert("world_size".into(), 64.into());
            let text = serde_json::to_string(&t).unwrap();
            assert_eq!(text.matches(RANK).count(), 1, "the placeholder is only the rank");
            text
        })
        .collect();
    (0..64)
        .map(|r| {
            let p = dir.join(format!("scaled_rank{r}.json"));
            std::fs::write(&p, templates[r % 2].replacen(RANK, &r.to_string(), 1)).unwrap();
            p
        })
        .collect()
}

#[test]
fn sixty_four_scaled_real_ranks_end_to_end() {
    let work = tempfile::tempdir().unwrap();
    let files = scaled_64(work.path());
    let cache = work.path().join("cache");
    let stores: Vec<Store> = files.iter().map(|f| load_in(f, &cache).unwrap()).collect();
    let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    let traces: Vec<(&str, &Store)> = names.iter().map(String::as_str).zip(&stores).collect();
    let opts = RankOptions::default();
    let sum = work.path().join("summaries");
    strobe_cluster::summarize(&traces, &opts, &sum).unwrap();
    let merged =
        serde_json::to_value(strobe_cluster::merge_dir(&sum, Alignment::CollectiveEnd, &opts).unwrap()).unwrap();
    let raw = serde_json::to_value(multi_rank_report_with(&traces, Alignment::CollectiveEnd, 20, &opts)).unwrap();
    let ranks: Vec<i64> = merged["ranks"].as_array().unwrap().iter().map(|e| e["rank"].as_i64().unwrap()).collect();
    assert_eq!(ranks, (0..64).collect::<Vec<_>>(), "ranks from distributedInfo");
    for e in merged["ranks"].as_array().unwrap() {
        assert_eq!(e["rank_from"], "metadata");
    }
    for k in [
        "alignment",
        "steps",
        "collectives",
        "stragglers",
        "straggler_steps",
        "rank_summary",
        "temporal_breakdown",
        "kernel_breakdown",
        "comm_overlap",
        "launch_stats",
    ] {
        assert_eq!(merged[k], raw[k], "section {k}");
    }
    // 3 steps × 64 ranks; 10 all-reduces a step, each matched over all 64 ranks
    assert_eq!(merged["steps"].as_array().unwrap().len(), 3);
    assert_eq!(merged["collectives"].as_array().unwrap().len(), 30);
    assert!(merged["collectives"].as_array().unwrap().iter().all(|c| c["starts_ns"].as_array().unwrap().len() == 64));
}
