//! While a store is being built, memory the build frees goes back to the OS within 10 ms.
//!
//! mimalloc (the `strobe` binary's allocator) keeps freed memory for `purge_delay` ms (1000 in
//! its v3, which the binary links; 10 in v2) before giving it back, and gives it back only when
//! later allocations come by. A build frees big blocks all the time (a grown span vector's old
//! block, the parse's waves, the staged spans once they are columns), and those stayed resident
//! on top of what is live. On a 2-core machine, the 1.08 GB Kineto trace peaked at
//! 392–416 MB of anonymous memory with 1000 ms, 290–304 MB with 10 ms and 269–274 MB with 0;
//! 0 cost 5 % more CPU time (freed pages faulted in again), 10 ms about none (median of 3).
//! Outside builds the default stays: the timeline's frames free and reuse buffers every few
//! milliseconds, and with 0 a 10 M-span whole-trace frame took 1.9 ms instead of 0.5 ms.
//!
//! Without the `mimalloc` feature (the library's own tests, other allocators) this does
//! nothing. A `MIMALLOC_PURGE_DELAY` set in the environment is the user's choice and is kept.

use std::sync::Mutex;

/// The purge delay while a build runs, ms.
const BUILD_PURGE_DELAY: i64 = 10;

/// Builds in progress, and the delay to restore when the last one ends.
struct Builds {
    count: usize,
    saved: i64,
    /// Memory was found short (`scratch`): the build's delay stays after the builds, for the
    /// analyses that follow (a 250 MB nsys export's report peaked at 314 MB of anonymous
    /// memory with the default delay and 211 MB with none).
    short: bool,
}

impl Builds {
    /// A build starts, the delay being `now`: the delay to set, if it changes.
    fn enter(&mut self, now: i64) -> Option<i64> {
        self.count += 1;
        (self.count == 1).then(|| {
            self.saved = now;
            BUILD_PURGE_DELAY
        })
    }

    /// A build ends: the delay to set, if it changes.
    fn leave(&mut self) -> Option<i64> {
        self.count -= 1;
        (self.count == 0 && !self.short).then_some(self.saved)
    }
}

static BUILDS: Mutex<Builds> = Mutex::new(Builds { count: 0, saved: 0, short: false });

/// Memory is short (a build's arrays went to files): freed memory goes back within 10 ms
/// from now on, builds or not, unless the user set the delay.
pub(crate) fn memory_is_short() {
    if !cfg!(feature = "mimalloc") || std::env::var_os("MIMALLOC_PURGE_DELAY").is_some() {
        return;
    }
    let mut b = BUILDS.lock().unwrap_or_else(|e| e.into_inner());
    if !b.short {
        b.short = true;
        set_purge_delay(BUILD_PURGE_DELAY);
    }
}

/// Held by a [`crate::StoreBuilder`] from its creation until it is dropped.
pub(crate) struct PromptPurge {
    active: bool,
}

impl PromptPurge {
    pub(crate) fn start() -> PromptPurge {
        if !cfg!(feature = "mimalloc") || std::env::var_os("MIMALLOC_PURGE_DELAY").is_some() {
            return PromptPurge { active: false };
        }
        let mut b = BUILDS.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(d) = b.enter(purge_delay()) {
            set_purge_delay(d);
            // mimalloc v3 keeps the first purge deadline an arena was given until it passes:
            // memory freed before the build (the file's detection, a previous store) set it
            // 10 s out at the default delay, and nothing the build freed went back before it.
            // A forced purge clears the deadlines, so the build's frees get the short one.
            collect_now();
        }
        PromptPurge { active: true }
    }
}

impl Drop for PromptPurge {
    fn drop(&mut self) {
        if self.active {
            let mut b = BUILDS.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(d) = b.leave() {
                set_purge_delay(d);
            }
        }
    }
}

/// Gives back now what is freed and waiting for its purge delay (`mi_collect(true)`): for a
/// build's step that frees much just before its peak.
pub(crate) fn collect_now() {
    #[cfg(feature = "mimalloc")]
    // SAFETY: mimalloc's own entry point for eager collection; any thread may call it.
    unsafe {
        libmimalloc_sys::mi_collect(true)
    }
}

/// `mi_option_purge_delay`: its place in `mi_option_e` (mimalloc.h, the same in v2 and v3),
/// which libmimalloc-sys does not name.
#[cfg(feature = "mimalloc")]
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

#[cfg(feature = "mimalloc")]
fn purge_delay() -> i64 {
    // SAFETY: reads one of mimalloc's option values; any thread may call it.
    unsafe { libmimalloc_sys::mi_option_get(MI_OPTION_PURGE_DELAY) as i64 }
}

#[cfg(feature = "mimalloc")]
fn set_purge_delay(ms: i64) {
    // SAFETY: mimalloc reads this option afresh each time it schedules a purge; setting it
    // from any thread is what `mi_option_set` is for.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, ms as _) }
}

#[cfg(not(feature = "mimalloc"))]
fn purge_delay() -> i64 {
    0
}

#[cfg(not(feature = "mimalloc"))]
fn set_purge_delay(_: i64) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_delay_is_restored_when_the_last_of_overlapping_builds_ends() {
        let mut b = Builds { count: 0, saved: 0, short: false };
        assert_eq!(b.enter(1000), Some(BUILD_PURGE_DELAY));
        assert_eq!(b.enter(BUILD_PURGE_DELAY), None, "a second build while one runs finds the delay set");
        assert_eq!(b.leave(), None);
        assert_eq!(b.leave(), Some(1000));
        assert_eq!(b.enter(25), Some(BUILD_PURGE_DELAY));
        assert_eq!(b.leave(), Some(25));
        // once memory was short, the build's delay stays
        b.short = true;
        assert_eq!(b.enter(1000), Some(BUILD_PURGE_DELAY));
        assert_eq!(b.leave(), None);
    }

    /// The option's number is right: mimalloc's default purge delay is 1000 ms in v3 and
    /// 10 ms in v2 (options.c); the options numbered beside it default to 0 or 1.
    #[cfg(feature = "mimalloc")]
    #[test]
    fn the_option_number_is_mimallocs_purge_delay() {
        // other tests' builders may hold the build's delay meanwhile
        let b = BUILDS.lock().unwrap();
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() && b.count == 0 {
            let d = purge_delay();
            assert!(d == 1000 || d == 10, "option 15 reads {d}");
        }
    }
}
