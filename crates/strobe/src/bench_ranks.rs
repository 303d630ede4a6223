//! `strobe bench ranks`: the 64-rank bar ("64 ranks of 50 MB each must open and
//! stay responsive"). Rank files are the real 2-rank DDP sample scaled with `scale`, each
//! saying its rank in `distributedInfo`; they open through the GUI's own loader (one thread
//! per file, store, then the derived analyses), then the multi-rank report runs over them and
//! timeline frames are built headlessly with all of them open.

use crate::bench::{median, status_kb, AnonPeak};
use anyhow::Context;
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use strobe_ui::documents::Document;
use strobe_ui::loader::{LoadEvent, Loader};
use strobe_ui::workspace::{Trace, Workspace};

pub struct Opts {
    pub n: usize,
    pub size_mb: u64,
    pub dir: PathBuf,
    pub frames: usize,
    pub runs: usize,
    pub pool: Option<usize>,
    pub from: Vec<PathBuf>,
}

/// The rank files, generated where missing (or much smaller than asked: a different scale).
fn ensure_files(o: &Opts) -> anyhow::Result<Vec<PathBuf>> {
    let from = if o.from.is_empty() {
        vec![PathBuf::from("sample-traces/ddp_rank0.json.gz"), PathBuf::from("sample-traces/ddp_rank1.json.gz")]
    } else {
        o.from.clone()
    };
    for f in &from {
        anyhow::ensure!(f.is_file(), "{}: not found (run from the repository root, or give --from)", f.display());
    }
    std::fs::create_dir_all(&o.dir).with_context(|| o.dir.display().to_string())?;
    let target = o.size_mb << 20;
    let files: Vec<PathBuf> = (0..o.n).map(|i| o.dir.join(format!("rank{i}.json"))).collect();
    let missing: Vec<usize> = (0..o.n)
        .filter(|&i| std::fs::metadata(&files[i]).map(|m| m.len() < target / 2 || m.len() > target * 2).unwrap_or(true))
        .collect();
    if !missing.is_empty() {
        let t = Instant::now();
        // one copy period for all: every rank's k-th copy starts at the same offset
        let period = from.iter().map(|f| crate::scale::period_ns(f)).collect::<anyhow::Result<Vec<i64>>>()?;
        let period_ns = period.into_iter().max();
        missing.par_iter().try_for_each(|&i| -> anyhow::Result<()> {
            // write beside, then rename: an interrupted run never leaves a short rank file
            let tmp = files[i].with_extension("json.part");
            let g = crate::scale::Options {
                rank: Some((i as i64, o.n as i64)),
                renumber_steps: true,
                period_ns,
                distinct_args: false,
            };
            crate::scale::generate(&from[i % from.len()], target, &tmp, g)?;
            std::fs::rename(&tmp, &files[i])?;
            Ok(())
        })?;
        println!("generated {} rank files in {} in {:.1} s", missing.len(), o.dir.display(), t.elapsed().as_secs_f64());
    }
    Ok(files)
}

struct Open {
    traces: Vec<Trace>,
    /// seconds from the start to the first and to the last trace loaded
    first_s: f64,
    all_s: f64,
    peak_anon_kb: u64,
    peak_rss_kb: u64,
    /// after every trace is in, with the loads' transient memory gone
    after_anon_kb: u64,
    after_rss_kb: u64,
}

/// Opens `files` as the GUI does: `Loader::start` per file (a thread each), polled until all
/// are in. With `pool`, at most that many loads run at once (workers over `load_document`).
fn open_all(files: &[PathBuf], cache: &Path, pool: Option<usize>) -> anyhow::Result<Open> {
    let settings = strobe_ui::workspace::FigureSettings::default();
    let peak = AnonPeak::start();
    let t = Instant::now();
    let mut first_s = None;
    let mut traces = Vec::with_capacity(files.len());
    match pool {
        None => {
            let mut loader = Loader::new(Some(cache.to_path_buf()));
            for f in files {
                loader.start(f, 0, settings.clone(), || {});
            }
            while loader.busy() {
                for ev in loader.poll() {
                    match ev {
                        LoadEvent::Loaded { doc: Document::Trace(tr), .. } => {
                            first_s.get_or_insert(t.elapsed().as_secs_f64());
                            traces.push(*tr)
                        }
                        LoadEvent::Loaded { .. } => anyhow::bail!("a rank file is not a trace"),
                        LoadEvent::Failed { path, error } => anyhow::bail!("{}: {error}", path.display()),
                    }
                }
                std::thread::sleep(Duration::from_millis(2));
            }
        }
        Some(k) => {
            let opts = strobe_import::LoadOptions::cached_in(cache.to_path_buf());
            let next = std::sync::atomic::AtomicUsize::new(0);
            let (tx, rx) = std::sync::mpsc::channel();
            std::thread::scope(|s| -> anyhow::Result<()> {
                for _ in 0..k.max(1) {
                    let tx = tx.clone();
                    let (next, opts, settings) = (&next, &opts, &settings);
                    s.spawn(move || loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(f) = files.get(i) else { break };
                        let r = match strobe_ui::loader::load_document(f, opts, settings) {
                            Ok(Document::Trace(tr)) => Ok(*tr),
                            Ok(_) => Err(format!("{}: not a trace", f.display())),
                            Err(e) => Err(format!("{}: {e}", f.display())),
                        };
                        if tx.send(r).is_err() {
                            break;
                        }
                    });
                }
                drop(tx);
                for r in rx {
                    first_s.get_or_insert(t.elapsed().as_secs_f64());
                    traces.push(r.map_err(anyhow::Error::msg)?);
                }
                Ok(())
            })?;
        }
    }
    // open means what a load computed before the overview moved behind the first frame:
    // every rank's GPU time, idle breakdown, kernels and steps there (as before, comparable)
    for tr in &traces {
        tr.derived.fill_overview(&tr.store);
    }
    let all_s = t.elapsed().as_secs_f64();
    let (peak_anon_kb, peak_rss_kb) = peak.finish_both();
    traces.sort_by(|a, b| a.path.cmp(&b.path));
    traces.sort_by_key(|t| t.store.meta.distributed.as_ref().and_then(|d| d.rank));
    Ok(Open {
        traces,
        first_s: first_s.unwrap_or(all_s),
        all_s,
        peak_anon_kb,
        peak_rss_kb,
        after_anon_kb: status_kb("RssAnon:"),
        after_rss_kb: status_kb("VmRSS:"),
    })
}

fn gb(kb: u64) -> f64 {
    kb as f64 / 1024.0 / 1024.0
}

fn dir_bytes(d: &Path) -> u64 {
    std::fs::read_dir(d)
        .map(|rd| rd.filter_map(|e| e.ok()).map(|e| e.metadata().map(|m| m.len()).unwrap_or(0)).sum())
        .unwrap_or(0)
}

pub fn run(o: &Opts) -> anyhow::Result<()> {
    anyhow::ensure!(o.n >= 1, "--ranks must be at least 1");
    let files = ensure_files(o)?;
    let total: u64 = files.iter().map(|f| std::fs::metadata(f).map(|m| m.len()).unwrap_or(0)).sum();
    let how = match o.pool {
        None => "GUI loader: one thread per file".to_string(),
        Some(k) => format!("bounded: {k} loads at a time over the GUI's load_document"),
    };
    println!(
        "{} ranks × {:.1} MB = {:.2} GB of Kineto JSON in {} ({}; {} cores, rayon pool {})",
        files.len(),
        total as f64 / files.len() as f64 / 1e6,
        total as f64 / 1e9,
        o.dir.display(),
        how,
        std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        rayon::current_num_threads()
    );
    let base_anon = status_kb("RssAnon:");
    let base_rss = status_kb("VmRSS:");

    // cold: a fresh cache each run (the sources stay in the page cache after the first read)
    let mut rows: Vec<(String, Vec<Open>)> = Vec::new();
    let mut cold = Vec::new();
    let mut store_bytes = 0;
    let mut warm_cache = None;
    for _ in 0..o.runs.max(1) {
        let cache = tempfile::tempdir()?;
        let mut open = open_all(&files, cache.path(), o.pool)?;
        store_bytes = dir_bytes(cache.path());
        open.traces.clear();
        cold.push(open);
        warm_cache = Some(cache); // the last cold run's cache serves the warm reopens
    }
    let warm_cache = warm_cache.expect("at least one run");
    rows.push(("cold (fresh cache: ingest + analyses)".into(), cold));
    let mut warm = Vec::new();
    let mut kept = None;
    for r in 0..o.runs.max(1) {
        let open = open_all(&files, warm_cache.path(), o.pool)?;
        if r + 1 == o.runs.max(1) {
            kept = Some(open);
        } else {
            warm.push(open);
        }
    }
    let mut kept = kept.expect("at least one run");
    let traces = std::mem::take(&mut kept.traces);
    warm.push(kept);
    rows.push(("warm (from the cache: open + analyses)".into(), warm));

    println!(
        "\nopen all {} at once (process before: RssAnon {:.2} GB, VmRSS {:.2} GB):",
        files.len(),
        gb(base_anon),
        gb(base_rss)
    );
    println!(
        "  {:<40} {:>5} {:>9} {:>8} {:>8} {:>14} {:>14} {:>14} {:>14}",
        "", "runs", "all in s", "first s", "MB/s", "peak RssAnon", "peak VmRSS", "after RssAnon", "after VmRSS"
    );
    for (label, opens) in &rows {
        let all: Vec<f64> = opens.iter().map(|x| x.all_s).collect();
        let first: Vec<f64> = opens.iter().map(|x| x.first_s).collect();
        let pa = opens.iter().map(|x| x.peak_anon_kb).max().unwrap_or(0);
        let pr = opens.iter().map(|x| x.peak_rss_kb).max().unwrap_or(0);
        let aa: Vec<f64> = opens.iter().map(|x| gb(x.after_anon_kb)).collect();
        let ar: Vec<f64> = opens.iter().map(|x| gb(x.after_rss_kb)).collect();
        let s = median(&all);
        println!(
            "  {:<40} {:>5} {:>9.2} {:>8.2} {:>8.0} {:>11.2} GB {:>11.2} GB {:>11.2} GB {:>11.2} GB",
            label,
            opens.len(),
            s,
            median(&first),
            total as f64 / 1e6 / s,
            gb(pa),
            gb(pr),
            median(&aa),
            median(&ar)
        );
    }
    let spans: u64 = traces.iter().map(|t| t.store.span_count() as u64).sum();
    println!(
        "  (all in: wall time until the last trace is loaded; peaks are the max over runs, sampled every 5 ms; \
         stores {:.0} MB on disk; {} spans in all)",
        store_bytes as f64 / 1e6,
        spans
    );
    let ranks_seen: Vec<i64> =
        traces.iter().filter_map(|t| t.store.meta.distributed.as_ref().and_then(|d| d.rank)).collect();
    anyhow::ensure!(
        ranks_seen.len() == files.len() && ranks_seen.iter().enumerate().all(|(i, &r)| r == i as i64),
        "rank identity from distributedInfo: expected 0..{}, got {:?}",
        files.len(),
        ranks_seen
    );

    // the multi-rank report over all of them (what `strobe report DIR` and the ranks panel run)
    let names: Vec<String> = traces.iter().map(|t| t.path.display().to_string()).collect();
    let pairs: Vec<(&str, &strobe_store::Store)> =
        names.iter().map(String::as_str).zip(traces.iter().map(|t| &*t.store)).collect();
    let mut secs = Vec::new();
    let mut last = None;
    let peak = AnonPeak::start();
    for _ in 0..o.runs.max(1) {
        let t = Instant::now();
        let r = strobe_analysis::ranks::report::multi_rank_report(
            &pairs,
            strobe_analysis::ranks::align::Alignment::CollectiveEnd,
            20,
        );
        secs.push(t.elapsed().as_secs_f64());
        last = Some(r);
    }
    let (pa, _) = peak.finish_both();
    let r = last.expect("at least one run");
    let stragglers: Vec<String> =
        r.stragglers.iter().map(|s| format!("rank {} ({} steps)", s.rank, s.steps.len())).collect();
    println!(
        "\nmulti-rank report over {} ranks (alignment {:?}): median {:.2} s over {} runs; {} steps × {} ranks, {} collectives matched, \
         stragglers: {}; peak RssAnon {:.2} GB",
        r.ranks.len(),
        r.alignment.used,
        median(&secs),
        secs.len(),
        r.steps.len(),
        r.ranks.len(),
        r.collectives.len(),
        if stragglers.is_empty() { "none".to_string() } else { stragglers.join(", ") },
        gb(pa)
    );
    drop(r);
    drop(pairs);

    // stays responsive: timeline frames with every rank open
    let mut ws = Workspace::default();
    for t in traces {
        ws.add_trace(t);
    }
    println!("\ntimeline frames with all {} ranks open, 1920-px plot, 1080 px tall, {} frames each (CPU build; tessellate apart):", ws.traces.len(), o.frames);
    println!(
        "  {:<42} {:>6} {:>10} {:>8} {:>8} {:>14} {:>11} {:>6} {:>8}",
        "situation", "rows", "median ms", "p90 ms", "max ms", "tessellate ms", "prepare ms", "lanes", "items"
    );
    for f in strobe_ui::bench::workspace_frame_bench(&ws, 1920.0, o.frames) {
        println!(
            "  {:<42} {:>6} {:>10.2} {:>8.2} {:>8.2} {:>14.2} {:>11.2} {:>6} {:>8}",
            f.situation,
            f.rows,
            f.median_ms,
            f.p90_ms,
            f.max_ms,
            f.tessellate_median_ms,
            f.prepare_median_ms,
            f.lanes_drawn,
            f.items
        );
    }
    println!(
        "\nprocess at the end: RssAnon {:.2} GB, VmRSS {:.2} GB, VmHWM (lifetime peak RSS) {:.2} GB",
        gb(status_kb("RssAnon:")),
        gb(status_kb("VmRSS:")),
        gb(status_kb("VmHWM:"))
    );
    Ok(())
}
