//! The JSON text of a trace as the parse sees it: a prefix that only grows. A mapped file or
//! bytes in memory are whole from the start; a gzip source is inflated by a thread of its
//! own into one reserved stretch of address space, and the parse reads whatever has been
//! published so far, so it starts on the first megabytes instead of waiting for the whole
//! file. Published bytes are never written again and never move, so every slice
//! handed out stays valid while later bytes arrive.
//!
//! Fresh pages are slow to fault in (the kernel zeroes each one; on the machines measured that
//! is 2–3 GB/s, as slow as the inflate itself), so a text of hundreds of MB does not take
//! hundreds of MB of them: once the parse says a stretch below it will never be read again
//! (`Text::release`), the inflater moves those pages (`mremap`, no copy, no zeroing) to where
//! it writes next, and it waits while it is more than `Reuse::ahead` bytes past the parse unless the
//! parse waits for it. Addresses never change, so positions stay byte offsets of the file;
//! only the released stretch becomes inaccessible.
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
                if end.is_none() && g.filled.load(Ordering::Acquire) <= n {
                    // the inflater must not wait for the parse while the parse waits for it
                    g.hungry.fetch_add(1, Ordering::AcqRel);
                    g.room.notify_all();
                    while end.is_none() && g.filled.load(Ordering::Acquire) <= n {
                        end = g.published.wait(end).unwrap_or_else(|p| p.into_inner());
                    }
                    g.hungry.fetch_sub(1, Ordering::AcqRel);
                }
                (g.prefix(), end.is_some())
            }
        }
    }

    /// Says that no byte below `upto` will be read again, through any slice handed out
    /// before or after: a growing text reuses their pages for what it inflates next.
    ///
    /// # Safety
    /// The caller must never read text below `upto` again (those pages are moved away and
    /// the range made inaccessible: a read there faults). Every slice still covers them, so the promise is about reads.
    pub unsafe fn release(&self, upto: usize) {
        if let Text::Growing(g) = self {
            let before = g.released.fetch_max(upto, Ordering::AcqRel);
            if g.reuse.is_some_and(|r| r.guard) {
                let page = page_size();
                let (from, to) = (before / page * page, upto / page * page);
                if to > from {
                    // SAFETY: whole pages of the reservation below `upto`, never read again
                    // (this function's contract) and never written again (below `filled`).
                    libc_mprotect_none(g.ptr.add(from), to - from);
                }
            }
            let _guard = g.end.lock();
            g.room.notify_all();
        }
    }
}

/// A gzip stream's inflated bytes, growing while `run` works on another thread.
pub struct Inflated {
    /// The mapping, as made (for unmapping).
    map: *mut u8,
    map_len: usize,
    /// Where the text starts: the mapping's first `block`-aligned address.
    ptr: *mut u8,
    cap: usize,
    filled: AtomicUsize,
    /// No byte below this is read again (see `Text::release`).
    released: AtomicUsize,
    /// Readers waiting in `Text::beyond`.
    hungry: AtomicUsize,
    /// Woken when the parse releases text or waits for it.
    room: Condvar,
    /// How pages are reused: the stretch moved at once, and how far the inflater runs ahead
    /// of the parse before it waits. None: never reused.
    reuse: Option<Reuse>,
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

/// How the inflater reuses released pages.
#[derive(Clone, Copy, Debug)]
pub struct Reuse {
    /// Bytes moved at once: a power of two, at least a page. 2 MB moves a transparent huge
    /// page whole.
    pub block: usize,
    /// How far past the parse's release the inflater may run before it waits (unless the
    /// parse waits for it): room for the wave being assembled, the one being parsed and the
    /// next one's text (waves grow to ~18 MB on two cores).
    pub ahead: usize,
    /// Instead of moving released pages, make them inaccessible at once, so that any read of
    /// released text faults (what the tests check the release promise with).
    pub guard: bool,
}

impl Reuse {
    /// What a `.json.gz` import uses: `STROBE_GZ_REUSE=0` turns reuse off (to measure what it
    /// saves); `tight` and `guard` are the tests' modes (see those).
    pub fn from_env() -> Option<Reuse> {
        if !cfg!(any(target_os = "linux", target_os = "android")) {
            return None;
        }
        match std::env::var("STROBE_GZ_REUSE").as_deref() {
            Ok("0") => None,
            Ok("tight") => Some(Reuse::tight()),
            Ok("guard") => Some(Reuse::guard()),
            _ => Some(Reuse { block: 2 << 20, ahead: 64 << 20, guard: false }),
        }
    }

    /// Page-sized blocks, no running ahead: pages move as soon as they are released.
    pub fn tight() -> Reuse {
        Reuse { block: page_size(), ahead: 0, guard: false }
    }

    /// No running ahead, and released pages made inaccessible at once instead of moved.
    pub fn guard() -> Reuse {
        Reuse { guard: true, ..Reuse::tight() }
    }
}

fn page_size() -> usize {
    #[cfg(unix)]
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    #[cfg(not(unix))]
    let p = 4096;
    usize::try_from(p).ok().filter(|p| p.is_power_of_two()).unwrap_or(4096)
}

impl Inflated {
    /// Reserves room for what `compressed_len` bytes of gzip can inflate to. None where the
    /// platform refuses the reservation (the caller then inflates into memory first).
    pub fn reserve(compressed_len: u64, reuse: Option<Reuse>) -> Option<Inflated> {
        let reuse = reuse.filter(|r| r.block.is_power_of_two() && r.block >= page_size());
        let align = reuse.map_or(0, |r| r.block);
        let cap = compressed_len.checked_mul(MAX_RATIO)?.checked_add(STEP as u64)?.min(1 << 46);
        let cap = usize::try_from(cap).ok()?;
        let map_len = cap.checked_add(align)?;
        let map = map_reserved(map_len)?;
        let ptr = map.wrapping_add((align - (map as usize) % align.max(1)) % align.max(1));
        Some(Inflated {
            map,
            map_len,
            ptr,
            cap,
            filled: AtomicUsize::new(0),
            released: AtomicUsize::new(0),
            hungry: AtomicUsize::new(0),
            room: Condvar::new(),
            reuse,
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
        let _guard = self.end.lock();
        self.room.notify_all();
    }

    /// Waits while the inflater, about to write at `n`, is `ahead` bytes or more past what
    /// the parse released, unless a reader waits for text (or the import stops).
    fn wait_for_parse(&self, n: usize, ahead: usize, progress: &Progress) {
        let mut g = self.end.lock().unwrap_or_else(|p| p.into_inner());
        while n >= self.released.load(Ordering::Acquire).saturating_add(ahead)
            && self.hungry.load(Ordering::Acquire) == 0
            && !self.stop.load(Ordering::Relaxed)
            && !progress.cancelled()
        {
            // the timeout only bounds how late a cancel is seen
            g = self.room.wait_timeout(g, std::time::Duration::from_millis(50)).unwrap_or_else(|p| p.into_inner()).0;
        }
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
        let mut reuse = self.reuse;
        // blocks below this have been moved up to hold later text
        let mut reused_to = 0usize;
        let end = loop {
            if self.stop.load(Ordering::Relaxed) || progress.cancelled() {
                break End::Cancelled;
            }
            if n == self.cap {
                break End::Corrupt(format!(
                    "it inflates past {MAX_RATIO}× its compressed size, more than deflate can encode"
                ));
            }
            let mut room = (self.cap - n).min(STEP);
            if let Some(r) = reuse {
                if n.is_multiple_of(r.block) {
                    self.wait_for_parse(n, r.ahead, progress);
                    // a guard protects released pages where they are (`Text::release`)
                    let released = self.released.load(Ordering::Acquire) / r.block * r.block;
                    if !r.guard && reused_to + r.block <= released && n + r.block <= self.cap {
                        // SAFETY: `[reused_to, +block)` is below `released`, which no reader
                        // reads again (`Text::release`); `[n, +block)` is above `filled` and
                        // inside the reservation, unwritten and unread. Both are whole
                        // blocks of the one mapping, apart.
                        if unsafe { move_pages(self.ptr.add(reused_to), self.ptr.add(n), r.block) } {
                            reused_to += r.block;
                        } else {
                            // refused (too many mappings, say): fresh pages from here on
                            reuse = None;
                        }
                    }
                }
                if let Some(r) = reuse {
                    room = room.min(r.block - n % r.block);
                }
            }
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
        if std::env::var_os("STROBE_TIMING").is_some() {
            eprintln!(
                "[timing] gzip text: {:.1} MB inflated, {:.1} MB of it into reused pages",
                n as f64 / 1e6,
                reused_to as f64 / 1e6
            );
        }
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
        // moved pages left their range mapped (`move_pages`): the reservation is still whole
        unmap(self.map, self.map_len);
    }
}

/// Moves the pages of `[from, +len)` to `[to, +len)` (no copy: the page tables move), leaving
/// `from` mapped but empty and inaccessible. False where the kernel refuses the move.
///
/// # Safety
/// Both ranges lie in one mapping made by `map_reserved`, do not overlap, and nothing reads
/// or writes either while this runs; nothing reads `from` afterwards.
#[cfg(any(target_os = "linux", target_os = "android"))]
unsafe fn move_pages(from: *mut u8, to: *mut u8, len: usize) -> bool {
    // DONTUNMAP leaves `from` mapped, with no pages: the reservation stays whole, so no other
    // mapping can be placed in it (and taken away when it is unmapped). Linux 5.7 and later;
    // an older kernel refuses and the text keeps fresh pages.
    let p = libc::mremap(
        from as *mut libc::c_void,
        len,
        len,
        libc::MREMAP_MAYMOVE | libc::MREMAP_FIXED | libc::MREMAP_DONTUNMAP,
        to as *mut libc::c_void,
    );
    if p != to as *mut libc::c_void {
        return false;
    }
    // a read of released text then faults instead of finding zeros (refused: it finds zeros)
    libc_mprotect_none(from, len);
    true
}

/// Makes `[at, +len)` inaccessible (whole pages of the reservation); a refusal leaves it as is.
///
/// # Safety
/// Nothing reads or writes the range afterwards.
unsafe fn libc_mprotect_none(at: *mut u8, len: usize) {
    #[cfg(unix)]
    libc::mprotect(at as *mut libc::c_void, len, libc::PROT_NONE);
    #[cfg(not(unix))]
    let _ = (at, len);
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
unsafe fn move_pages(_from: *mut u8, _to: *mut u8, _len: usize) -> bool {
    false
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
