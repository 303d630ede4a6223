//! `strobe bench peers FILE`: Strobe beside the tools users would otherwise reach for, on the
//! same file, in one run. Every contender runs as a fresh child process
//! whose wall time, peak resident memory (`wait4`'s `ru_maxrss`, the child alone) and peak
//! anonymous memory (`RssAnon` sampled: what must fit in RAM) are taken; Strobe's run is `strobe report FILE` into an empty cache (ingest + report, cold;
//! `--json` for an Nsight Systems export).
//! The answer's time is when the child's output ends: Strobe closes its stdout once the
//! report is out and caches its store after that (`load::after_answer`); for every
//! other tool it is its exit.
//! Peers that are not installed are listed as such (see tests/tools/peers_requirements.txt).
//! An Nsight Systems `.sqlite` export has peers of its own (`sqlite_peers`): a plain Python
//! sqlite3 script computing the report's headline figures, and nsys-ai, cold and warm.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// One contender: a command line, and what it does to the file.
struct Peer {
    name: &'static str,
    what: &'static str,
    cmd: Command,
}

/// Reads FILE (gzipped or not) as text in Python: the prelude of every Python peer.
pub(crate) const PY_OPEN: &str = "import gzip,sys\n\
f=sys.argv[1]\n\
raw=open(f,'rb').read()\n\
raw=gzip.decompress(raw) if raw[:2]==b'\\x1f\\x8b' else raw\n";

/// Python's own parser on the text `PY_OPEN` read (after it).
pub(crate) const PY_JSON_LOAD: &str = "import json\njson.loads(raw)\n";

/// HTA reads a directory of rank traces; its parser chosen by its own default.
pub(crate) const PY_HTA: &str = "import sys,logging\n\
logging.disable(logging.WARNING)\n\
from hta.trace_analysis import TraceAnalysis\n\
a=TraceAnalysis(trace_dir=sys.argv[1])\n\
a.get_temporal_breakdown(visualize=False)\n\
a.get_comm_comp_overlap(visualize=False)\n";

/// The plain-SQL peer for nsys exports (stdlib only; opens the file read-only, immutable).
const PY_NSYS_PLAIN_SQL: &str = include_str!("../../../tests/tools/nsys_plain_sql.py");

/// Whether nsys-ai can read an export through DuckDB's sqlite_scanner. Without it nsys-ai
/// falls back to a path 14× slower that writes indexes into the file it reads.
const PY_DUCKDB_SQLITE: &str = "import duckdb\nduckdb.connect().load_extension('sqlite_scanner')\n";

fn is_sqlite(file: &Path) -> bool {
    let mut head = [0u8; 16];
    std::fs::File::open(file).and_then(|mut f| std::io::Read::read_exact(&mut f, &mut head)).is_ok()
        && &head == b"SQLite format 3\0"
}

fn on_path(exe: &str) -> bool {
    Command::new(exe)
        .arg("--help")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

/// A copy of `file` in a fresh directory under `root` (nsys-ai writes its Parquet cache, and
/// without DuckDB indexes, beside the file it reads: never beside the user's).
fn copy_into(root: &Path, file: &Path, i: usize) -> PathBuf {
    let dir = root.join(format!("copy{i}"));
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::create_dir_all(&dir);
    let to = dir.join(file.file_name().unwrap_or_else(|| std::ffi::OsStr::new("export.sqlite")));
    if let Err(e) = std::fs::copy(file, &to) {
        eprintln!("strobe bench peers: copying {} for nsys-ai: {e}", file.display());
    }
    to
}

/// Peers for an Nsight Systems export: Strobe warm, plain SQL, and nsys-ai cold and warm.
fn sqlite_peers(
    file: &Path,
    exe: &Path,
    scratch: &Path,
    peers: &mut Vec<Box<dyn Fn(usize) -> Peer>>,
    missing: &mut Vec<&'static str>,
) {
    {
        // one untimed report fills the cache; every timed run then opens the cached store
        let (exe, cache, file) = (exe.to_path_buf(), scratch.join("strobe-warm"), file.to_path_buf());
        peers.push(Box::new(move |i| {
            if i == 0 {
                let _ = Command::new(&exe)
                    .arg("--cache-dir")
                    .arg(&cache)
                    .arg("report")
                    .arg(&file)
                    .arg("--json")
                    .stdout(std::process::Stdio::null())
                    .status();
            }
            let mut cmd = Command::new(&exe);
            cmd.arg("--cache-dir").arg(&cache).arg("report").arg(&file).arg("--json");
            Peer { name: "strobe report warm", what: "report with the store (and its report) cached", cmd }
        }));
    }
    {
        let file = file.to_path_buf();
        peers.push(Box::new(move |_| {
            let mut cmd = Command::new("python3");
            cmd.arg("-c").arg(PY_NSYS_PLAIN_SQL).arg(&file);
            Peer { name: "plain SQL", what: "python sqlite3: busy, overlap, top kernels, streams, runtime", cmd }
        }));
    }
    if !on_path("nsys-ai") {
        missing.push("nsys-ai");
        return;
    }
    if !python_runs(PY_DUCKDB_SQLITE) {
        missing.push("DuckDB's sqlite_scanner for nsys-ai (duckdb-ext-sqlite; see the requirements file)");
        return;
    }
    let manifest = |cmd: &mut Command, copy: &Path| {
        cmd.args(["skill", "run", "profile_health_manifest"]).arg(copy);
    };
    {
        let (file, root) = (file.to_path_buf(), scratch.join("nsys-ai-cold"));
        peers.push(Box::new(move |i| {
            let copy = copy_into(&root, &file, i);
            let mut cmd = Command::new("nsys-ai");
            manifest(&mut cmd, &copy);
            Peer { name: "nsys-ai", what: "health manifest, cold (builds its Parquet cache)", cmd }
        }));
    }
    {
        let (file, root) = (file.to_path_buf(), scratch.join("nsys-ai-warm"));
        peers.push(Box::new(move |i| {
            let copy =
                root.join("copy0").join(file.file_name().unwrap_or_else(|| std::ffi::OsStr::new("export.sqlite")));
            if i == 0 {
                let copy = copy_into(&root, &file, 0);
                let mut fill = Command::new("nsys-ai");
                manifest(&mut fill, &copy);
                let _ = fill.stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null()).status();
            }
            let mut cmd = Command::new("nsys-ai");
            manifest(&mut cmd, &copy);
            Peer { name: "nsys-ai warm", what: "health manifest from its Parquet cache", cmd }
        }));
    }
}

/// Peers for a chrome / Kineto trace: Python's json.load, orjson and HTA (which reads the
/// directory `hta_dir`, holding a link to `file`).
fn json_peers(
    file: &Path,
    hta_dir: &Path,
    peers: &mut Vec<Box<dyn Fn(usize) -> Peer>>,
    missing: &mut Vec<&'static str>,
) {
    for (module, name, what, body) in [
        ("json", "python json.load", "parse to Python objects", PY_JSON_LOAD),
        ("orjson", "orjson.loads", "parse to Python objects", "import orjson\norjson.loads(raw)\n"),
    ] {
        if !python_has(module) {
            missing.push(module);
            continue;
        }
        let file = file.to_path_buf();
        let script = format!("{PY_OPEN}{body}");
        peers.push(Box::new(move |_| {
            let mut cmd = Command::new("python3");
            cmd.arg("-c").arg(&script).arg(&file);
            Peer { name, what, cmd }
        }));
    }
    if python_has("hta.trace_analysis") {
        let dir = hta_dir.to_path_buf();
        peers.push(Box::new(move |_| {
            let mut cmd = Command::new("python3");
            cmd.arg("-c").arg(PY_HTA).arg(&dir);
            Peer { name: "HTA", what: "TraceAnalysis + temporal breakdown + overlap", cmd }
        }));
    } else {
        missing.push("hta (HolisticTraceAnalysis)");
    }
}

pub(crate) fn python_has(module: &str) -> bool {
    python_runs(&format!("import {module}"))
}

/// Whether `python3 -c script` runs to a zero exit.
fn python_runs(script: &str) -> bool {
    Command::new("python3")
        .arg("-c")
        .arg(script)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

/// What one run of a contender took.
pub(crate) struct Measured {
    /// Seconds until its output ended (the answer given).
    pub(crate) answer_s: f64,
    /// Seconds until it exited.
    exit_s: f64,
    /// Its CPU time (user + system, all its threads), seconds: what other work on a shared
    /// machine inflates least.
    pub(crate) cpu_s: f64,
    peak_rss_mb: f64,
    /// Its anonymous memory at its highest, sampled every 2 ms (`RssAnon`): the heap, without
    /// the file pages it maps (the input, a store, a build's scratch files), which the kernel
    /// can drop or write out.
    peak_anon_mb: f64,
}

/// Samples `pid`'s `RssAnon` every 2 ms until `stop`; the highest seen, in MB.
fn sample_anon(pid: u32, stop: std::sync::Arc<std::sync::atomic::AtomicBool>) -> std::thread::JoinHandle<f64> {
    std::thread::spawn(move || {
        let path = format!("/proc/{pid}/status");
        let mut peak_kb = 0u64;
        while !stop.load(std::sync::atomic::Ordering::Relaxed) {
            if let Ok(s) = std::fs::read_to_string(&path) {
                let kb = s
                    .lines()
                    .find_map(|l| l.strip_prefix("RssAnon:"))
                    .and_then(|v| v.split_whitespace().next().and_then(|n| n.parse::<u64>().ok()));
                peak_kb = peak_kb.max(kb.unwrap_or(0));
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        peak_kb as f64 / 1024.0
    })
}

/// Runs `cmd` to its end, or says why it failed.
pub(crate) fn measure(cmd: &mut Command) -> Result<Measured, String> {
    cmd.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped());
    let t = Instant::now();
    let mut child = cmd.spawn().map_err(|e| e.to_string())?;
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let anon = sample_anon(child.id(), stop.clone());
    let err = child.stderr.take().map(|mut e| {
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = std::io::Read::read_to_string(&mut e, &mut s);
            s
        })
    });
    let mut answer_s = f64::NAN;
    if let Some(mut out) = child.stdout.take() {
        let _ = std::io::copy(&mut out, &mut std::io::sink());
        answer_s = t.elapsed().as_secs_f64();
    }
    let waited = wait_with_rusage(&child);
    let exit_s = t.elapsed().as_secs_f64();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let peak_anon_mb = anon.join().unwrap_or(f64::NAN);
    let (status, maxrss_kb, cpu_s) = waited?;
    let err = err.and_then(|h| h.join().ok()).unwrap_or_default();
    if status != 0 {
        let tail: String = err.lines().rev().take(3).collect::<Vec<_>>().join(" | ");
        return Err(format!("exit {status}: {tail}"));
    }
    Ok(Measured { answer_s: answer_s.min(exit_s), exit_s, cpu_s, peak_rss_mb: maxrss_kb as f64 / 1024.0, peak_anon_mb })
}

/// Reaps `child` with `wait4`, which reports that one child's peak RSS (kB on Linux) and its
/// CPU time (seconds).
#[cfg(unix)]
fn wait_with_rusage(child: &std::process::Child) -> Result<(i32, i64, f64), String> {
    let mut status = 0;
    // SAFETY: plain out-parameters for a child of this process that was not waited for.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut ru) };
    if r < 0 {
        return Err(std::io::Error::last_os_error().to_string());
    }
    let code = if libc::WIFEXITED(status) { libc::WEXITSTATUS(status) } else { 128 + libc::WTERMSIG(status) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    Ok((code, ru.ru_maxrss, tv(ru.ru_utime) + tv(ru.ru_stime)))
}

pub fn run(file: &Path, runs: usize) -> anyhow::Result<()> {
    let file = std::fs::canonicalize(file)?;
    let size = std::fs::metadata(&file)?.len() as f64 / 1e6;
    let exe = std::env::current_exe()?;
    let caches = tempfile::tempdir()?;
    // HTA wants a directory of traces: one holding a link to FILE
    let hta_dir = tempfile::tempdir()?;
    let name = file.file_name().map(PathBuf::from).unwrap_or_else(|| "trace.json".into());
    std::os::unix::fs::symlink(&file, hta_dir.path().join(name))?;

    let mut missing = Vec::new();
    let mut peers: Vec<Box<dyn Fn(usize) -> Peer>> = Vec::new();
    // an export's answer is asked for as JSON: what a script beside the plain-SQL peer reads
    let json = is_sqlite(&file);
    {
        let (exe, caches, file) = (exe.clone(), caches.path().to_path_buf(), file.clone());
        peers.push(Box::new(move |i| {
            let mut cmd = Command::new(&exe);
            cmd.arg("--cache-dir").arg(caches.join(format!("run{i}"))).arg("report").arg(&file);
            if json {
                cmd.arg("--json");
            }
            Peer { name: "strobe report", what: "ingest into a fresh cache + report", cmd }
        }));
    }
    if is_sqlite(&file) {
        sqlite_peers(&file, &exe, caches.path(), &mut peers, &mut missing);
    } else {
        json_peers(&file, hta_dir.path(), &mut peers, &mut missing);
    }

    println!("peers on {} ({size:.1} MB), {} runs each, medians (load now: {})", file.display(), runs, load_avg());
    println!(
        "  {:<18} {:>9} {:>9} {:>9} {:>11} {:>12} {:>9}  what",
        "tool", "answer s", "exit s", "MB/s", "peak RSS MB", "peak anon MB", "× Strobe"
    );
    let mut strobe_s = f64::NAN;
    for make in &peers {
        let mut answers = Vec::new();
        let mut secs = Vec::new();
        let mut rss = Vec::new();
        let mut anon = Vec::new();
        let mut failed = None;
        let mut label = ("", "");
        for i in 0..runs.max(1) {
            let mut p = make(i);
            label = (p.name, p.what);
            match measure(&mut p.cmd) {
                Ok(m) => {
                    answers.push(m.answer_s);
                    secs.push(m.exit_s);
                    rss.push(m.peak_rss_mb);
                    anon.push(m.peak_anon_mb);
                }
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
        }
        if let Some(e) = failed {
            println!("  {:<18} failed: {e}", label.0);
            continue;
        }
        let (a, s, m) = (crate::bench::median(&answers), crate::bench::median(&secs), crate::bench::median(&rss));
        let anon = crate::bench::median(&anon);
        // ratios and MB/s by the answer: what a user waits for
        if strobe_s.is_nan() {
            strobe_s = a;
        }
        println!(
            "  {:<18} {:>9.3} {:>9.3} {:>9.0} {:>11.0} {:>12.0} {:>9.1}  {}",
            label.0,
            a,
            s,
            size / a,
            m,
            anon,
            a / strobe_s,
            label.1
        );
    }
    if !missing.is_empty() {
        println!("  not installed: {} (pip install -r tests/tools/peers_requirements.txt)", missing.join(", "));
    }
    Ok(())
}

pub(crate) fn load_avg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().map(String::from))
        .unwrap_or_else(|| "?".into())
}
