//! Figures computed after a trace is on screen: a `Later<T>` is filled once by the analyses
//! thread (or by whoever needs it first and waits), and read without blocking by the panes.
//! The thread runs on a pool that leaves one core to the UI, at a lower priority, so the
//! frames drawn meanwhile keep their budget.

use std::sync::OnceLock;

pub use strobe_analysis::figures::Later;

/// The pool the analyses thread's parallel work runs on: every core but one (one at
/// least), its threads at a lower scheduling priority than the UI's.
pub fn pool() -> &'static rayon::ThreadPool {
    static POOL: OnceLock<rayon::ThreadPool> = OnceLock::new();
    POOL.get_or_init(|| {
        let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
        rayon::ThreadPoolBuilder::new()
            .num_threads(cores.saturating_sub(1).max(1))
            .thread_name(|i| format!("strobe-analyses-{i}"))
            .start_handler(|_| lower_priority())
            .build()
            .unwrap_or_else(|_| rayon::ThreadPoolBuilder::new().num_threads(1).build().expect("a one-thread pool"))
    })
}

/// Runs `f` on the overview pool: one thread per core, a step below the UI's priority (well
/// above the analyses thread's), so a trace's first figures follow its first frame at once,
/// and sixty-four ranks opened together do not start sixty-four analyses at once (each waits
/// its turn, first opened first).
pub fn spawn_overview(f: impl FnOnce() + Send + 'static) {
    static POOL: OnceLock<Option<rayon::ThreadPool>> = OnceLock::new();
    let pool = POOL.get_or_init(|| {
        let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
        rayon::ThreadPoolBuilder::new()
            .num_threads(cores)
            .thread_name(|i| format!("strobe-overview-{i}"))
            // a step below the UI thread: a frame drawn while the overview runs waits for
            // no core (on 2 cores, 4 ms of a frame's work took up to 50 ms of wall time),
            // and between frames the pool has every core
            .start_handler(|_| set_nice(3))
            // a panicking analysis leaves its figures unset (the hook printed why), not the
            // app down (rayon aborts on a spawned job's panic without a handler)
            .panic_handler(|_| eprintln!("strobe: an analysis failed: its figures stay unset"))
            .build()
            .ok()
    });
    match pool {
        Some(p) => p.spawn(f),
        // no pool could start: computed where asked (the loader's thread), as a load did
        None => f(),
    }
}

/// Runs `f` on a thread of its own, inside `pool()`.
pub fn spawn(name: &str, f: impl FnOnce() + Send + 'static) {
    let spawned = std::thread::Builder::new().name(name.to_string()).spawn(move || {
        lower_priority();
        pool().install(f)
    });
    if let Err(e) = spawned {
        // the figures stay unset: the panes go on without them
        eprintln!("strobe: could not start the analyses thread: {e}");
    }
}

/// Lowers the calling thread's priority (Linux: the nice value is per thread).
fn lower_priority() {
    set_nice(10);
}

/// The calling thread's nice value (Linux: a thread's own).
fn set_nice(nice: i32) {
    #[cfg(target_os = "linux")]
    // SAFETY: setpriority only reads its integer arguments; `0` is the calling thread
    unsafe {
        libc::setpriority(libc::PRIO_PROCESS, 0, nice);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = nice;
}
