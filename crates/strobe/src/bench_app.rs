//! `strobe bench open`, `steps` and `idle`: the whole viewer's responsiveness. `open`
//! runs the app headless (`strobe_ui::bench::open_frames_bench`) while a file loads; `idle`
//! starts the real window and reads its CPU time while nothing happens.

use crate::bench::median;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use strobe_analysis::stats;

pub fn open(files: Vec<PathBuf>, hz: f64, after: usize, runs: usize, timeout_s: u64, warm: bool) -> anyhow::Result<()> {
    anyhow::ensure!(!files.is_empty(), "bench open: name the files to open");
    let size: u64 = files.iter().map(|f| std::fs::metadata(f).map(|m| m.len()).unwrap_or(0)).sum();
    println!(
        "open {} file(s), {:.1} MB, in the headless app at {hz} Hz (1920x1080), {after} frames after the load, {}:",
        files.len(),
        size as f64 / 1e6,
        if warm { "every run from one cache filled beforehand (warm)" } else { "fresh cache each run (cold)" }
    );
    let shared = tempfile::tempdir()?;
    if warm {
        fill_cache(&files, shared.path(), hz, timeout_s).map_err(|e| anyhow::anyhow!("bench open --warm: {e}"))?;
    }
    println!(
        "  {:>4} {:>8} {:>10} {:>8} {:>8} {:>11} {:>9} {:>9} {:>10} {:>9} {:>9} | {:>13} {:>9}",
        "run",
        "first s",
        "overview s",
        "load s",
        "frames",
        "median ms",
        "p99 ms",
        "worst ms",
        "after: med",
        "p99",
        "worst",
        "cpu: worst ms",
        "after"
    );
    let (mut worst_all, mut worst_cpu_all, mut loads, mut firsts) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut overviews = Vec::new();
    for run in 0..runs.max(1) {
        let fresh = tempfile::tempdir()?;
        let cache = if warm { shared.path() } else { fresh.path() };
        let r = strobe_ui::bench::open_frames_bench(
            files.clone(),
            Some(cache.to_path_buf()),
            hz,
            after,
            Duration::from_secs(timeout_s),
        );
        let worst = |v: &[f64]| v.iter().copied().fold(0.0, f64::max);
        let p99 = |v: &[f64]| stats::percentile(v, 99.0).unwrap_or(0.0);
        let secs = |s: Option<f64>| s.map(|s| format!("{s:.3}")).unwrap_or_else(|| "timeout".into());
        println!(
            "  {:>4} {:>8} {:>10} {:>8} {:>8} {:>11.2} {:>9.2} {:>9.2} {:>10.2} {:>9.2} {:>9.2} | {:>13.2} {:>9.2}",
            run + 1,
            secs(r.first_frame_s),
            r.overview_s.map(|s| format!("{s:.3}")).unwrap_or_else(|| "-".into()),
            r.load_s.map(|s| format!("{s:.2}")).unwrap_or_else(|| "timeout".into()),
            r.during.len(),
            median(&r.during),
            p99(&r.during),
            worst(&r.during),
            median(&r.after),
            p99(&r.after),
            worst(&r.after),
            worst(&r.during_cpu),
            worst(&r.after_cpu),
        );
        worst_all.push(worst(&r.during).max(worst(&r.after)));
        worst_cpu_all.push(worst(&r.during_cpu).max(worst(&r.after_cpu)));
        if let Some(s) = r.load_s {
            loads.push(s);
        }
        firsts.extend(r.first_frame_s);
        overviews.extend(r.overview_s);
        // a cold run's store is still being written behind its window: the next run starts
        // once it is, so that it neither shares the cores with that write nor pulls the
        // directory from under it
        anyhow::ensure!(written(cache, timeout_s), "bench open: writing the cache timed out");
    }
    println!(
        "  median over {} runs: first frame {:.3} s, overview {}, load {:.2} s, worst frame {:.2} ms wall, {:.2} ms CPU of the UI thread (bar: < 30 ms)",
        worst_all.len(),
        median(&firsts),
        if overviews.is_empty() { "-".to_string() } else { format!("{:.3} s", median(&overviews)) },
        median(&loads),
        median(&worst_all),
        median(&worst_cpu_all)
    );
    Ok(())
}

/// Waits (at most `timeout_s`) until no store is being written into `cache`; whether none is.
fn written(cache: &Path, timeout_s: u64) -> bool {
    let writing = || strobe_store::cache::writes_in_progress(cache);
    let until = Instant::now() + Duration::from_secs(timeout_s);
    while writing() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    !writing()
}

/// utime + stime of a process, in seconds.
fn cpu_seconds(pid: u32, ticks_per_s: f64) -> anyhow::Result<f64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    // fields after the command name (which may hold spaces) in parentheses: state is field 3
    let rest = &s[s.rfind(')').ok_or_else(|| anyhow::anyhow!("odd /proc/{pid}/stat"))? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let field = |n: usize| f.get(n - 3).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    Ok((field(14) + field(15)) / ticks_per_s)
}

fn clock_ticks() -> f64 {
    std::process::Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
        .unwrap_or(100.0)
}

pub fn idle(file: &Path, seconds: f64, warmup: f64, runs: usize, cache: Option<&Path>) -> anyhow::Result<()> {
    anyhow::ensure!(std::env::var_os("DISPLAY").is_some(), "bench idle needs a display (DISPLAY, e.g. Xvfb)");
    let exe = std::env::current_exe()?;
    let tck = clock_ticks();
    println!(
        "idle window CPU: `strobe {}`, {warmup} s to load and settle, then {seconds} s untouched:",
        file.display()
    );
    let mut pcts = Vec::new();
    for run in 0..runs.max(1) {
        let mut cmd = std::process::Command::new(&exe);
        if let Some(c) = cache {
            cmd.arg("--cache-dir").arg(c);
        }
        let mut child = cmd.arg(file).stdout(std::process::Stdio::null()).spawn()?;
        let pid = child.id();
        std::thread::sleep(Duration::from_secs_f64(warmup));
        let (c0, t0) = (cpu_seconds(pid, tck), Instant::now());
        std::thread::sleep(Duration::from_secs_f64(seconds));
        let (c1, wall) = (cpu_seconds(pid, tck), t0.elapsed().as_secs_f64());
        let exited = child.try_wait()?.is_some();
        let _ = child.kill();
        let _ = child.wait();
        anyhow::ensure!(!exited, "the viewer exited during the measurement");
        let (c0, c1) = (c0?, c1?);
        let pct = (c1 - c0) / wall * 100.0;
        println!(
            "  run {}: CPU {:.3} s over {:.1} s = {:.2} % of one core (total since start {:.2} s)",
            run + 1,
            c1 - c0,
            wall,
            pct,
            c1
        );
        pcts.push(pct);
    }
    println!("  median over {} runs: {:.2} % of one core", pcts.len(), median(&pcts));
    Ok(())
}

/// Opens `files` once in the headless app with `cache` as its cache, and waits until their
/// stores are written there: later opens from it are warm.
fn fill_cache(files: &[PathBuf], cache: &Path, hz: f64, timeout_s: u64) -> Result<(), &'static str> {
    let r = strobe_ui::bench::open_frames_bench(
        files.to_vec(),
        Some(cache.to_path_buf()),
        hz,
        1,
        Duration::from_secs(timeout_s),
    );
    if r.load_s.is_none() {
        return Err("filling the cache timed out");
    }
    // a compressed store is written behind the window (`LoadOptions::write_behind`): the
    // runs start once its file is in the cache, or the first one would ingest again
    if !written(cache, timeout_s) {
        return Err("writing the cache timed out");
    }
    Ok(())
}

/// `strobe bench steps`: frames while the step rule changes (`step_rule_frames_bench`).
pub fn steps(files: Vec<PathBuf>, pattern: &str, hz: f64, runs: usize, timeout_s: u64) -> anyhow::Result<()> {
    anyhow::ensure!(!files.is_empty(), "bench steps: name the files to open");
    let size: u64 = files.iter().map(|f| std::fs::metadata(f).map(|m| m.len()).unwrap_or(0)).sum();
    let cache = tempfile::tempdir()?;
    // the stores cached first: the runs measure the step rule, not an ingest
    fill_cache(&files, cache.path(), hz, timeout_s).map_err(|e| anyhow::anyhow!("bench steps: {e}"))?;
    println!(
        "View > Steps set to {pattern:?} and back, {runs} time(s), on {} file(s), {:.1} MB, headless app at {hz} Hz \
         (1920x1080); each change's frames until its figures are in:",
        files.len(),
        size as f64 / 1e6
    );
    println!(
        "  {:>4} {:>24} {:>7} {:>10} {:>10} {:>9} {:>13} {:>9}",
        "run", "rule", "frames", "median ms", "worst ms", "> 16 ms", "cpu: worst ms", "settle s"
    );
    let mut patterns = Vec::new();
    for _ in 0..runs {
        patterns.push(pattern);
        patterns.push("");
    }
    let results = strobe_ui::bench::step_rule_frames_bench(
        files,
        Some(cache.path().to_path_buf()),
        &patterns,
        hz,
        Duration::from_secs(timeout_s),
    );
    let mut worst_all: Vec<f64> = Vec::new();
    for (i, (r, p)) in results.iter().zip(&patterns).enumerate() {
        let worst = r.wall.iter().cloned().fold(0.0, f64::max);
        worst_all.push(worst);
        let over = r.wall.iter().filter(|&&ms| ms > 16.0).count();
        let cpu_worst = r.cpu.iter().cloned().fold(0.0, f64::max);
        let rule = if p.is_empty() { "(built-in rules)".to_string() } else { p.to_string() };
        println!(
            "  {:>4} {:>24} {:>7} {:>10.2} {:>10.2} {:>9} {:>13.2} {:>9}",
            i + 1,
            rule,
            r.wall.len(),
            median(&r.wall),
            worst,
            over,
            cpu_worst,
            r.settle_s.map(|s| format!("{s:.2}")).unwrap_or_else(|| "timeout".into())
        );
    }
    println!("  worst frame over all changes: {:.2} ms", worst_all.iter().cloned().fold(0.0, f64::max));
    Ok(())
}
