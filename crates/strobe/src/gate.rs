//! Exit code 4: a regression gate (`strobe diff --fail-if`) was crossed. The output is complete;
//! the code tells a CI pipeline to stop.

use std::sync::atomic::{AtomicBool, Ordering};

static CROSSED: AtomicBool = AtomicBool::new(false);

pub fn crossed() {
    CROSSED.store(true, Ordering::Relaxed);
}

pub fn was_crossed() -> bool {
    CROSSED.load(Ordering::Relaxed)
}
