//! Loading from the command line: the shared loader plus a progress bar on stderr when it
//! is a terminal (nothing otherwise, so pipes and CI logs stay clean).

use std::io::IsTerminal;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use strobe_import::{LoadOptions, Progress, Source};
use strobe_store::Store;

/// Set once any input of this run was cut short: `main` then exits with status 3 (the output
/// is complete for what was read), so scripts can tell a partial read from a full one.
pub static TRUNCATED_INPUT: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Says on stderr that `store`'s source was cut short, and remembers it for the exit status.
pub fn warn_if_truncated(path: &Path, store: &Store) {
    if let Some(t) = &store.meta.load.truncated {
        warn_truncated(&path.display().to_string(), &t.message());
    }
}

/// Says on stderr that `source` was cut short (`what`), and remembers it for the exit status:
/// what a load says, and what a report's memo says again.
pub fn warn_truncated(source: &str, what: &str) {
    eprintln!("strobe: warning: {source}: {what}");
    TRUNCATED_INPUT.store(true, Ordering::Relaxed);
}

/// A timeline trace (any other kind of file is refused, saying what it is).
pub fn load_with_progress(path: &Path, cache_dir: Option<&Path>) -> anyhow::Result<Store> {
    let store = with_bar(cache_dir, |opts| strobe_import::load(path, opts))?;
    warn_if_truncated(path, &store);
    Ok(store)
}

/// Whatever the file holds (`strobe report`).
pub fn open_with_progress(path: &Path, cache_dir: Option<&Path>) -> anyhow::Result<Source> {
    let source = with_bar(cache_dir, |opts| strobe_import::open(path, opts))?;
    if let Source::Trace(store) = &source {
        warn_if_truncated(path, store);
    }
    Ok(source)
}

/// Runs `read` with a progress bar on stderr when it is a terminal.
fn with_bar<T>(
    cache_dir: Option<&Path>,
    read: impl FnOnce(&LoadOptions) -> Result<T, strobe_import::ImportError>,
) -> anyhow::Result<T> {
    let progress = Arc::new(Progress::default());
    let opts = LoadOptions {
        cache_dir: cache_dir.map(|p| p.to_path_buf()),
        no_cache: false,
        progress: Some(progress.clone()),
    };
    if !std::io::stderr().is_terminal() {
        return Ok(read(&opts)?);
    }
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let bar = {
        let progress = progress.clone();
        let done = done.clone();
        std::thread::spawn(move || {
            let pb = indicatif::ProgressBar::new(0);
            pb.set_style(
                indicatif::ProgressStyle::with_template(
                    "{spinner} {bytes}/{total_bytes} {msg} [{elapsed}] {binary_bytes_per_sec}",
                )
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
            );
            let t0 = std::time::Instant::now();
            while !done.load(Ordering::Relaxed) {
                std::thread::sleep(std::time::Duration::from_millis(100));
                if t0.elapsed().as_millis() < 300 {
                    continue; // quick loads show nothing
                }
                pb.set_length(progress.bytes_total.load(Ordering::Relaxed));
                pb.set_position(progress.bytes_done.load(Ordering::Relaxed));
                pb.set_message(format!("{} events", progress.events.load(Ordering::Relaxed)));
            }
            pb.finish_and_clear();
        })
    };
    let r = read(&opts);
    done.store(true, Ordering::Relaxed);
    let _ = bar.join();
    Ok(r?)
}
