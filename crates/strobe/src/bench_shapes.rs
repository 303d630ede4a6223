//! `strobe bench peers` without a file: the same comparison on four trace shapes the project
//! generates from real traces, so a speed-up on one shape cannot hide a slowdown on another.
//! GPT (the bundled sample: Python ops over a transformer's kernels), a CNN (the public ResNet
//! trace: dense kernel and memcpy rows, few Python events), a `python_function`-heavy one (the
//! public MI300 trace recorded `with_stack`) and a multi-stream NCCL one (a DDP rank). Each is
//! scaled to --size-mb with distinct args (no args text repeats, as in a real long trace) and
//! gzipped beside itself (level 6).
//!
//! Every contender runs as a fresh process, and the runs go round-robin (run 1 of everything,
//! then run 2, …) so that the machine's drift falls on all of them alike. Ratios are taken
//! pair by pair within a round, then the median over rounds.
//!
//! Strobe's raw ingest runs twice in a row: first right after the Python peers, then again at
//! once. On a VM that reports freed memory to its host, a process that touches memory another
//! has just freed waits while the host supplies it again, and a third of a second's ingest
//! feels that far more than a Python peer's seconds do; the second run is the ingest without
//! that wait. Its CPU time over two cores is what the ingest would take with both cores busy
//! throughout: the ratio no scheduling can beat on this machine.

use crate::bench_peers::measure;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

/// One trace shape: its name, what it is, and the real trace it is scaled from.
pub(crate) struct Shape {
    pub(crate) name: &'static str,
    pub(crate) what: &'static str,
    pub(crate) from: &'static str,
}

pub(crate) const SHAPES: [Shape; 4] = [
    Shape { name: "gpt", what: "GPT training steps, H200 (the sample)", from: "sample-traces/gpt_train.json.gz" },
    Shape {
        name: "cnn",
        what: "ResNet-50, dense kernel and memcpy rows",
        from: "sample-traces/kineto_tbplugin_resnet50.json.gz",
    },
    Shape {
        name: "python_function",
        what: "MI300 ResNet recorded with_stack",
        from: "sample-traces/tracelens_mi300_resnet_act_checkpoint.json.gz",
    },
    Shape { name: "nccl", what: "DDP rank, compute and NCCL streams", from: "sample-traces/ddp_rank0.json.gz" },
];

/// The generated raw and gzipped inputs of `shape` in `dir`, made when missing.
fn inputs(shape: &Shape, dir: &Path, size_mb: u64) -> anyhow::Result<(PathBuf, PathBuf)> {
    std::fs::create_dir_all(dir)?;
    let raw = dir.join(format!("{}_{size_mb}m.json", shape.name));
    let gz = dir.join(format!("{}_{size_mb}m.json.gz", shape.name));
    if !raw.exists() {
        eprintln!("generating {} from {}", raw.display(), shape.from);
        let o = crate::scale::Options { rank: None, renumber_steps: false, period_ns: None, distinct_args: true };
        let part = raw.with_extension("json.part");
        crate::scale::generate(Path::new(shape.from), size_mb << 20, &part, o)?;
        std::fs::rename(&part, &raw)?;
    }
    if !gz.exists() {
        eprintln!("gzipping {}", raw.display());
        let part = gz.with_extension("gz.part");
        let mut enc = flate2::write::GzEncoder::new(std::fs::File::create(&part)?, flate2::Compression::new(6));
        std::io::copy(&mut std::fs::File::open(&raw)?, &mut enc)?;
        enc.finish()?.flush()?;
        std::fs::rename(&part, &gz)?;
    }
    Ok((raw, gz))
}

/// The contenders of one shape.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Who {
    JsonLoad,
    Hta,
    /// The raw ingest right after the Python peers, which have just freed gigabytes.
    Ingest,
    /// The same ingest again at once: after a Strobe process, which freed little.
    IngestAgain,
    /// After a Strobe ingest too, as the raw one it is compared with.
    IngestGz,
    Report,
    GzipDc,
}

/// The order they run in within a round.
const ALL: [Who; 7] = [Who::JsonLoad, Who::Hta, Who::Ingest, Who::IngestAgain, Who::IngestGz, Who::Report, Who::GzipDc];

struct Ctx {
    exe: PathBuf,
    scratch: tempfile::TempDir,
    has_hta: bool,
}

fn command(who: Who, ctx: &Ctx, raw: &Path, gz: &Path, hta_dir: &Path, tag: &str) -> Option<Command> {
    let cache = ctx.scratch.path().join(tag);
    let _ = std::fs::remove_dir_all(&cache);
    let mut cmd;
    match who {
        Who::Ingest | Who::IngestAgain | Who::IngestGz => {
            cmd = Command::new(&ctx.exe);
            cmd.arg("--cache-dir").arg(&cache).args(["bench", "ingest-once"]);
            cmd.arg(if who == Who::IngestGz { gz } else { raw });
        }
        Who::Report => {
            cmd = Command::new(&ctx.exe);
            cmd.arg("--cache-dir").arg(&cache).arg("report").arg(raw);
        }
        Who::JsonLoad => {
            cmd = Command::new("python3");
            cmd.arg("-c").arg(format!("{}{}", crate::bench_peers::PY_OPEN, crate::bench_peers::PY_JSON_LOAD)).arg(raw);
        }
        Who::Hta => {
            if !ctx.has_hta {
                return None;
            }
            cmd = Command::new("python3");
            cmd.arg("-c").arg(crate::bench_peers::PY_HTA).arg(hta_dir);
        }
        Who::GzipDc => {
            cmd = Command::new("sh");
            cmd.arg("-c").arg("gzip -dc \"$1\" > /dev/null").arg("gzip").arg(gz);
        }
    }
    Some(cmd)
}

pub fn run(dir: &Path, size_mb: u64, runs: usize) -> anyhow::Result<()> {
    let ctx = Ctx {
        exe: std::env::current_exe()?,
        scratch: tempfile::tempdir()?,
        has_hta: crate::bench_peers::python_has("hta.trace_analysis"),
    };
    let mut files = Vec::new();
    for shape in &SHAPES {
        let (raw, gz) = inputs(shape, dir, size_mb)?;
        // HTA reads a directory of rank traces: one holding a link to the raw file
        let hta_dir = ctx.scratch.path().join(format!("hta-{}", shape.name));
        std::fs::create_dir_all(&hta_dir)?;
        let link = hta_dir.join(raw.file_name().unwrap_or_default());
        if !link.exists() {
            std::os::unix::fs::symlink(std::fs::canonicalize(&raw)?, &link)?;
        }
        files.push((raw, gz, hta_dir));
    }
    // every input read once, so each contender finds it in the page cache
    for (raw, gz, _) in &files {
        let _ = std::io::copy(&mut std::fs::File::open(raw)?, &mut std::io::sink());
        let _ = std::io::copy(&mut std::fs::File::open(gz)?, &mut std::io::sink());
    }
    // secs[shape][who] and cpu[shape][who] over rounds; NaN where a contender failed or is not
    // installed
    let mut secs = vec![vec![Vec::<f64>::new(); ALL.len()]; SHAPES.len()];
    let mut cpu = secs.clone();
    let mut failures = Vec::new();
    println!(
        "four trace shapes of {size_mb} MB, {runs} rounds, contenders round-robin (load now: {})",
        crate::bench_peers::load_avg()
    );
    for round in 0..runs.max(1) {
        for (si, (raw, gz, hta_dir)) in files.iter().enumerate() {
            for (wi, &who) in ALL.iter().enumerate() {
                let m = match command(who, &ctx, raw, gz, hta_dir, &format!("c{round}-{si}-{wi}")) {
                    None => None,
                    Some(mut cmd) => {
                        measure(&mut cmd).map_err(|e| failures.push(format!("{} {:?}: {e}", SHAPES[si].name, who))).ok()
                    }
                };
                secs[si][wi].push(m.as_ref().map_or(f64::NAN, |m| m.answer_s));
                cpu[si][wi].push(m.as_ref().map_or(f64::NAN, |m| m.cpu_s));
            }
        }
        eprintln!("round {} of {} done (load {})", round + 1, runs.max(1), crate::bench_peers::load_avg());
    }
    let med = |v: &[f64]| crate::bench::median(&v.iter().copied().filter(|x| x.is_finite()).collect::<Vec<_>>());
    // the median over rounds of a/b, pair by pair
    let ratio = |a: &[f64], b: &[f64]| med(&a.iter().zip(b).map(|(x, y)| x / y).collect::<Vec<_>>());
    let at = |w: Who| ALL.iter().position(|&x| x == w).unwrap_or(0);
    let col = |si: usize, w: Who| &secs[si][at(w)][..];
    let cpu_of = |si: usize, w: Who| &cpu[si][at(w)][..];
    // the back-to-back ingest's CPU time spread over two cores
    let on_two_cores = |si: usize| cpu_of(si, Who::IngestAgain).iter().map(|c| c / 2.0).collect::<Vec<f64>>();
    println!("\nKineto JSON (seconds are medians; × = the peer's time ÷ Strobe's, median of the rounds' ratios)");
    println!(
        "  ingest: right after the Python peers; again: at once after it; CPU: user + system, all threads; CPU ÷ 2: again's over two cores"
    );
    println!(
        "  {:<16} {:>7} {:>11} {:>9} {:>6} {:>9} {:>9} {:>6} {:>9} {:>9} {:>9}  shape",
        "shape",
        "MB",
        "json.load s",
        "ingest s",
        "CPU s",
        "× ingest",
        "again s",
        "CPU s",
        "× again",
        "CPU ÷ 2 s",
        "× CPU ÷ 2"
    );
    for (si, shape) in SHAPES.iter().enumerate() {
        let mb = std::fs::metadata(&files[si].0).map(|m| m.len() as f64 / 1e6).unwrap_or(f64::NAN);
        let two_cores = on_two_cores(si);
        println!(
            "  {:<16} {:>7.1} {:>11.2} {:>9.3} {:>6.2} {:>9.1} {:>9.3} {:>6.2} {:>9.1} {:>9.3} {:>9.1}  {}",
            shape.name,
            mb,
            med(col(si, Who::JsonLoad)),
            med(col(si, Who::Ingest)),
            med(cpu_of(si, Who::Ingest)),
            ratio(col(si, Who::JsonLoad), col(si, Who::Ingest)),
            med(col(si, Who::IngestAgain)),
            med(cpu_of(si, Who::IngestAgain)),
            ratio(col(si, Who::JsonLoad), col(si, Who::IngestAgain)),
            med(&two_cores),
            ratio(col(si, Who::JsonLoad), &two_cores),
            shape.what
        );
    }
    println!("\nThe first answer: Strobe's cold report beside HTA (TraceAnalysis + temporal breakdown + overlap)");
    println!("  {:<16} {:>9} {:>9} {:>9}", "shape", "report s", "HTA s", "× report");
    for (si, shape) in SHAPES.iter().enumerate() {
        println!(
            "  {:<16} {:>9.3} {:>9.1} {:>9.1}",
            shape.name,
            med(col(si, Who::Report)),
            med(col(si, Who::Hta)),
            ratio(col(si, Who::Hta), col(si, Who::Report)),
        );
    }
    println!(
        "\nThe same traces gzipped (level 6): Strobe's ingest of the .json.gz (after a Strobe ingest) beside the raw ingest again and `gzip -dc`"
    );
    println!(
        "  {:<16} {:>7} {:>11} {:>6} {:>13} {:>11} {:>10}",
        "shape", "gz MB", "gz ingest s", "CPU s", "rate ÷ raw's", "gzip -dc s", "× gz ingest"
    );
    for (si, shape) in SHAPES.iter().enumerate() {
        let mb = std::fs::metadata(&files[si].1).map(|m| m.len() as f64 / 1e6).unwrap_or(f64::NAN);
        println!(
            "  {:<16} {:>7.1} {:>11.3} {:>6.2} {:>13.2} {:>11.3} {:>10.2}",
            shape.name,
            mb,
            med(col(si, Who::IngestGz)),
            med(cpu_of(si, Who::IngestGz)),
            ratio(col(si, Who::IngestAgain), col(si, Who::IngestGz)),
            med(col(si, Who::GzipDc)),
            ratio(col(si, Who::GzipDc), col(si, Who::IngestGz)),
        );
    }
    if !ctx.has_hta {
        println!("  HTA not installed (pip install -r tests/tools/peers_requirements.txt)");
    }
    for f in failures {
        println!("  failed: {f}");
    }
    Ok(())
}
