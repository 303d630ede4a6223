//! The JSON text of a trace as the parse sees it: a prefix that only grows. A mapped file or
//! bytes in memory are whole from the start; a gzip source is inflated by a thread of its
//! own into one reserved stretch of address space, and the parse reads whatever has been
//! published so far, so it starts on the first megabytes instead of waiting for the whole
//! file (issue 17.2). Published bytes are never written again and never move, so every slice
//! handed out stays valid while later bytes arrive.
//!
//! The reservation is sized by the one bound deflate itself guarantees: a stream inflates to
//! at most 1032 times its compressed size (a 258-byte match at distance 1 costs at least two
//! bits). The gzip trailer's `ISIZE` (the size modulo 4 GiB, and written by the producer) is
//! never read, so traces of any size inflate the same way.

use super::members::{End, Members};
use crate::Progress;
use std::io::Read;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};

/// The text the parse reads: whole, or a gzip stream still inflating.
#[derive(Clone, Copy)]
pub enum Text<'a> {
    Whole(&'a [u8]),
    Growing(&'a Inflated),
}

impl<'a> Text<'a> {
    /// What is there now, and whether that is all of it.
    pub fn now(&self) -> (&'a [u8], bool) {
        match self {
            Text::Whole(b) => (b, true),
            Text::Growing(g) => {
                // `end` is read before `filled`: a finished inflater published all it had first
                let done = g.end.lock().map(|e| e.is_some()).unwrap_or(true);
                (g.prefix(), done)
            }
        }
    }

    /// Waits until more than `n` bytes are there or the text is complete; returns it then.
    pub fn beyond(&self, n: usize) -> (&'a [u8], bool) {
        match self {
            Text::Whole(b) => (b, true),
            Text::Growing(g) => {
                let mut end = g.end.lock().unwrap_or_else(|p| p.into_inner());
                while end.is_none() && g.filled.load(Ordering::Acquire) <= n {
                    end = g.published.wait(end).unwrap_or_else(|p| p.into_inner());
                }
                (g.prefix(), end.is_some())
            }
        }
    }
}

/// A gzip stream's inflated bytes, growing while `run` works on another thread.
pub struct Inflated {
    ptr: *mut u8,
    cap: usize,
    filled: AtomicUsize,
    /// How the inflater ended and what it noted; None while it runs. Always set when `run`
    /// returns or unwinds (see `Publish`), so no reader waits for bytes that will not come.
    end: Mutex<Option<(End, Vec<String>)>>,
    published: Condvar,
    stop: AtomicBool,
}

// SAFETY: the reservation is owned by this value; bytes below `filled` are only read (by any
// thread) and bytes at or above it are only written, by the one thread in `run`, before
// `filled` moves past them with Release ordering (readers load it with Acquire).
unsafe impl Send for Inflated {}
unsafe impl Sync for Inflated {}

/// The most a deflate stream can inflate per compressed byte.
const MAX_RATIO: u64 = 1032;

/// What one read from the decoder may fill; also how often readers are woken.
const STEP: usize = 1 << 20;

impl Inflated {
    /// Reserves room for what `compressed_len` bytes of gzip can inflate to. None where the
    /// platform refuses the reservation (the caller then inflates into memory first).
    pub fn reserve(compressed_len: u64) -> Option<Inflated> {
        let cap = compressed_len.checked_mul(MAX_RATIO)?.checked_add(STEP as u64)?.min(1 << 46);
        let cap = usize::try_from(cap).ok()?;
        let ptr = map_reserved(cap)?;
        Some(Inflated {
            ptr,
            cap,
            filled: AtomicUsize::new(0),
            end: Mutex::new(None),
            published: Condvar::new(),
            stop: AtomicBool::new(false),
        })
    }

    fn prefix(&self) -> &[u8] {
        let n = self.filled.load(Ordering::Acquire);
        // SAFETY: the first `n` bytes were written before `filled` was published and are never
        // written again (see the Send/Sync note); the mapping lives as long as `self`.
        unsafe { std::slice::from_raw_parts(self.ptr, n) }
    }

    /// Asks `run` to stop at its next read (the parse failed or was cancelled).
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    /// How the inflater ended and what it noted (None while it still runs).
    pub fn end(&self) -> Option<(End, Vec<String>)> {
        self.end.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Inflates `compressed` (gzip members concatenated, see `Members`) into the
    /// reservation, publishing as it goes. Run on its own thread.
    pub fn run(&self, compressed: impl Read, progress: &Progress) {
        // publishes an end however this returns: a panic below (in the decoder, say) is an
        // end too, which the parse sees instead of waiting for the next bytes
        let mut publish = Publish { to: self, end: None };
        let mut dec = Members::new(std::io::BufReader::with_capacity(STEP, compressed));
        let mut n = 0usize;
        let end = loop {
            if self.stop.load(Ordering::Relaxed) || progress.cancelled() {
                break End::Cancelled;
            }
            if n == self.cap {
                break End::Corrupt(format!(
                    "it inflates past {MAX_RATIO}× its compressed size, more than deflate can encode"
                ));
            }
            let room = (self.cap - n).min(STEP);
            // SAFETY: `[n, n + room)` is inside the reservation and above `filled`, so no reader
            // holds a slice of it; this thread is its only writer.
            let dst = unsafe { std::slice::from_raw_parts_mut(self.ptr.add(n), room) };
            match dec.read(dst) {
                Ok(0) => break End::Complete,
                Ok(k) => {
                    n += k;
                    self.filled.store(n, Ordering::Release);
                    let _guard = self.end.lock();
                    self.published.notify_all();
                }
                Err(e) => break End::of_error(&e, n as u64),
            }
        };
        publish.end = Some((end, dec.into_notes()));
    }
}

/// Sets the inflater's end when dropped, and wakes every reader: on return with how it
/// ended, on unwind with a failure.
struct Publish<'a> {
    to: &'a Inflated,
    end: Option<(End, Vec<String>)>,
}

impl Drop for Publish<'_> {
    fn drop(&mut self) {
        let end = self.end.take().unwrap_or_else(|| {
            let n = self.to.filled.load(Ordering::Acquire);
            (End::Corrupt(format!("inflating failed after {n} decompressed bytes (the inflater stopped)")), Vec::new())
        });
        let mut g = self.to.end.lock().unwrap_or_else(|p| p.into_inner());
        *g = Some(end);
        self.to.published.notify_all();
    }
}

impl Drop for Inflated {
    fn drop(&mut self) {
        unmap(self.ptr, self.cap);
    }
}

/// Address space for `len` bytes, committed page by page as they are written: Linux's
/// default overcommit would refuse a reservation this size without MAP_NORESERVE.
#[cfg(unix)]
fn map_reserved(len: usize) -> Option<*mut u8> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    let flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE;
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    let flags = libc::MAP_PRIVATE | libc::MAP_ANON;
    // SAFETY: a fresh anonymous mapping at an address of the kernel's choosing.
    let p = unsafe { libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE, flags, -1, 0) };
    if p == libc::MAP_FAILED {
        return None;
    }
    // fewer page faults while filling it (a hint: refused or ignored harmlessly)
    #[cfg(any(target_os = "linux", target_os = "android"))]
    // SAFETY: advice on the mapping just made.
    unsafe {
        libc::madvise(p, len, libc::MADV_HUGEPAGE);
    }
    Some(p as *mut u8)
}

#[cfg(unix)]
fn unmap(p: *mut u8, len: usize) {
    // SAFETY: the mapping made by `map_reserved`, unmapped once, when its owner drops.
    unsafe {
        libc::munmap(p as *mut libc::c_void, len);
    }
}

#[cfg(not(unix))]
fn map_reserved(_len: usize) -> Option<*mut u8> {
    None
}

#[cfg(not(unix))]
fn unmap(_p: *mut u8, _len: usize) {}
