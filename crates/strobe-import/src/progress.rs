use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Shared between a loader and whoever shows its progress (CLI bar, GUI): plain atomics, so
/// reading it never blocks the loader. Setting `cancel` makes the loader stop with
/// `ImportError::Cancelled` at its next check.
#[derive(Default, Debug)]
pub struct Progress {
    pub bytes_total: AtomicU64,
    pub bytes_done: AtomicU64,
    pub events: AtomicU64,
    pub cancel: AtomicBool,
}

impl Progress {
    pub fn add_bytes(&self, n: u64) {
        self.bytes_done.fetch_add(n, Ordering::Relaxed);
    }
    pub fn add_events(&self, n: u64) {
        self.events.fetch_add(n, Ordering::Relaxed);
    }
    pub fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }
}
