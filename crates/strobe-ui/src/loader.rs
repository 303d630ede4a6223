//! Loading off the UI thread: one thread per file runs the importer (or opens the cached
//! store) and the analyses, reporting through `Progress` atomics; the UI polls once a frame.

use crate::workspace::Trace;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::mpsc::{channel, Receiver, TryRecvError};
use std::sync::Arc;
use std::time::Instant;
use strobe_import::{LoadOptions, Progress};

pub struct Job {
    pub path: PathBuf,
    pub progress: Arc<Progress>,
    pub started: Instant,
    rx: Receiver<Result<Trace, String>>,
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
}

pub enum LoadEvent {
    Loaded(Box<Trace>),
    Failed { path: PathBuf, error: String },
}

#[derive(Default)]
pub struct Loader {
    pub jobs: Vec<Job>,
    pub cache_dir: Option<PathBuf>,
    pub no_cache: bool,
    pub idle_threshold_ns: i64,
}

impl Loader {
    pub fn new(cache_dir: Option<PathBuf>, idle_threshold_ns: i64) -> Loader {
        Loader { jobs: Vec::new(), cache_dir, no_cache: false, idle_threshold_ns }
    }

    pub fn busy(&self) -> bool {
        !self.jobs.is_empty()
    }

    /// Starts loading `path`; `repaint` is called when the result is ready.
    pub fn start(&mut self, path: &Path, repaint: impl Fn() + Send + 'static) {
        let progress = Arc::new(Progress::default());
        let (tx, rx) = channel();
        let opts = LoadOptions {
            cache_dir: self.cache_dir.clone(),
            no_cache: self.no_cache,
            progress: Some(progress.clone()),
        };
        let p = path.to_path_buf();
        let thr = self.idle_threshold_ns;
        std::thread::Builder::new()
            .name("strobe-load".into())
            .spawn(move || {
                let r = load_trace(&p, &opts, thr);
                let _ = tx.send(r);
                repaint();
            })
            .expect("spawn loader thread");
        self.jobs.push(Job { path: path.to_path_buf(), progress, started: Instant::now(), rx });
    }

    /// Finished loads since the last call.
    pub fn poll(&mut self) -> Vec<LoadEvent> {
        let mut out = Vec::new();
        self.jobs.retain(|j| match j.rx.try_recv() {
            Ok(Ok(t)) => {
                out.push(LoadEvent::Loaded(Box::new(t)));
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

/// Loads one file and derives its analyses (what the loader thread runs; tests call it directly).
pub fn load_trace(path: &Path, opts: &LoadOptions, idle_threshold_ns: i64) -> Result<Trace, String> {
    let store = strobe_import::load(path, opts).map_err(|e| e.to_string())?;
    Ok(Trace::new(path.to_path_buf(), store, idle_threshold_ns))
}
