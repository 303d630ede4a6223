//! Phase timings on stderr when `STROBE_TIMING` is set: how benchmarks find where time goes,
//! and (on Linux) the process's anonymous memory as each phase ends: where memory goes.

use std::time::Instant;

pub struct Phase {
    label: &'static str,
    t: Instant,
    on: bool,
}

/// When the first phase began: each line also says when its phase ended on that clock, so
/// the critical path through phases on several threads can be read off.
static EPOCH: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();

impl Phase {
    pub fn start(label: &'static str) -> Phase {
        let t = Instant::now();
        EPOCH.get_or_init(|| t);
        Phase { label, t, on: std::env::var_os("STROBE_TIMING").is_some() }
    }
}

impl Drop for Phase {
    fn drop(&mut self) {
        if self.on {
            let anon = anon_mb().map(|m| format!("  anon {m:6} MB")).unwrap_or_default();
            let at = EPOCH.get().map(|e| e.elapsed().as_secs_f64() * 1e3).unwrap_or(0.0);
            eprintln!(
                "[timing] {:<28} {:8.1} ms{anon}  ends at {at:7.0} ms",
                self.label,
                self.t.elapsed().as_secs_f64() * 1e3
            );
        }
    }
}

/// `RssAnon` of this process in MB, where `/proc` has it.
fn anon_mb() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("RssAnon:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024)
}
