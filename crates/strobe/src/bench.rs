//! `strobe bench`: the store's speed bars, measured on inputs the project generates itself
//! (a real trace scaled up by repeating its events shifted in time), never on committed
//! big files. Every figure is a median over repeated runs.

use anyhow::Context;
use clap::{Args, Subcommand};
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(Args, Debug)]
pub struct BenchArgs {
    #[command(subcommand)]
    pub what: BenchWhat,
}

#[derive(Subcommand, Debug)]
pub enum BenchWhat {
    /// Write a chrome trace of about SIZE_MB by repeating FROM's events shifted in time.
    Generate {
        #[arg(long)]
        from: PathBuf,
        #[arg(long)]
        size_mb: u64,
        #[arg(short, long)]
        out: PathBuf,
        /// Set the output's `distributedInfo.rank` (with --world-size): one rank of a scaled run.
        #[arg(long, requires = "world_size")]
        rank: Option<i64>,
        #[arg(long, requires = "rank")]
        world_size: Option<i64>,
        /// Number each copy's `ProfilerStep#N` on from the previous copy's (distinct steps).
        #[arg(long)]
        renumber_steps: bool,
        /// Shift Kineto's per-event counters in the args too (External id, Record function id,
        /// Sequence number, Ev Idx, Python id and parent id), so no args text repeats between
        /// copies, as in a real trace that long.
        #[arg(long)]
        distinct_args: bool,
    },
    /// Ingest FILE into a fresh store (median of --runs), with throughput and peak memory.
    Ingest {
        file: PathBuf,
        #[arg(long, default_value_t = 3)]
        runs: usize,
        /// Also time `python3 -c 'import json; json.load(open(F))'` for the ratio.
        #[arg(long)]
        python: bool,
    },
    /// Reopen FILE's cached store in fresh processes: time to the first answered window query.
    Reopen {
        file: PathBuf,
        #[arg(long, default_value_t = 7)]
        runs: usize,
    },
    /// One reopen, in this process (used by `reopen`).
    #[command(hide = true)]
    ReopenOnce { file: PathBuf },
    /// One timeline frame's shapes, built headlessly for a 1920-px view, on a synthetic trace
    /// of N spans, at whole-trace, mid and deep zoom (per-frame CPU time).
    Frame {
        #[arg(long, default_value_t = 10_000_000)]
        spans: usize,
        #[arg(long, default_value_t = 30)]
        frames: usize,
    },
    /// Open a memory snapshot as the pane does (parse, analysis, every device's allocation
    /// timeline), then build whole memory-pane frames headlessly (1920×1080).
    Memory {
        file: PathBuf,
        #[arg(long, default_value_t = 3)]
        runs: usize,
        #[arg(long, default_value_t = 60)]
        frames: usize,
    },
    /// Many ranks at once: generate N rank files of about SIZE_MB from the 2-rank DDP
    /// sample (even ranks from rank 0, odd from rank 1, `distributedInfo.rank` set), open them
    /// all in parallel as the GUI does (cold, into a fresh cache; then warm, from it) with wall
    /// time and peak memory, time the multi-rank report, then build timeline frames with all open.
    Ranks {
        #[arg(long, default_value_t = 64)]
        ranks: usize,
        #[arg(long, default_value_t = 50)]
        size_mb: u64,
        /// Where the rank files are (generated there when missing).
        #[arg(long, default_value = "bench-data/ranks64")]
        dir: PathBuf,
        /// Frames per timeline situation.
        #[arg(long, default_value_t = 30)]
        frames: usize,
        /// Cold and warm opens, and reports, each (figures are medians).
        #[arg(long, default_value_t = 3)]
        runs: usize,
        /// Open with at most K loads at a time (K worker threads over the GUI's `load_document`)
        /// instead of the GUI loader's one thread per file.
        #[arg(long)]
        pool: Option<usize>,
        /// The traces to scale, used in turn (default: sample-traces/ddp_rank{0,1}.json.gz).
        #[arg(long)]
        from: Vec<PathBuf>,
    },
    /// Open FILES in the headless app and run its frames at --hz while the loader works and
    /// --after frames past it: the worst frame (target: a 1 GB snapshot opens with every
    /// frame under 30 ms), and the time to the first frame that draws the file. The cache is
    /// a fresh temporary one, so traces are ingested cold, unless --warm.
    Open {
        files: Vec<PathBuf>,
        #[arg(long, default_value_t = 60.0)]
        hz: f64,
        #[arg(long, default_value_t = 120)]
        after: usize,
        #[arg(long, default_value_t = 1)]
        runs: usize,
        /// Give up after this many seconds.
        #[arg(long, default_value_t = 300)]
        timeout_s: u64,
        /// Warm: fill one cache with an untimed open first, then every run opens from it
        /// (a reopened trace; the default is a fresh cache per run, a cold ingest).
        #[arg(long)]
        warm: bool,
    },
    /// Open FILES in the headless app (from a cache filled beforehand), wait for every figure,
    /// then set View ▸ Steps to --pattern and back to the built-in rules --runs times, running
    /// the app's frames at --hz while the steps and what follows them are found again: every
    /// frame's time (the UI thread must not do that work) and the time until they are in.
    Steps {
        files: Vec<PathBuf>,
        #[arg(long, default_value = "ProfilerStep#\\d+")]
        pattern: String,
        #[arg(long, default_value_t = 60.0)]
        hz: f64,
        #[arg(long, default_value_t = 3)]
        runs: usize,
        #[arg(long, default_value_t = 300)]
        timeout_s: u64,
    },
    /// The viewer's CPU use while idle: starts `strobe FILE` (needs a display: under Xvfb set
    /// DISPLAY), waits --warmup seconds for it to load and settle, then reads the process's
    /// CPU time (utime + stime of /proc/PID/stat) over --seconds with no input.
    Idle {
        file: PathBuf,
        #[arg(long, default_value_t = 10.0)]
        seconds: f64,
        #[arg(long, default_value_t = 8.0)]
        warmup: f64,
        #[arg(long, default_value_t = 1)]
        runs: usize,
    },
    /// Strobe (`strobe report`, cold) beside Python's json.load, orjson and HTA where they are
    /// installed, on FILE: each one's time, peak memory and ratio to Strobe (fresh processes).
    /// Without FILE: four trace shapes generated from real traces (GPT, CNN,
    /// `python_function`-heavy, NCCL), one row each: Strobe's ingest (right after the Python
    /// peers, then again at once, with its CPU time over two cores) beside json.load, its cold
    /// report beside HTA, and the gzipped trace beside the raw ingest and `gzip -dc`.
    Peers {
        file: Option<PathBuf>,
        #[arg(long, default_value_t = 3)]
        runs: usize,
        /// Size of each generated shape (without FILE).
        #[arg(long, default_value_t = 300)]
        size_mb: u64,
        /// Where the generated shapes are kept (made when missing).
        #[arg(long, default_value = "bench-data/shapes")]
        dir: PathBuf,
    },
    /// The ingest's event scanner beside sonic-rs and simd-json on FILE's event array, one
    /// thread each (medians of --runs, alternated).
    Scanners {
        file: PathBuf,
        #[arg(long, default_value_t = 3)]
        runs: usize,
    },
    /// One cold ingest of FILE into the cache (a fresh temporary one without --cache-dir), in
    /// this process (used by `peers`).
    #[command(hide = true)]
    IngestOnce { file: PathBuf },
    /// What the step attribution and critical paths add to a cold `strobe report FILE`
    /// (ingest into a fresh cache + report): fresh processes with and without them, in pairs,
    /// each pair's times and ratio, then the medians.
    Report {
        file: PathBuf,
        #[arg(long, default_value_t = 3)]
        runs: usize,
    },
    /// Thousand-rank merge: generate N synthetic rank summaries of --steps steps
    /// (scaled from --from, one planted straggler) into --dir, then merge them as `strobe
    /// report DIR` does in fresh processes: median time and peak RSS.
    Cluster {
        #[command(flatten)]
        job: crate::bench_cluster::Opts,
        #[arg(long, default_value_t = 3)]
        runs: usize,
    },
    /// The ranks pane's heat map over `cluster`'s summaries (generated when missing), headless
    /// at 1600×1000, paging through the ranks: per-frame CPU time.
    HeatMap {
        #[command(flatten)]
        job: crate::bench_cluster::Opts,
        #[arg(long, default_value_t = 120)]
        frames: usize,
    },
    /// One merge of a summary folder, in this process (used by `cluster`).
    #[command(hide = true)]
    ClusterOnce { dir: PathBuf },
    /// LOD window queries over one lane of N synthetic spans, at whole-trace, mid and deep zoom.
    Lod {
        #[arg(long, default_value_t = 10_000_000)]
        spans: u64,
        #[arg(long, default_value_t = 1920)]
        pixels: i64,
    },
}

pub fn run(a: BenchArgs, cache: Option<&Path>) -> anyhow::Result<()> {
    match a.what {
        BenchWhat::Generate { from, size_mb, out, rank, world_size, renumber_steps, distinct_args } => {
            let o =
                crate::scale::Options { rank: rank.zip(world_size), renumber_steps, period_ns: None, distinct_args };
            let n = crate::scale::generate(&from, size_mb << 20, &out, o)?;
            println!("wrote {} ({} events, {:.1} MB)", out.display(), n, std::fs::metadata(&out)?.len() as f64 / 1e6);
            Ok(())
        }
        BenchWhat::Ingest { file, runs, python } => ingest(&file, runs, python),
        BenchWhat::Reopen { file, runs } => reopen(&file, runs, cache),
        BenchWhat::ReopenOnce { file } => reopen_once(&file, cache),
        BenchWhat::Cluster { job, runs } => crate::bench_cluster::run(job, runs, cache),
        BenchWhat::ClusterOnce { dir } => crate::bench_cluster::once(&dir),
        BenchWhat::HeatMap { job, frames } => crate::bench_cluster::heat_map(job, frames, cache),
        BenchWhat::Lod { spans, pixels } => lod(spans, pixels),
        BenchWhat::Peers { file: Some(file), runs, .. } => crate::bench_peers::run(&file, runs),
        BenchWhat::Peers { file: None, runs, size_mb, dir } => crate::bench_shapes::run(&dir, size_mb, runs),
        BenchWhat::Scanners { file, runs } => crate::bench_scanners::run(&file, runs),
        BenchWhat::IngestOnce { file } => ingest_once(&file, cache),
        BenchWhat::Report { file, runs } => crate::bench_report::run(&file, runs),
        BenchWhat::Open { files, hz, after, runs, timeout_s, warm } => {
            crate::bench_app::open(files, hz, after, runs, timeout_s, warm)
        }
        BenchWhat::Idle { file, seconds, warmup, runs } => crate::bench_app::idle(&file, seconds, warmup, runs, cache),
        BenchWhat::Frame { spans, frames } => frame(spans, frames),
        BenchWhat::Steps { files, pattern, hz, runs, timeout_s } => {
            crate::bench_app::steps(files, &pattern, hz, runs, timeout_s)
        }
        BenchWhat::Memory { file, runs, frames } => memory(&file, runs, frames),
        BenchWhat::Ranks { ranks: n, size_mb, dir, frames, runs, pool, from } => {
            crate::bench_ranks::run(&crate::bench_ranks::Opts { n, size_mb, dir, frames, runs, pool, from })
        }
    }
}

/// This process's CPU time so far (user + system, all threads), seconds.
pub(crate) fn cpu_seconds() -> f64 {
    // SAFETY: a plain out-parameter.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// The median of a benchmark's runs (`strobe_analysis::stats`); NaN when there were none.
pub fn median(v: &[f64]) -> f64 {
    strobe_analysis::stats::median(v).unwrap_or(f64::NAN)
}

/// Samples this process's anonymous resident memory (what it allocated, not the mapped
/// input) and its whole resident set (VmRSS: also the mapped inputs and stores) every few ms
/// and keeps the peaks.
pub(crate) struct AnonPeak {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    handle: Option<std::thread::JoinHandle<(u64, u64)>>,
}

pub(crate) fn status_kb(field: &str) -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|x| x.parse().ok())
        .unwrap_or(0)
}

impl AnonPeak {
    pub(crate) fn start() -> AnonPeak {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let s2 = stop.clone();
        let handle = std::thread::spawn(move || {
            let (mut anon, mut rss) = (0, 0);
            loop {
                let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
                let kb = |field: &str| {
                    s.lines()
                        .find(|l| l.starts_with(field))
                        .and_then(|l| l.split_whitespace().nth(1))
                        .and_then(|x| x.parse::<u64>().ok())
                        .unwrap_or(0)
                };
                anon = anon.max(kb("RssAnon:"));
                rss = rss.max(kb("VmRSS:"));
                if s2.load(std::sync::atomic::Ordering::Relaxed) {
                    return (anon, rss);
                }
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
        });
        AnonPeak { stop, handle: Some(handle) }
    }
    /// Peak RssAnon, kB.
    fn finish(self) -> u64 {
        self.finish_both().0
    }
    /// Peak (RssAnon, VmRSS), kB.
    pub(crate) fn finish_both(mut self) -> (u64, u64) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        self.handle.take().map(|h| h.join().unwrap_or((0, 0))).unwrap_or((0, 0))
    }
}

fn ingest_once(file: &Path, cache: Option<&Path>) -> anyhow::Result<()> {
    let temp = tempfile::tempdir()?;
    let dir = cache.map(Path::to_path_buf).unwrap_or_else(|| temp.path().to_path_buf());
    let store = strobe_import::load(file, &strobe_import::LoadOptions::cached_in(dir))?;
    println!("{} events", store.meta.load.events);
    // the store is built and written: that is the answer (`peers` times the output's end);
    // freeing and unmapping at exit are not the ingest's
    crate::load::end_stdout();
    Ok(())
}

fn ingest(file: &Path, runs: usize, python: bool) -> anyhow::Result<()> {
    let size = std::fs::metadata(file)?.len();
    let mut secs = Vec::new();
    let mut cpus = Vec::new();
    let mut peaks = Vec::new();
    let mut events = 0;
    let base_anon = status_kb("RssAnon:");
    for _ in 0..runs.max(1) {
        let dir = tempfile::tempdir()?;
        let opts = strobe_import::LoadOptions::cached_in(dir.path().to_path_buf());
        let peak = AnonPeak::start();
        let t = Instant::now();
        let c = cpu_seconds();
        let store = strobe_import::load(file, &opts)?;
        secs.push(t.elapsed().as_secs_f64());
        cpus.push(cpu_seconds() - c);
        peaks.push(peak.finish().saturating_sub(base_anon) as f64 / 1024.0);
        events = store.meta.load.events;
        drop(store);
    }
    let s = median(&secs);
    let mb = size as f64 / 1e6;
    println!("ingest {}: {:.1} MB, {} events, {} cores", file.display(), mb, events, rayon::current_num_threads());
    println!(
        "  median {:.3} s over {} runs → {:.0} MB/s, {:.2} M events/s",
        s,
        secs.len(),
        mb / s,
        events as f64 / s / 1e6
    );
    // CPU time is what other work on a shared machine cannot inflate much: with N cores the
    // wall time can be no less than CPU / N
    let c = median(&cpus);
    println!(
        "  CPU (user + system, all threads) median {:.3} s → {:.0} MB per CPU-second; wall / (CPU / {}) = {:.2}",
        c,
        mb / c,
        rayon::current_num_threads(),
        s / (c / rayon::current_num_threads() as f64)
    );
    println!("  peak anonymous memory during ingest (beyond the mapped input): median {:.0} MB", median(&peaks));
    if python {
        let mut ps = Vec::new();
        for _ in 0..runs.max(1) {
            let t = Instant::now();
            let st = std::process::Command::new("python3")
                .arg("-c")
                .arg("import json,sys; json.load(open(sys.argv[1]))")
                .arg(file)
                .status()
                .context("running python3")?;
            anyhow::ensure!(st.success(), "python3 json.load failed");
            ps.push(t.elapsed().as_secs_f64());
        }
        let p = median(&ps);
        println!("  python3 json.load: median {:.3} s ({:.0} MB/s) → Strobe is {:.1}× faster", p, mb / p, p / s);
    }
    Ok(())
}

fn reopen(file: &Path, runs: usize, cache: Option<&Path>) -> anyhow::Result<()> {
    // make sure the store exists
    let opts = strobe_import::LoadOptions {
        cache_dir: cache.map(|p| p.to_path_buf()),
        no_cache: false,
        progress: None,
        defer_write: false,
        write_behind: false,
    };
    drop(strobe_import::load(file, &opts)?);
    let exe = std::env::current_exe()?;
    let mut inner = Vec::new();
    let mut wall = Vec::new();
    let mut rss = Vec::new();
    for _ in 0..runs.max(1) {
        let mut cmd = std::process::Command::new(&exe);
        cmd.arg("bench").arg("reopen-once").arg(file);
        if let Some(c) = cache {
            cmd.arg("--cache-dir").arg(c);
        }
        let t = Instant::now();
        let out = cmd.output()?;
        wall.push(t.elapsed().as_secs_f64() * 1e3);
        anyhow::ensure!(out.status.success(), "reopen-once failed: {}", String::from_utf8_lossy(&out.stderr));
        let s = String::from_utf8_lossy(&out.stdout);
        let mut it = s.split_whitespace();
        inner.push(it.next().and_then(|x| x.parse().ok()).unwrap_or(f64::NAN));
        rss.push(it.next().and_then(|x| x.parse().ok()).unwrap_or(f64::NAN));
    }
    println!(
        "reopen {} ({:.1} MB source): open → first window query median {:.1} ms (process wall {:.1} ms), RSS after {:.1} MB, {} runs",
        file.display(),
        std::fs::metadata(file)?.len() as f64 / 1e6,
        median(&inner),
        median(&wall),
        median(&rss),
        runs
    );
    Ok(())
}

fn reopen_once(file: &Path, cache: Option<&Path>) -> anyhow::Result<()> {
    let t = Instant::now();
    let opts = strobe_import::LoadOptions {
        cache_dir: cache.map(|p| p.to_path_buf()),
        no_cache: false,
        progress: None,
        defer_write: false,
        write_behind: false,
    };
    let store = strobe_import::load(file, &opts)?;
    // the first question a viewer asks: what is in the middle tenth of the busiest lane
    // (counted from the lane index, as a viewer would: a lane view touches every column)
    let index = store.lane_index();
    let lane = (0..index.len()).max_by_key(|&l| index[l].member_end - index[l].member_begin).unwrap_or(0);
    let li = index[lane];
    let lane = lane as u32;
    let (t0, t1) = (li.min_start, li.max_end);
    let w = (t1 - t0) / 10;
    let mut n = 0u64;
    store.lod_query(lane, t0 + 4 * w, t0 + 5 * w, (w / 1920).max(1), |_, _| n += 1);
    let ms = t.elapsed().as_secs_f64() * 1e3;
    println!(
        "{ms:.3} {:.1} {n} anon={:.1}MB file={:.1}MB",
        status_kb("VmRSS:") as f64 / 1024.0,
        status_kb("RssAnon:") as f64 / 1024.0,
        status_kb("RssFile:") as f64 / 1024.0
    );
    Ok(())
}

fn lod(spans: u64, pixels: i64) -> anyhow::Result<()> {
    use strobe_store::{SpanInput, StoreBuilder};
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("lod.strobe");
    let t = Instant::now();
    let mut b = StoreBuilder::new(strobe_store::Output::file(path.clone(), [0; 4])?)?;
    let lane = b.lane(strobe_model::LaneKind::GpuStream { device: 0, stream: 7 });
    let names: Vec<u32> = (0..64).map(|i| b.intern(&format!("kernel_{i}"))).collect();
    // kernel-like spans: mostly 1–20 µs, some 0.1–2 ms, small launch gaps, an idle gap now and then
    let mut x: u64 = 0x9E3779B97F4A7C15;
    let mut rnd = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut ts = 0i64;
    b.reserve_spans(spans as usize);
    for _ in 0..spans {
        let r = rnd();
        let dur = if r % 20 == 0 { 100_000 + (r >> 8) as i64 % 1_900_000 } else { 1_000 + (r >> 8) as i64 % 19_000 };
        let gap = if r % 1000 == 1 { 2_000_000 } else { 500 + (r >> 20) as i64 % 3000 };
        b.push_span(SpanInput {
            lane,
            start: ts,
            end: ts + dur,
            name: names[(r >> 32) as usize % names.len()],
            cat: 0,
            kind: strobe_model::SpanKind::Kernel,
            flags: 0,
            args: &[],
            correlation: 0,
            copy_dir: None,
        })?;
        ts += dur + gap;
    }
    let meta = strobe_model::TraceMeta::new(strobe_model::SourceFormat::Chrome, "synthetic");
    let built = b.finish(&meta)?;
    let build_s = t.elapsed().as_secs_f64();
    let store = strobe_store::cache::open_built(built)?;
    let v = store.lane_view(lane);
    let (t0, t1) = (v.starts[0], *v.ends.last().unwrap());
    println!(
        "LOD on one lane of {} spans ({:.1} s of trace, store {:.0} MB, built in {:.1} s), {} px:",
        spans,
        (t1 - t0) as f64 / 1e9,
        std::fs::metadata(&path)?.len() as f64 / 1e6,
        build_s,
        pixels
    );
    for (label, frac) in
        [("whole trace", 1.0f64), ("mid (1/1000)", 1e-3), ("deep (1/10^6)", 1e-6), ("deepest (1/10^8)", 1e-8)]
    {
        let w = (((t1 - t0) as f64) * frac).max(pixels as f64) as i64;
        let mut times = Vec::new();
        let mut items = Vec::new();
        for i in 0..41 {
            let off = if frac >= 1.0 { 0 } else { ((t1 - t0 - w) as f64 * (i as f64 / 41.0)) as i64 };
            let a = t0 + off;
            let tq = Instant::now();
            let mut n = 0u64;
            store.lod_query(lane, a, a + w, (w / pixels).max(1), |_, _| n += 1);
            times.push(tq.elapsed().as_secs_f64() * 1e3);
            items.push(n as f64);
        }
        let mx = times.iter().cloned().fold(0.0, f64::max);
        println!(
            "  {label:<18} median {:.3} ms, max {:.3} ms, {:.0} items (median)",
            median(&times),
            mx,
            median(&items)
        );
    }
    Ok(())
}

fn frame(spans: usize, frames: usize) -> anyhow::Result<()> {
    let t = Instant::now();
    // built into a file and mapped, as the viewer maps a real store (100 M spans held in
    // memory next to their builder would not fit a workstation)
    let dir = tempfile::tempdir_in(std::env::temp_dir())?;
    let out = strobe_store::Output::file(dir.path().join("frame.strobe"), [0; 4])?;
    let store = strobe_ui::bench::synthetic_store_to(spans, out);
    println!(
        "synthetic trace of {} spans built in {:.1} s; one frame of the timeline, 1920 px:",
        store.span_count(),
        t.elapsed().as_secs_f64()
    );
    println!(
        "  {:<22} {:>12} {:>10} {:>8} {:>8} {:>14} {:>11} {:>8}",
        "zoom", "window", "median ms", "p90 ms", "max ms", "tessellate ms", "prepare ms", "items"
    );
    for r in strobe_ui::bench::frame_bench(store, 1920.0, frames) {
        println!(
            "  {:<22} {:>12} {:>10.2} {:>8.2} {:>8.2} {:>14.2} {:>11.2} {:>8}",
            r.zoom,
            strobe_analysis::report::fmt_ns(r.window_ns),
            r.median_ms,
            r.p90_ms,
            r.max_ms,
            r.tessellate_median_ms,
            r.prepare_median_ms,
            r.items
        );
    }
    Ok(())
}

fn memory(file: &Path, runs: usize, frames: usize) -> anyhow::Result<()> {
    let size = std::fs::metadata(file).with_context(|| file.display().to_string())?.len();
    let (mut parse, mut build, mut total) = (Vec::new(), Vec::new(), Vec::new());
    let mut peak = 0;
    let mut last = None;
    for _ in 0..runs.max(1) {
        drop(last.take()); // the previous run's pane goes before the next is measured
        let mem = AnonPeak::start();
        let t0 = Instant::now();
        let snap = strobe_import::memory_snapshot::import(file).map_err(|e| anyhow::anyhow!("{e}"))?;
        let t1 = Instant::now();
        // as the loader does: the analysis beside the timelines
        let doc = strobe_ui::documents::MemoryDoc::open(file.to_path_buf(), snap, || false).expect("not cancelled");
        let mut pane = strobe_ui::memory::MemoryPane::new(&doc);
        for d in 0..doc.report.devices.len() {
            pane.device = d;
            let _t = strobe_store::timing::Phase::start("memory: pane state");
            let _ = pane.state(&doc);
        }
        pane.device = 0;
        let t3 = Instant::now();
        peak = peak.max(mem.finish());
        parse.push((t1 - t0).as_secs_f64());
        build.push((t3 - t1).as_secs_f64());
        total.push((t3 - t0).as_secs_f64());
        last = Some((doc, pane));
    }
    let (doc, pane) = last.expect("at least one run");
    let entries: usize = doc.snapshot.device_traces.iter().map(Vec::len).sum();
    let allocs: usize = pane.states.iter().flatten().map(|s| s.timeline.allocs.len()).sum();
    println!(
        "{}: {:.1} MB, {} trace entries, {} allocations, {} devices",
        file.display(),
        size as f64 / 1e6,
        entries,
        allocs,
        doc.report.devices.len()
    );
    println!(
        "  open (median of {}): {:.2} s = parse {:.2} s ({:.0} MB/s) + analysis beside timelines, first pane state {:.2} s; peak anon memory {:.0} MB",
        total.len(),
        median(&total),
        median(&parse),
        size as f64 / 1e6 / median(&parse.clone()),
        median(&build),
        peak as f64 / 1024.0
    );
    println!("  memory pane frames, 1920x1080, {frames} per situation:");
    println!(
        "  {:<42} {:>9} {:>8} {:>8} {:>8} {:>10} {:>10}",
        "situation", "median ms", "p90 ms", "max ms", "rasters", "raster ms", "work"
    );
    for r in strobe_ui::memory::bench::memory_frame_bench(&doc, pane, frames) {
        println!(
            "  {:<42} {:>9.2} {:>8.2} {:>8.2} {:>8} {:>10.1} {:>10}",
            r.situation, r.median_ms, r.p90_ms, r.max_ms, r.rasters, r.raster_median_ms, r.bands
        );
    }
    Ok(())
}
