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
    let store = with_bar(cache_dir, false, |opts| strobe_import::load(path, opts))?;
    warn_if_truncated(path, &store);
    Ok(store)
}

/// Whatever the file holds (`strobe report`). A trace built now comes back before its
/// store is cached: call `after_answer` once the answer is out.
pub fn open_with_progress(path: &Path, cache_dir: Option<&Path>) -> anyhow::Result<Source> {
    let source = with_bar(cache_dir, true, |opts| strobe_import::open(path, opts))?;
    if let Source::Trace(store) = &source {
        warn_if_truncated(path, store);
    }
    Ok(source)
}

/// Runs `read` with a progress bar on stderr when it is a terminal.
fn with_bar<T>(
    cache_dir: Option<&Path>,
    defer_write: bool,
    read: impl FnOnce(&LoadOptions) -> Result<T, strobe_import::ImportError>,
) -> anyhow::Result<T> {
    let progress = Arc::new(Progress::default());
    let opts = LoadOptions {
        cache_dir: cache_dir.map(|p| p.to_path_buf()),
        no_cache: false,
        progress: Some(progress.clone()),
        defer_write,
        write_behind: false,
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

/// After an answer is printed: `memo` (what keeps the answer for next time), then the stores
/// it was computed from that were built for it are written into the cache
/// (`Store::write_pending`: their level of detail and files), all at once. When there are
/// such stores, stdout is flushed and closed first, so the answer is on screen and a pipe
/// reading it sees its end while the rest runs. A store that cannot be cached is said on
/// stderr; the answer stands.
pub fn after_answer(stores: &[Store], names: &[String], memo: impl FnOnce()) {
    let pending = stores.iter().any(Store::is_pending);
    if pending {
        end_stdout();
    }
    memo();
    if !pending {
        return;
    }
    let _t = strobe_store::timing::Phase::start("cache: the stores behind the answer");
    std::thread::scope(|s| {
        for (store, name) in stores.iter().zip(names).filter(|(st, _)| st.is_pending()) {
            s.spawn(move || {
                if let Err(e) = store.write_pending() {
                    eprintln!("strobe: warning: {name}: its store was not cached: {e}");
                }
            });
        }
    });
}

/// Flushes stdout and closes it (fd 1 then writes to /dev/null): a reader of a pipe sees the
/// output's end now, not at exit.
pub(crate) fn end_stdout() {
    use std::io::Write;
    let _ = std::io::stdout().flush();
    #[cfg(unix)]
    if let Ok(null) = std::fs::OpenOptions::new().write(true).open("/dev/null") {
        use std::os::fd::AsRawFd;
        // SAFETY: dup2 onto fd 1 of a descriptor this function holds open; stdout's buffer was
        // flushed above, and anything printed later goes to /dev/null
        unsafe { libc::dup2(null.as_raw_fd(), 1) };
    }
}
