//! Fresh pages faulted in on another core, ahead of the thread that fills them.
//!
//! A big vector filled by one serial pass (a snapshot's trace entries, an importer's staged
//! spans) pays the kernel for every fresh page it first writes: the page is zeroed inside the
//! writer's page fault. On the VMs Strobe is measured on that costs 0.5–1 ns a byte, a fifth
//! of a 2 GB snapshot's parse, while the other core waits. [`Prefault`] asks the kernel to map
//! the vector's spare room (`MADV_POPULATE_WRITE`) on a helper thread, a bounded distance
//! ahead of the writer, so the writer finds its pages present.
//!
//! Sound whatever the writer does: populating only maps zeroed pages where none are mapped
//! yet and never changes a byte that is there, so a range that has meanwhile been written,
//! freed or reused reads exactly as it would have. A failure (an old kernel, a range no
//! longer mapped) just ends the helper. Elsewhere than Linux it does nothing.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

/// How far past the writer the helper maps: enough that the writer rarely catches up, little
/// enough that an over-reserved vector's unused tail is rarely mapped for nothing.
const AHEAD: usize = 16 << 20;
/// One `madvise` call's range (the helper looks at the writer between calls).
const STEP: usize = 4 << 20;
/// Below this the helper thread costs more than it saves.
const MIN_LEN: usize = 32 << 20;

struct Shared {
    written: AtomicUsize,
    stop: AtomicBool,
}

impl Shared {
    /// Where the helper maps up to, from the start of the range.
    fn target(&self) -> usize {
        self.written.load(Ordering::Relaxed).saturating_add(AHEAD)
    }
}

/// Keeps the pages of `[base, base + len)` mapped ahead of a writer that reports its progress
/// with [`Prefault::advance`]; stops when dropped.
pub struct Prefault {
    shared: Arc<Shared>,
    helper: Option<std::thread::JoinHandle<usize>>,
}

impl Prefault {
    /// The spare capacity of `v` (from its length to its capacity), filled by pushes from now.
    pub fn spare_of<T>(v: &Vec<T>) -> Prefault {
        let size = std::mem::size_of::<T>();
        let from = v.as_ptr() as usize + v.len() * size;
        Prefault::start(from, (v.capacity() - v.len()) * size)
    }

    fn start(base: usize, len: usize) -> Prefault {
        let shared = Arc::new(Shared { written: AtomicUsize::new(0), stop: AtomicBool::new(false) });
        // STROBE_PREFAULT=0 turns it off (to measure what it saves)
        let off = std::env::var_os("STROBE_PREFAULT").is_some_and(|v| v == "0");
        let helper = if cfg!(target_os = "linux") && len >= MIN_LEN && !off {
            let s = shared.clone();
            std::thread::Builder::new().name("strobe-prefault".into()).spawn(move || run(&s, base, len)).ok()
        } else {
            None
        };
        Prefault { shared, helper }
    }

    /// The writer has filled this many bytes from the start of the range.
    pub fn advance(&self, written: usize) {
        self.shared.written.store(written, Ordering::Relaxed);
        if let Some(h) = &self.helper {
            h.thread().unpark();
        }
    }

    /// Stops the helper; the bytes it mapped.
    pub fn finish(mut self) -> usize {
        self.stop()
    }

    fn stop(&mut self) -> usize {
        self.shared.stop.store(true, Ordering::Relaxed);
        match self.helper.take() {
            Some(h) => {
                h.thread().unpark();
                h.join().unwrap_or(0)
            }
            None => 0,
        }
    }
}

impl Drop for Prefault {
    fn drop(&mut self) {
        self.stop();
    }
}

#[cfg(target_os = "linux")]
fn run(s: &Shared, base: usize, len: usize) -> usize {
    const PAGE: usize = 4096;
    let begin = base.div_ceil(PAGE) * PAGE;
    let end = (base + len) / PAGE * PAGE;
    let mut done = begin;
    while done < end && !s.stop.load(Ordering::Relaxed) {
        // whole pages only: madvise refuses an unaligned start
        let target = ((base + s.target()) / PAGE * PAGE).min(end);
        if done >= target {
            std::thread::park_timeout(std::time::Duration::from_millis(2));
            continue;
        }
        let n = STEP.min(target - done);
        // SAFETY: MADV_POPULATE_WRITE only maps zeroed pages where none are mapped and never
        // changes mapped memory (see the module's note); an error leaves everything as it was.
        let r = unsafe { libc::madvise(done as *mut libc::c_void, n, libc::MADV_POPULATE_WRITE) };
        if r != 0 {
            if std::env::var_os("STROBE_TIMING").is_some() {
                let err = std::io::Error::last_os_error();
                eprintln!("[timing] prefault stopped at {} of {} MB: {err}", (done - begin) >> 20, (end - begin) >> 20);
            }
            return done - begin;
        }
        done += n;
    }
    done - begin
}

#[cfg(not(target_os = "linux"))]
fn run(_: &Shared, _: usize, _: usize) -> usize {
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_ahead_of_the_writer_keep_what_is_written() {
        let n = (MIN_LEN / 8) * 2;
        let mut v: Vec<u64> = Vec::with_capacity(n);
        let p = Prefault::spare_of(&v);
        for i in 0..n as u64 {
            v.push(i * 3);
            if i % 65536 == 0 {
                p.advance(v.len() * 8);
            }
        }
        drop(p);
        assert!(v.iter().enumerate().all(|(i, &x)| x == i as u64 * 3));
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn the_helper_maps_the_whole_range_once_told_it_is_written() {
        // an unaligned start, as a vector's spare room usually has
        let v: Vec<u8> = Vec::with_capacity(MIN_LEN * 2 + 12345);
        let p = Prefault::start(v.as_ptr() as usize + 4099, MIN_LEN * 2);
        // part way first (an unaligned target mid-range), then all of it
        p.advance(MIN_LEN);
        std::thread::sleep(std::time::Duration::from_millis(200));
        p.advance(MIN_LEN * 2);
        let t = std::time::Instant::now();
        while t.elapsed().as_secs() < 20 {
            // a kernel without MADV_POPULATE_WRITE (before 5.14) maps nothing: nothing to check
            if p.helper.as_ref().is_some_and(|h| h.is_finished()) {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let mapped = p.finish();
        let old_kernel = mapped == 0;
        assert!(old_kernel || mapped >= MIN_LEN * 2 - 8192, "{mapped}");
    }

    #[test]
    fn small_or_empty_ranges_start_no_helper() {
        let v: Vec<u8> = Vec::with_capacity(1 << 20);
        assert!(Prefault::spare_of(&v).helper.is_none());
        let e: Vec<u64> = Vec::new();
        assert!(Prefault::spare_of(&e).helper.is_none());
    }
}
