//! `strobe bench cluster`: the thousand-rank bar — merging 1 000 rank summaries of
//! 100 steps each (`strobe report SUMMARY_DIR`) takes under 10 s and 2 GB. The summaries are
//! synthetic (`strobe_cluster::synthetic`), scaled from a real rank of sample-traces and
//! written with `strobe summarize`'s writer, one rank a planted straggler. Each merge runs in a
//! fresh process (`bench cluster-once`) so its peak RSS (VmHWM) is the merge's alone.

use crate::bench::{median, status_kb};
use anyhow::Context;
use std::path::{Path, PathBuf};
use std::time::Instant;
use strobe_analysis::ranks::align::Alignment;
use strobe_analysis::ranks::report::{rank_digests, RankOptions};
use strobe_store::Store;

#[derive(clap::Args, Clone, Debug)]
pub struct Opts {
    #[arg(long, default_value_t = 1000)]
    pub ranks: usize,
    #[arg(long, default_value_t = 100)]
    pub steps: usize,
    #[arg(long, default_value = "bench-data/cluster1000")]
    pub dir: PathBuf,
    #[arg(long, default_value = "sample-traces/ddp_rank0.json.gz")]
    pub from: PathBuf,
}

/// The template rank: the digest of `from`, as `strobe summarize` computes it.
pub fn template(from: &Path, cache: Option<&Path>) -> anyhow::Result<strobe_analysis::ranks::digest::RankDigest> {
    let store = crate::load::load_with_progress(from, cache)?;
    let name = from.display().to_string();
    let traces: Vec<(&str, &Store)> = vec![(name.as_str(), &store)];
    let (d, _) = rank_digests(&traces, &RankOptions::default()).into_iter().next().context("no digest")?;
    Ok(d)
}

fn ensure(o: &Opts, cache: Option<&Path>) -> anyhow::Result<strobe_cluster::synthetic::Job> {
    let t = template(&o.from, cache)?;
    let job = strobe_cluster::synthetic::Job::with_straggler(o.ranks, o.steps, &t);
    let have = strobe_cluster::summary::summaries_in(&o.dir).map(|v| v.len()).unwrap_or(0);
    if have != o.ranks {
        if o.dir.exists() {
            std::fs::remove_dir_all(&o.dir).with_context(|| o.dir.display().to_string())?;
        }
        let t0 = Instant::now();
        let files = strobe_cluster::synthetic::write_job(&t, &job, &o.dir)?;
        let bytes: u64 = files.iter().filter_map(|p| std::fs::metadata(p).ok()).map(|m| m.len()).sum();
        println!(
            "generated {} rank summaries × {} steps from {} in {:.1} s: {} files, {:.1} MB ({:.0} kB a rank)",
            o.ranks,
            o.steps,
            o.from.display(),
            t0.elapsed().as_secs_f64(),
            files.len(),
            bytes as f64 / 1e6,
            bytes as f64 / 1024.0 / o.ranks.max(1) as f64
        );
    }
    Ok(job)
}

pub fn run(o: Opts, runs: usize, cache: Option<&Path>) -> anyhow::Result<()> {
    let job = ensure(&o, cache)?;
    let exe = std::env::current_exe()?;
    let (mut secs, mut rss) = (Vec::new(), Vec::new());
    let mut last = String::new();
    for _ in 0..runs.max(1) {
        let out = std::process::Command::new(&exe).arg("bench").arg("cluster-once").arg(&o.dir).output()?;
        anyhow::ensure!(out.status.success(), "cluster-once failed: {}", String::from_utf8_lossy(&out.stderr));
        last = String::from_utf8_lossy(&out.stdout).to_string();
        let mut it = last.split_whitespace();
        secs.push(it.next().and_then(|x| x.parse().ok()).unwrap_or(f64::NAN));
        rss.push(it.next().and_then(|x| x.parse().ok()).unwrap_or(f64::NAN));
    }
    let (s, m) = (median(&secs), median(&rss));
    println!(
        "merge {} ranks × {} steps ({}): median {:.2} s (runs {:?}), peak RSS median {:.0} MB — bars 10 s, 2048 MB: {}",
        o.ranks,
        o.steps,
        o.dir.display(),
        s,
        secs.iter().map(|x| (x * 100.0).round() / 100.0).collect::<Vec<_>>(),
        m,
        if s < 10.0 && m < 2048.0 { "PASS" } else { "FAIL" }
    );
    if let Some(p) = &job.planted {
        println!("  planted: rank {} slow by {:.1} ms on steps {:?}", p.rank, p.extra_ns as f64 / 1e6, p.steps);
    }
    println!("  found: {}", last.split_once(' ').and_then(|x| x.1.split_once(' ')).map(|x| x.1.trim()).unwrap_or(""));
    Ok(())
}

/// One merge in this process: prints seconds, peak RSS in MB, then the stragglers found.
pub fn once(dir: &Path) -> anyhow::Result<()> {
    let t = Instant::now();
    let r = strobe_cluster::merge_dir(dir, Alignment::CollectiveEnd, &RankOptions::default())?;
    let s = t.elapsed().as_secs_f64();
    let found: Vec<String> =
        r.stragglers.iter().map(|x| format!("rank {} ({} steps)", x.rank, x.steps.len())).collect();
    println!(
        "{s:.3} {:.1} {} ranks, {} steps, {} collectives; stragglers: {}",
        status_kb("VmHWM:") as f64 / 1024.0,
        r.ranks.len(),
        r.steps.len(),
        r.collectives.len(),
        if found.is_empty() { "none".to_string() } else { found.join(", ") }
    );
    Ok(())
}

/// `strobe bench heat-map`: the ranks pane's heat map over the merged summaries of `o.dir`
/// (generated as for `cluster` when missing), headless at 1600×1000, paging down through the
/// ranks a screen at a time: per-frame CPU time (target: ≤ 4 ms at 1 000 × 100).
pub fn heat_map(o: Opts, frames: usize, cache: Option<&Path>) -> anyhow::Result<()> {
    ensure(&o, cache)?;
    let r = strobe_cluster::merge_dir(&o.dir, Alignment::CollectiveEnd, &RankOptions::default())?;
    let (ranks, steps) = (r.ranks.len(), r.steps.len());
    let t = strobe_ui::bench::heat_map_bench(r, (1600.0, 1000.0), frames, 37);
    let pct = |v: &mut Vec<f64>, q: f64| {
        v.sort_by(f64::total_cmp);
        v[((v.len() as f64 - 1.0) * q).round() as usize]
    };
    let mut build: Vec<f64> = t.iter().map(|x| x.0).collect();
    let mut tess: Vec<f64> = t.iter().map(|x| x.1).collect();
    let mut both: Vec<f64> = t.iter().map(|x| x.0 + x.1).collect();
    println!(
        "heat map {ranks} ranks × {steps} steps, 1600×1000, {} frames: build median {:.2} ms p90 {:.2}, tessellate median {:.2} ms, \
         frame (both) median {:.2} ms p90 {:.2} max {:.2} — bar 4 ms: {}",
        t.len(),
        pct(&mut build, 0.5),
        pct(&mut build, 0.9),
        pct(&mut tess, 0.5),
        pct(&mut both, 0.5),
        pct(&mut both, 0.9),
        pct(&mut both, 1.0),
        if pct(&mut both, 0.9) <= 4.0 { "PASS" } else { "FAIL" }
    );
    Ok(())
}
