//! `strobe bench report FILE`: what the step attribution and the critical paths add to a cold
//! `strobe report` (ingest into a fresh cache, then the whole report). Each run is a pair of
//! fresh processes, one with them and one without (`WITHOUT_ATTRIBUTION` in its environment),
//! taken back to back and in turn first, so a machine whose speed drifts slows both alike;
//! every pair's ratio is printed beside the medians.

use std::path::Path;
use std::process::Command;

/// Set in a `strobe report` child's environment: the report leaves out the step attribution
/// and the critical paths (the baseline). Only this benchmark sets it.
pub const WITHOUT_ATTRIBUTION: &str = "STROBE_BENCH_WITHOUT_ATTRIBUTION";

/// Whether this process's report is the benchmark's baseline.
pub fn attribution_off() -> bool {
    std::env::var_os(WITHOUT_ATTRIBUTION).is_some_and(|v| v == "1")
}

/// One cold report: its time to the answer and its CPU time, seconds.
fn one(exe: &Path, file: &Path, cache: &Path, with: bool) -> anyhow::Result<(f64, f64)> {
    let mut cmd = Command::new(exe);
    cmd.arg("--cache-dir").arg(cache).arg("report").arg(file);
    if with {
        cmd.env_remove(WITHOUT_ATTRIBUTION);
    } else {
        cmd.env(WITHOUT_ATTRIBUTION, "1");
    }
    let m =
        crate::bench_peers::measure(&mut cmd).map_err(|e| anyhow::anyhow!("strobe report {}: {e}", file.display()))?;
    Ok((m.answer_s, m.cpu_s))
}

pub fn run(file: &Path, runs: usize) -> anyhow::Result<()> {
    let file = std::fs::canonicalize(file)?;
    let size = std::fs::metadata(&file)?.len() as f64 / 1e6;
    let exe = std::env::current_exe()?;
    // the input read once into the page cache, as every benchmark here has it
    std::io::copy(&mut std::fs::File::open(&file)?, &mut std::io::sink())?;
    println!(
        "cold strobe report of {} ({size:.1} MB) with and without the step attribution and critical paths, {} pairs (load now: {})",
        file.display(),
        runs.max(1),
        crate::bench_peers::load_avg()
    );
    println!(
        "  {:>4} {:>10} {:>12} {:>7} {:>10} {:>12} {:>7}",
        "pair", "with s", "without s", "ratio", "with CPU", "without CPU", "ratio"
    );
    let (mut with, mut without, mut ratio) = (Vec::new(), Vec::new(), Vec::new());
    let (mut with_cpu, mut without_cpu, mut ratio_cpu) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..runs.max(1) {
        let mut pair = [(0.0, 0.0); 2];
        // in turn first: a drift within the pair weighs on each side alike over the runs
        let order = if i % 2 == 0 { [true, false] } else { [false, true] };
        for w in order {
            // a fresh cache each time: ingest and report, nothing remembered
            let cache = tempfile::tempdir()?;
            pair[usize::from(!w)] = one(&exe, &file, cache.path(), w)?;
        }
        let ([(w, wc), (o, oc)], r, rc) = (pair, pair[0].0 / pair[1].0, pair[0].1 / pair[1].1);
        println!("  {:>4} {w:>10.3} {o:>12.3} {r:>7.3} {wc:>10.3} {oc:>12.3} {rc:>7.3}", i + 1);
        with.push(w);
        without.push(o);
        ratio.push(r);
        with_cpu.push(wc);
        without_cpu.push(oc);
        ratio_cpu.push(rc);
    }
    let m = crate::bench::median;
    println!(
        "  {:>4} {:>10.3} {:>12.3} {:>7.3} {:>10.3} {:>12.3} {:>7.3}",
        "med",
        m(&with),
        m(&without),
        m(&ratio),
        m(&with_cpu),
        m(&without_cpu),
        m(&ratio_cpu)
    );
    println!(
        "  added by the attribution and critical paths: {:+.1} % of the time to the answer (median of the pairs' ratios), {:+.1} % of the CPU time",
        (m(&ratio) - 1.0) * 100.0,
        (m(&ratio_cpu) - 1.0) * 100.0
    );
    Ok(())
}
