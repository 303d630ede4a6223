//! Phase timings on stderr when `STROBE_TIMING` is set: how benchmarks find where time goes,
//! the cores the whole process kept busy meanwhile (CPU time over wall time: a phase near 1.0
//! on 2 cores runs alone on one), and (on Linux) the process's anonymous memory as each phase
//! ends: where memory goes.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// Whether the lines are also kept in `KEPT` (`keep_lines`).
static KEEPING: AtomicBool = AtomicBool::new(false);
static KEPT: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// From now on every phase's line is also kept in this process, whether `STROBE_TIMING` is set
/// or not: what a test reads back (`kept_lines`) to see which analyses ran, and how often.
pub fn keep_lines() {
    KEEPING.store(true, Ordering::Relaxed);
}

/// The lines kept since `keep_lines`, in the order their phases ended.
pub fn kept_lines() -> Vec<String> {
    KEPT.lock().map(|k| k.clone()).unwrap_or_default()
}

pub struct Phase {
    label: &'static str,
    t: Instant,
    /// The process's CPU time when the phase began, seconds.
    cpu: f64,
    on: bool,
}

/// When the first phase began: each line also says when its phase ended on that clock, so
/// the critical path through phases on several threads can be read off.
static EPOCH: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();

impl Phase {
    pub fn start(label: &'static str) -> Phase {
        let t = Instant::now();
        EPOCH.get_or_init(|| t);
        let on = KEEPING.load(Ordering::Relaxed) || std::env::var_os("STROBE_TIMING").is_some();
        Phase { label, t, cpu: if on { process_cpu() } else { 0.0 }, on }
    }
}

impl Drop for Phase {
    fn drop(&mut self) {
        if self.on {
            let anon = anon_mb().map(|m| format!("  anon {m:6} MB")).unwrap_or_default();
            let at = EPOCH.get().map(|e| e.elapsed().as_secs_f64() * 1e3).unwrap_or(0.0);
            let wall = self.t.elapsed().as_secs_f64();
            let cores = (process_cpu() - self.cpu) / wall.max(1e-9);
            let line = format!(
                "[timing] {:<28} {:8.1} ms{anon}  ends at {at:7.0} ms  cores {cores:4.2}",
                self.label,
                wall * 1e3
            );
            if KEEPING.load(Ordering::Relaxed) {
                if let Ok(mut k) = KEPT.lock() {
                    k.push(line.clone());
                }
            }
            if std::env::var_os("STROBE_TIMING").is_some() {
                eprintln!("{line}");
            }
        }
    }
}

/// `RssAnon` of this process in MB, where `/proc` has it.
fn anon_mb() -> Option<u64> {
    crate::scratch::memory::own_anonymous().map(|b| b >> 20)
}

/// User and system CPU time of the whole process so far, seconds (0 where unknown).
#[cfg(unix)]
fn process_cpu() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid timespec for clock_gettime to write
    if unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) } != 0 {
        return 0.0;
    }
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

#[cfg(not(unix))]
fn process_cpu() -> f64 {
    0.0
}
