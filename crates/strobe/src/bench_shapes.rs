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

/// The contenders of one shape, in the order they run within a round.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Who {
    Ingest,
    Report,
    JsonLoad,
    Hta,
    IngestGz,
    GzipDc,
}

const ALL: [Who; 6] = [Who::Ingest, Who::Report, Who::JsonLoad, Who::Hta, Who::IngestGz, Who::GzipDc];

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
        Who::Ingest | Who::IngestGz => {
            cmd = Command::new(&ctx.exe);
            cmd.arg("--cache-dir").arg(&cache).args(["bench", "ingest-once"]);
            cmd.arg(if who == Who::Ingest { raw } else { gz });
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
    // secs[shape][who] over rounds; NaN where a contender failed or is not installed
    let mut secs = vec![vec![Vec::<f64>::new(); ALL.len()]; SHAPES.len()];
    let mut failures = Vec::new();
    println!(
        "four trace shapes of {size_mb} MB, {runs} rounds, contenders round-robin (load now: {})",
        crate::bench_peers::load_avg()
    );
    for round in 0..runs.max(1) {
        for (si, (raw, gz, hta_dir)) in files.iter().enumerate() {
            for (wi, &who) in ALL.iter().enumerate() {
                let Some(mut cmd) = command(who, &ctx, raw, gz, hta_dir, &format!("c{round}-{si}-{wi}")) else {
                    secs[si][wi].push(f64::NAN);
                    continue;
                };
                match measure(&mut cmd) {
                    Ok(m) => secs[si][wi].push(m.answer_s),
                    Err(e) => {
                        failures.push(format!("{} {:?}: {e}", SHAPES[si].name, who));
                        secs[si][wi].push(f64::NAN);
                    }
                }
            }
        }
        eprintln!("round {} of {} done (load {})", round + 1, runs.max(1), crate::bench_peers::load_avg());
    }
    let med = |v: &[f64]| crate::bench::median(&v.iter().copied().filter(|x| x.is_finite()).collect::<Vec<_>>());
    // the median over rounds of a/b, pair by pair
    let ratio = |a: &[f64], b: &[f64]| med(&a.iter().zip(b).map(|(x, y)| x / y).collect::<Vec<_>>());
    let col = |si: usize, w: Who| &secs[si][ALL.iter().position(|&x| x == w).unwrap_or(0)][..];
    println!("\nKineto JSON (seconds are medians; × = the peer's time ÷ Strobe's, median of the rounds' ratios)");
    println!(
        "  {:<16} {:>7} {:>9} {:>9} {:>11} {:>9} {:>9} {:>9}  shape",
        "shape", "MB", "ingest s", "report s", "json.load s", "× ingest", "HTA s", "× report"
    );
    for (si, shape) in SHAPES.iter().enumerate() {
        let mb = std::fs::metadata(&files[si].0).map(|m| m.len() as f64 / 1e6).unwrap_or(f64::NAN);
        println!(
            "  {:<16} {:>7.1} {:>9.3} {:>9.3} {:>11.2} {:>9.1} {:>9.1} {:>9.1}  {}",
            shape.name,
            mb,
            med(col(si, Who::Ingest)),
            med(col(si, Who::Report)),
            med(col(si, Who::JsonLoad)),
            ratio(col(si, Who::JsonLoad), col(si, Who::Ingest)),
            med(col(si, Who::Hta)),
            ratio(col(si, Who::Hta), col(si, Who::Report)),
            shape.what
        );
    }
    println!(
        "\nThe same traces gzipped (level 6): Strobe's ingest of the .json.gz beside its raw ingest and `gzip -dc`"
    );
    println!(
        "  {:<16} {:>7} {:>11} {:>13} {:>11} {:>10}",
        "shape", "gz MB", "gz ingest s", "rate ÷ raw's", "gzip -dc s", "× gz ingest"
    );
    for (si, shape) in SHAPES.iter().enumerate() {
        let mb = std::fs::metadata(&files[si].1).map(|m| m.len() as f64 / 1e6).unwrap_or(f64::NAN);
        println!(
            "  {:<16} {:>7.1} {:>11.3} {:>13.2} {:>11.3} {:>10.2}",
            shape.name,
            mb,
            med(col(si, Who::IngestGz)),
            ratio(col(si, Who::Ingest), col(si, Who::IngestGz)),
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
