//! Loading off the UI thread: one thread per file runs the opener (`strobe_import::open`:
//! any kind of file, or the cached store of a trace) and the analyses its pane shows,
//! reporting through `Progress` atomics; the UI polls once a frame. The only module of the UI
//! that calls the importers.
//! At most one load per core runs at a time (the importer already uses every core): with 64
//! ranks opened at once, the first shows up ~4× sooner and the peak memory is a seventh of
//! letting all 64 map their sources together (`strobe bench ranks --pool`).

use crate::documents::{Document, MemoryDoc, NcuDoc};
use crate::workspace::{FigureSettings, Trace};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::mpsc::{channel, Receiver, TryRecvError};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;
/// A folder's trace files (a folder of ranks opened at once).
pub use strobe_import::trace_files_in;
use strobe_import::{LoadOptions, Progress, Source};

pub struct Job {
    pub path: PathBuf,
    /// The files opened together share a batch (Open… replaces what is open once the first
    /// of its batch arrives).
    pub batch: u64,
    pub progress: Arc<Progress>,
    pub started: Instant,
    rx: Receiver<Result<Document, String>>,
}

impl Job {
    pub fn fraction(&self) -> f32 {
        let t = self.progress.bytes_total.load(Ordering::Relaxed);
        let d = self.progress.bytes_done.load(Ordering::Relaxed);
        if t == 0 {
            0.0
        } else {
            (d as f64 / t as f64).min(1.0) as f32
        }
    }

    pub fn cancel(&self) {
        self.progress.cancel.store(true, Ordering::Relaxed);
    }

    pub fn cancelled(&self) -> bool {
        self.progress.cancelled()
    }
}

pub enum LoadEvent {
    Loaded { doc: Document, batch: u64 },
    Failed { path: PathBuf, error: String },
}

/// Loads running now, and the most allowed.
#[derive(Default)]
struct Slots {
    running: Mutex<usize>,
    freed: Condvar,
    limit: usize,
}

impl Slots {
    fn acquire(&self) {
        let mut n = self.running.lock().unwrap_or_else(|e| e.into_inner());
        while *n >= self.limit.max(1) {
            n = self.freed.wait(n).unwrap_or_else(|e| e.into_inner());
        }
        *n += 1;
    }
    fn release(&self) {
        let mut n = self.running.lock().unwrap_or_else(|e| e.into_inner());
        *n = n.saturating_sub(1);
        self.freed.notify_one();
    }
}

#[derive(Default)]
pub struct Loader {
    pub jobs: Vec<Job>,
    pub cache_dir: Option<PathBuf>,
    pub no_cache: bool,
    slots: Arc<Slots>,
}

impl Loader {
    pub fn new(cache_dir: Option<PathBuf>) -> Loader {
        let limit = std::thread::available_parallelism().map_or(2, |n| n.get()).max(2);
        Loader { jobs: Vec::new(), cache_dir, no_cache: false, slots: Arc::new(Slots { limit, ..Slots::default() }) }
    }

    pub fn busy(&self) -> bool {
        !self.jobs.is_empty()
    }

    /// Starts loading `path`, a trace's figures to compute under `settings`; `repaint` is
    /// called when the result is ready.
    pub fn start(&mut self, path: &Path, batch: u64, settings: FigureSettings, repaint: impl Fn() + Send + 'static) {
        let progress = Arc::new(Progress::default());
        let (tx, rx) = channel();
        let opts = self.options(Some(progress.clone()));
        let p = path.to_path_buf();
        let slots = Arc::clone(&self.slots);
        std::thread::Builder::new()
            .name("strobe-load".into())
            .spawn(move || {
                slots.acquire();
                let cancelled = opts.progress.as_ref().is_some_and(|p| p.cancel.load(Ordering::Relaxed));
                let r = if cancelled {
                    Err(format!("{}: cancelled", p.display()))
                } else {
                    load_document(&p, &opts, &settings)
                };
                slots.release();
                let _ = tx.send(r);
                repaint();
            })
            .expect("spawn loader thread");
        self.jobs.push(Job { path: path.to_path_buf(), batch, progress, started: Instant::now(), rx });
    }

    fn options(&self, progress: Option<Arc<Progress>>) -> LoadOptions {
        LoadOptions {
            cache_dir: self.cache_dir.clone(),
            no_cache: self.no_cache,
            progress,
            defer_write: false,
            write_behind: true,
        }
    }

    /// Loads one file on this thread (tests, benchmarks).
    pub fn load_blocking(&self, path: &Path, settings: &FigureSettings) -> Result<Document, String> {
        load_document(path, &self.options(None), settings)
    }

    /// Finished loads since the last call.
    pub fn poll(&mut self) -> Vec<LoadEvent> {
        let mut out = Vec::new();
        self.jobs.retain(|j| match j.rx.try_recv() {
            Ok(Ok(d)) => {
                out.push(LoadEvent::Loaded { doc: d, batch: j.batch });
                false
            }
            Ok(Err(e)) => {
                out.push(LoadEvent::Failed { path: j.path.clone(), error: e });
                false
            }
            Err(TryRecvError::Empty) => true,
            Err(TryRecvError::Disconnected) => {
                out.push(LoadEvent::Failed { path: j.path.clone(), error: "loader thread died".into() });
                false
            }
        });
        out
    }
}

/// Opens one file of any kind and derives what its pane shows (what the loader thread runs;
/// tests and benchmarks call it directly).
pub fn load_document(path: &Path, opts: &LoadOptions, settings: &FigureSettings) -> Result<Document, String> {
    if let Some(procs) = strobe_import::nsys_window_ranks(path, opts) {
        let stores = strobe_import::load_nsys_processes(path, &procs, opts).map_err(|e| e.to_string())?;
        let traces = stores
            .into_iter()
            .map(|s| s.map(|s| Trace::new(path.to_path_buf(), s, settings)).map_err(|e| e.to_string()))
            .collect::<Result<Vec<_>, _>>()?;
        return Ok(Document::Ranks(traces));
    }
    let source = strobe_import::open(path, opts).map_err(|e| e.to_string())?;
    let cancelled = || opts.progress.as_ref().is_some_and(|p| p.cancelled());
    let stop = || format!("{}: loading cancelled", path.display());
    let path = path.to_path_buf();
    Ok(match source {
        Source::Trace(store) => Document::Trace(Box::new(Trace::new(path, *store, settings))),
        Source::MemorySnapshot(snapshot) => {
            if cancelled() {
                return Err(stop());
            }
            let doc = MemoryDoc::open(path, snapshot, cancelled).ok_or_else(stop)?;
            Document::Memory(Box::new(doc))
        }
        Source::MemoryStats(stats) => Document::MemoryStats(Box::new(strobe_analysis::memory::stats_report(&stats))),
        Source::Ncu(ncu) => Document::Ncu(Box::new(NcuDoc { path, report: strobe_analysis::roofline::analyse(&ncu) })),
        Source::FlightRecorder(dump) => Document::FlightRecorder(Box::new(dump)),
    })
}
