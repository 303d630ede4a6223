//! Phase timings on stderr when `STROBE_TIMING` is set: how benchmarks find where time goes.

use std::time::Instant;

pub struct Phase {
    label: &'static str,
    t: Instant,
    on: bool,
}

impl Phase {
    pub fn start(label: &'static str) -> Phase {
        Phase { label, t: Instant::now(), on: std::env::var_os("STROBE_TIMING").is_some() }
    }
}

impl Drop for Phase {
    fn drop(&mut self) {
        if self.on {
            eprintln!("[timing] {:<28} {:8.1} ms", self.label, self.t.elapsed().as_secs_f64() * 1e3);
        }
    }
}
