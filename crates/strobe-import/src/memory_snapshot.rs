//! `torch.cuda.memory._dump_snapshot` pickles (plain or gzipped) into
//! [`strobe_model::memory::MemorySnapshot`], and `torch.cuda.memory_stats()` JSON dumps.
//!
//! Older layouts are read the way memory_viz reads them (torch/utils/viz/MemoryViz.js
//! `annotate_snapshot`, torch/cuda/_memory_viz.py `_read` / `_block_extra_legacy`): a bare list
//! of segments (what `torch.cuda.memory_snapshot()` returns); blocks without `address` (placed at
//! their segment's address plus the sizes before them); blocks without `frames`, whose stack and
//! requested size come from their newest `history` entry (torch 1.13–2.0); no `requested_size`
//! (the block's size); no `device_traces`. Each such fact becomes a note on the snapshot.

use crate::pickle::{self, Pickle, Value};
use crate::{ImportError, Progress};
use rustc_hash::FxHashMap;
use std::io::Read;
use std::path::Path;
use std::sync::atomic::Ordering;
use strobe_model::memory::*;

/// A pickle of protocol 2–5 by its PROTO opcode (older protocols have no header: `detect`
/// goes by the name for those).
pub fn sniff_pickle(head: &[u8]) -> bool {
    head.len() >= 2 && head[0] == 0x80 && (2..=5).contains(&head[1])
}

/// A `torch.cuda.memory_stats()` dump: a plain JSON object whose first 64 KiB name the
/// caching allocator's counters and no trace events.
pub fn sniff_stats(path: &Path, head: &[u8]) -> std::io::Result<bool> {
    if head.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return Ok(false);
    }
    let mut buf = Vec::new();
    std::fs::File::open(path)?.take(1 << 16).read_to_end(&mut buf)?;
    let has = |needle: &[u8]| memchr::memmem::find(&buf, needle).is_some();
    Ok((has(b"\"allocated_bytes.all.current\"") || has(b"\"num_alloc_retries\"")) && !has(b"\"traceEvents\""))
}

/// Reads a snapshot file: mapped when plain, decompressed when gzipped.
pub fn import(path: &Path) -> Result<MemorySnapshot, ImportError> {
    import_with(path, &Progress::default())
}

/// As `import`, reporting the bytes read (inflated, then parsed: a gzipped file fills the
/// bar twice) and the trace entries converted, and stopping with `ImportError::Cancelled`
/// soon after `progress.cancel` is set.
pub fn import_with(path: &Path, progress: &Progress) -> Result<MemorySnapshot, ImportError> {
    let file = std::fs::File::open(path).map_err(|e| ImportError::io(path, e))?;
    // SAFETY: read-only map of a file we only read; a file truncated underneath us is the
    // usual mmap caveat shared by every importer here.
    let map = unsafe { memmap2::Mmap::map(&file) }.map_err(|e| ImportError::io(path, e))?;
    let cancelled = || ImportError::Cancelled { path: path.to_path_buf() };
    let bad = |e: String| if progress.cancelled() { cancelled() } else { ImportError::bad(path, e) };
    if map.starts_with(&[0x1f, 0x8b]) {
        progress.bytes_total.store(map.len() as u64, Ordering::Relaxed);
        let mut buf = Vec::new();
        let mut z = flate2::read::MultiGzDecoder::new(Counted { inner: &map[..], progress });
        let mut chunk = vec![0u8; 1 << 20];
        loop {
            if progress.cancelled() {
                return Err(cancelled());
            }
            match z.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(ImportError::bad(path, format!("gzip: {e}"))),
            }
        }
        progress.bytes_done.store(0, Ordering::Relaxed);
        from_bytes_with(&buf, progress, None).map_err(bad)
    } else {
        from_bytes_with(&map, progress, Some(&map)).map_err(bad)
    }
}

/// Counts the compressed bytes the decoder has taken.
struct Counted<'a> {
    inner: &'a [u8],
    progress: &'a Progress,
}

impl Read for Counted<'_> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(out)?;
        self.progress.add_bytes(n as u64);
        Ok(n)
    }
}

/// Decodes a snapshot from pickle bytes of any protocol (the entry point a fuzz target calls: any bytes give a
/// snapshot or an error, never a panic or an allocation beyond the input's size).
pub fn from_bytes(data: &[u8]) -> Result<MemorySnapshot, String> {
    from_bytes_with(data, &Progress::default(), None)
}

/// `map`: the file `data` is mapped from, whose pages behind the parse are handed back as it
/// goes (the reader keeps nothing that points into them), so the file does not stay in the
/// process's memory beside what is built of it.
fn from_bytes_with(data: &[u8], progress: &Progress, map: Option<&memmap2::Mmap>) -> Result<MemorySnapshot, String> {
    from_bytes_split(data, progress, map, split_target(data.len()).map(|at| (at, false)))
}

/// What a snapshot pickle must open with.
fn check_header(data: &[u8]) -> Result<(), String> {
    if data.is_empty() {
        return Err("empty file (not a memory snapshot pickle)".into());
    }
    // protocols 2-5 open with PROTO; 0 and 1 have no header and open a dict or list of segments
    let header = match data[0] {
        0x80 => (2..=5).contains(&data.get(1).copied().unwrap_or(0)),
        b'(' | b'}' | b']' => true,
        _ => false,
    };
    if !header {
        return Err("not a pickle of a dict or list (expected torch.cuda.memory._dump_snapshot output)".into());
    }
    Ok(())
}

/// Snapshots smaller than this are read by one thread (a second costs more than it saves).
const SPLIT_MIN: usize = 16 << 20;

/// Where the second thread of a snapshot's parse starts, as a share of the file: it first
/// scans the part before (opcode lengths only: measured at a third of a parse's cost per
/// byte, and its chunk runs slower than the first thread's, which has its fresh pages mapped
/// by a helper), so both threads end together when the first parses about 70 %.
/// `STROBE_PICKLE_SPLIT` sets the share (0 reads with one thread).
fn split_target(len: usize) -> Option<usize> {
    let share = match std::env::var("STROBE_PICKLE_SPLIT") {
        Ok(v) => v.parse::<f64>().ok().filter(|x| (0.0..1.0).contains(x))?,
        Err(_) => 0.7,
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    (len >= SPLIT_MIN && cores >= 2 && share > 0.0).then_some((len as f64 * share) as usize)
}

/// Decodes a snapshot, its pickle split at the first batch boundary past `split` where given
/// (what tests and the fuzz target call to compare with the sequential read).
pub fn from_bytes_split_at(data: &[u8], split: Option<usize>) -> Result<MemorySnapshot, String> {
    from_bytes_split(data, &Progress::default(), None, split.map(|at| (at, true)))
}

fn from_bytes_split(
    data: &[u8],
    progress: &Progress,
    map: Option<&memmap2::Mmap>,
    split: Option<(usize, bool)>,
) -> Result<MemorySnapshot, String> {
    check_header(data)?;
    // a trace entry takes 70–90 bytes of pickle: reserved so the vector does not grow by copying
    let mut b = B::new(data.len() / 64);
    progress.bytes_total.store(data.len() as u64, Ordering::Relaxed);
    // the entries' fresh pages are zeroed on the other core while this one parses
    let prefault = strobe_store::prefault::Prefault::spare_of(&b.entries);
    let mut sink =
        Watched { b: &mut b, progress, map, released: 0, prefault: &prefault, part_len: data.len() / 2, reported: 0 };
    let t_parse = strobe_store::timing::Phase::start("snapshot: pickle + entries");
    let limits = pickle::Limits::default();
    let pk = match split {
        Some((at, wait)) => pickle::parse_split(data, limits, &mut sink, at, wait),
        None => pickle::parse_with(data, limits, &mut sink),
    }
    .map_err(|e| e.to_string())?;
    progress.add_events((sink.b.entries.len() - sink.reported.min(sink.b.entries.len())) as u64);
    drop(t_parse);
    drop(prefault);
    progress.bytes_done.store(data.len() as u64, Ordering::Relaxed);
    let _t = strobe_store::timing::Phase::start("snapshot: segments, traces");
    build(pk, b)
}

/// `B` plus progress and cancel, checked about once per MiB, and the mapped file's pages
/// released behind the parse.
struct Watched<'a> {
    b: &'a mut B,
    progress: &'a Progress,
    map: Option<&'a memmap2::Mmap>,
    /// Bytes of `map` released so far.
    released: usize,
    prefault: &'a strobe_store::prefault::Prefault,
    /// Entries a split parse's second thread reserves room for.
    part_len: usize,
    /// Entries counted in `progress` so far.
    reported: usize,
}

/// The second thread's sink in a split parse, spliced in by `B::splice`. Its entries go
/// straight into the first reader's vector, past the room the first part's can take (so the
/// splice moves them down instead of copying them into fresh pages); where that room is too
/// small, into a vector of its own.
struct Part<'a> {
    b: B,
    /// The first reader's entry vector, while the chunk has not started.
    room: Option<Room>,
    /// `Room::writing`, while this thread may write there.
    writing: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
    progress: &'a Progress,
    /// Entries to reserve room for in a vector of its own.
    part_len: usize,
    /// Entries counted in `progress` so far.
    reported: usize,
    map: Option<&'a memmap2::Mmap>,
    /// Bytes of `map` released up to (0 before the first offset is seen).
    released: usize,
}

/// The first reader's entry vector, as a split parse's second thread sees it.
struct Room {
    ptr: *mut TraceEntry,
    cap: usize,
    /// Where the second thread's entries start (the first reader stops short of it).
    shared_from: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    /// Set while the second thread may write there.
    writing: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

/// Entries written past the first reader's into its vector's spare room.
struct Region {
    ptr: *mut TraceEntry,
    /// Index of `ptr` in the first reader's vector.
    start: usize,
    cap: usize,
    len: usize,
}

// SAFETY: the room is the first reader's spare capacity from `start` on, which that reader
// never writes (`B::push_entry` stops it at `shared_from`) and never moves (it never grows
// past its capacity: it would have to write at `start` first). Only this thread writes there
// until the splice, which runs after it has finished (the join orders them).
unsafe impl Send for Part<'_> {}

impl pickle::Sink for Part<'_> {
    fn dict_done(&mut self, pk: &Pickle, items: &[Value]) -> Result<Option<Value>, String> {
        self.b.dict_done(pk, items)
    }

    fn chunk_starts(&mut self, dicts_before: usize) {
        // the first part makes at most one entry per dict it holds
        match self.room.take() {
            Some(room) if dicts_before < room.cap && room.cap - dicts_before >= self.part_len / 128 => {
                room.writing.store(true, Ordering::Release);
                room.shared_from.store(dicts_before, Ordering::Release);
                self.writing = Some(room.writing.clone());
                self.b.region = Some(Region {
                    // SAFETY: within the vector's capacity (checked above)
                    ptr: unsafe { room.ptr.add(dicts_before) },
                    start: dicts_before,
                    cap: room.cap - dicts_before,
                    len: 0,
                });
            }
            _ => self.b.entries.reserve(self.part_len / 64),
        }
    }

    fn chunk_ends(&mut self) {
        if let Some(w) = self.writing.take() {
            w.store(false, Ordering::Release);
        }
    }

    fn reached(&mut self, offset: usize) -> Result<(), String> {
        // counted here, not per entry: two threads adding to one counter per entry would
        // pass its cache line back and forth millions of times
        let n = self.b.entry_count();
        self.progress.add_events((n - self.reported.min(n)) as u64);
        self.reported = n;
        if self.released == 0 {
            self.released = offset.div_ceil(RELEASE_STEP) * RELEASE_STEP;
        }
        release_behind(self.map, &mut self.released, offset);
        if self.progress.cancelled() {
            return Err("cancelled".into());
        }
        Ok(())
    }
}

impl<'a> pickle::SplitSink for Watched<'a> {
    type Part = Part<'a>;
    fn part(&mut self) -> Part<'a> {
        let b = B::new(0);
        let room = Room {
            ptr: self.b.entries.as_mut_ptr(),
            cap: self.b.entries.capacity(),
            shared_from: self.b.shared_from.clone(),
            writing: self.b.chunk_writing.clone(),
        };
        Part {
            b,
            room: Some(room),
            writing: None,
            progress: self.progress,
            map: self.map,
            released: 0,
            part_len: self.part_len,
            reported: 0,
        }
    }
    fn splice(
        &mut self,
        _pk: &Pickle,
        part: Part<'a>,
        _part_pk: &Pickle,
        len: u32,
        prefix_value: &dyn Fn(u32) -> Option<Value>,
    ) -> Result<u32, String> {
        self.b.splice(part.b, len, prefix_value)
    }
    fn reset(&mut self) {
        *self.b = B::new(self.b.entries.capacity());
        self.reported = 0;
    }
}

/// Hands the mapped file's pages between `released` and a step behind `offset` back.
fn release_behind(map: Option<&memmap2::Mmap>, released: &mut usize, offset: usize) {
    if let Some(map) = map {
        let upto = offset.saturating_sub(RELEASE_STEP) / RELEASE_STEP * RELEASE_STEP;
        if upto > *released {
            // SAFETY: a read-only private map of an unmodified file: DONTNEED drops the
            // pages from this process, and reading them again faults the file's bytes
            // back in (the reader's short-string keys, and a split parse's second thread
            // reading the part before it again, may still look at them).
            let _ =
                unsafe { map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, *released, upto - *released) };
            *released = upto;
        }
    }
}

/// Released in steps of this many bytes, a step behind the parse.
const RELEASE_STEP: usize = 64 << 20;

impl pickle::Sink for Watched<'_> {
    fn dict_done(&mut self, pk: &Pickle, items: &[Value]) -> Result<Option<Value>, String> {
        self.b.dict_done(pk, items)
    }

    fn reached(&mut self, offset: usize) -> Result<(), String> {
        self.progress.bytes_done.store(offset as u64, Ordering::Relaxed);
        let n = self.b.entries.len();
        self.progress.add_events((n - self.reported.min(n)) as u64);
        self.reported = n;
        self.prefault.advance(self.b.entries.len() * std::mem::size_of::<TraceEntry>());
        release_behind(self.map, &mut self.released, offset);
        if self.progress.cancelled() {
            return Err("cancelled".into());
        }
        Ok(())
    }
}

struct B {
    snap: MemorySnapshot,
    frame_ids: FxHashMap<u32, u32>,
    frame_keys: FxHashMap<(String, String, i64), u32>,
    stack_ids: FxHashMap<u32, StackId>,
    /// Pickle string index → interned text id.
    text_ids: FxHashMap<u32, u32>,
    /// Pickle string index → the trace-entry field it names, and the action it spells.
    keys: Vec<Option<Key>>,
    actions: Vec<Option<Action>>,
    text_keys: FxHashMap<String, u32>,
    /// Trace entries converted while reading (`Value::Ext` indices).
    entries: Vec<TraceEntry>,
    /// `snap.entry_extras` by value.
    extra_ids: FxHashMap<EntryExtra, u32>,
    /// `snap.streams` by value, and the last one looked up.
    stream_ids: FxHashMap<i64, u32>,
    last_stream: (i64, u32),
    /// Which of `entries` a device trace has taken (an entry is listed once).
    taken: Vec<bool>,
    /// Distinct frames whose line was beyond `i64` (C++ frames of CUDA-graph / torch.compile
    /// programs write `size_t(-1)`), clamped.
    clamped_lines: usize,
    /// Per `snap.frames` index, whether its line was clamped.
    frame_clamped: Vec<bool>,
    /// Stacks made of a list a split parse's second thread read again from the part before
    /// the split, with the list's memo key (see `B::splice`).
    stack_src: FxHashMap<StackId, u32>,
    /// A split parse's second thread: where its entries are written instead of `entries`.
    region: Option<Region>,
    /// The first reader's: the index its entries must stay below (a split parse's second
    /// thread writes from there on).
    shared_from: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    /// Set while a split parse's second thread may write from `shared_from` on.
    chunk_writing: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl pickle::Sink for B {
    /// A dict with an `action` string is a trace entry: convert it now and free its items.
    fn dict_done(&mut self, pk: &Pickle, items: &[Value]) -> Result<Option<Value>, String> {
        let Some(t) = self.trace_entry(pk, items)? else { return Ok(None) };
        Ok(Some(Value::Ext(self.push_entry(t)?)))
    }
}

/// A trace entry's field, by its key.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Key {
    Action,
    Addr,
    Size,
    Stream,
    Time,
    DeviceFree,
    Frames,
    CompileContext,
    UserMetadata,
    Other,
}

impl Key {
    fn of(name: &str) -> Key {
        match name {
            "action" => Key::Action,
            "addr" => Key::Addr,
            "size" => Key::Size,
            "stream" => Key::Stream,
            "time_us" => Key::Time,
            "device_free" => Key::DeviceFree,
            "frames" => Key::Frames,
            "compile_context" => Key::CompileContext,
            "user_metadata" => Key::UserMetadata,
            _ => Key::Other,
        }
    }
}

/// What a pickle string index means, decided once per index: the reader shares equal short
/// strings, so the few key and action names of millions of entries are a few indices.
fn cached<T: Copy>(cache: &mut Vec<Option<T>>, pk: &Pickle, v: Value, decide: impl Fn(&str) -> T, other: T) -> T {
    let Value::Str(i) = v else { return other };
    let i = i as usize;
    if let Some(Some(x)) = cache.get(i) {
        return *x;
    }
    let x = decide(pk.str(v).unwrap_or(""));
    if cache.len() <= i {
        cache.resize(i + 1, None);
    }
    cache[i] = Some(x);
    x
}

impl B {
    /// An empty reader with room for `entries` trace entries.
    fn new(entries: usize) -> B {
        B {
            snap: MemorySnapshot {
                stacks: vec![Vec::new()],
                strings: vec![String::new()],
                streams: vec![0],
                entry_extras: vec![EntryExtra::default()],
                ..Default::default()
            },
            extra_ids: FxHashMap::default(),
            stream_ids: FxHashMap::from_iter([(0, 0)]),
            last_stream: (0, 0),
            frame_ids: FxHashMap::default(),
            frame_keys: FxHashMap::default(),
            stack_ids: FxHashMap::default(),
            text_ids: FxHashMap::default(),
            keys: Vec::new(),
            actions: Vec::new(),
            text_keys: FxHashMap::default(),
            entries: Vec::with_capacity(entries),
            taken: Vec::new(),
            clamped_lines: 0,
            frame_clamped: Vec::new(),
            stack_src: FxHashMap::default(),
            region: None,
            shared_from: std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(usize::MAX)),
            chunk_writing: std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false)),
        }
    }

    /// Entries made so far.
    fn entry_count(&self) -> usize {
        match &self.region {
            Some(r) => r.len,
            None => self.entries.len(),
        }
    }

    /// Adds a trace entry; its index.
    fn push_entry(&mut self, t: TraceEntry) -> Result<u32, String> {
        if let Some(r) = &mut self.region {
            if r.len == r.cap {
                return Err("no room left for the second thread's trace entries".into());
            }
            // SAFETY: `r.len < r.cap`: inside the room this thread alone writes (see `Part`)
            unsafe { r.ptr.add(r.len).write(t) };
            r.len += 1;
            return Ok((r.len - 1) as u32);
        }
        let n = self.entries.len();
        if n >= u32::MAX as usize {
            return Err("too many trace entries".into());
        }
        if n >= self.shared_from.load(Ordering::Relaxed) {
            // Past a split this reader did not stop at, or whose chunk it did not take: the
            // second thread is done with the room (or soon, at its next MiB), and what it
            // wrote there is not used.
            while self.chunk_writing.load(Ordering::Acquire) {
                std::thread::sleep(std::time::Duration::from_micros(50));
            }
            self.shared_from.store(usize::MAX, Ordering::Relaxed);
        }
        self.entries.push(t);
        Ok(n as u32)
    }

    /// Takes the first `len` entries another reader made of the chunk after a split in,
    /// after these, with its streams, stacks, frames and texts found or added here in the
    /// order they first appear: the ids a reader of the whole pickle in order gives.
    /// `prefix_value(key)`: memo key `key`'s value in this reader's pickle (a stack the other
    /// reader made of a list from before the split is this reader's stack of that list).
    fn splice(&mut self, o: B, len: u32, prefix_value: &dyn Fn(u32) -> Option<Value>) -> Result<u32, String> {
        let first = self.entries.len();
        let len = (len as usize).min(o.entry_count());
        if first + len >= u32::MAX as usize {
            return Err("too many trace entries".into());
        }
        // entries in this vector's room move down to follow these (`first <= start`: each is
        // read before its place, or one before it, is written)
        let moved = match &o.region {
            Some(r) if r.start >= first && r.start + len <= self.entries.capacity() => Some(r.start),
            Some(_) => return Err("the second thread's entries are not where they were put".into()),
            None => None,
        };
        let base = self.entries.as_mut_ptr();
        const NEW: u32 = u32::MAX;
        let mut streams = vec![NEW; o.snap.streams.len()];
        let mut extras = vec![NEW; o.snap.entry_extras.len()];
        let mut stacks = vec![NEW; o.snap.stacks.len()];
        let mut frames = vec![NEW; o.snap.frames.len()];
        let mut texts = vec![NEW; o.snap.strings.len()];
        (extras[0], stacks[0], texts[0]) = (0, 0, 0);
        if moved.is_none() {
            self.entries.reserve(len);
        }
        for k in 0..len {
            let mut e = match moved {
                // SAFETY: written by the second thread (`k < r.len`), not yet overwritten
                Some(start) => unsafe { base.add(start + k).read() },
                None => o.entries[k].clone(),
            };
            let s = e.stream as usize;
            if streams[s] == NEW {
                streams[s] = self.stream_id(o.snap.streams[s])?;
            }
            e.stream = streams[s];
            let x = e.extra as usize;
            if extras[x] == NEW {
                let mut ex = o.snap.entry_extras[x].clone();
                for id in [&mut ex.compile_context, &mut ex.user_metadata] {
                    let t = *id as usize;
                    if texts[t] == NEW {
                        texts[t] = self.text_id(&o.snap.strings[t]);
                    }
                    *id = texts[t];
                }
                extras[x] = self.extra_id(ex)?;
            }
            e.extra = extras[x];
            let st = e.stack as usize;
            if stacks[st] == NEW {
                let list = o.stack_src.get(&e.stack).and_then(|&key| match prefix_value(key) {
                    Some(Value::List(i) | Value::Tuple(i)) => Some(i),
                    _ => None,
                });
                stacks[st] = match list.and_then(|i| self.stack_ids.get(&i)) {
                    Some(&id) => id,
                    None => {
                        let mut ids = Vec::with_capacity(o.snap.stacks[st].len());
                        for &f in &o.snap.stacks[st] {
                            let f = f as usize;
                            if frames[f] == NEW {
                                let fr = o.snap.frames[f].clone();
                                frames[f] = self.frame_id(fr, o.frame_clamped[f]);
                            }
                            ids.push(frames[f]);
                        }
                        self.snap.stacks.push(ids);
                        let id = (self.snap.stacks.len() - 1) as StackId;
                        if let Some(i) = list {
                            self.stack_ids.insert(i, id);
                        }
                        id
                    }
                };
            }
            e.stack = stacks[st];
            match moved {
                // SAFETY: `first + k <= start + k`, inside the capacity (checked above)
                Some(_) => unsafe { base.add(first + k).write(e) },
                None => self.entries.push(e),
            }
        }
        if moved.is_some() {
            // SAFETY: `first .. first + len` are written above
            unsafe { self.entries.set_len(first + len) };
        }
        self.shared_from.store(usize::MAX, Ordering::Release);
        Ok(first as u32)
    }

    /// The index of a stream in `snap.streams`. Entries mostly repeat the stream before them
    /// (a snapshot names a few), so the last one is checked before the hash.
    fn stream_id(&mut self, stream: i64) -> Result<u32, String> {
        if self.last_stream.0 == stream {
            return Ok(self.last_stream.1);
        }
        let id = match self.stream_ids.get(&stream) {
            Some(&i) => i,
            None => {
                if self.snap.streams.len() >= u32::MAX as usize {
                    return Err("too many distinct streams".into());
                }
                self.snap.streams.push(stream);
                let i = (self.snap.streams.len() - 1) as u32;
                self.stream_ids.insert(stream, i);
                i
            }
        };
        self.last_stream = (stream, id);
        Ok(id)
    }
    fn extra_id(&mut self, extra: EntryExtra) -> Result<u32, String> {
        if let Some(&i) = self.extra_ids.get(&extra) {
            return Ok(i);
        }
        if self.snap.entry_extras.len() >= u32::MAX as usize {
            return Err("too many distinct trace entry fields".into());
        }
        self.snap.entry_extras.push(extra.clone());
        let i = (self.snap.entry_extras.len() - 1) as u32;
        self.extra_ids.insert(extra, i);
        Ok(i)
    }
    fn key(&mut self, pk: &Pickle, k: Value) -> Key {
        cached(&mut self.keys, pk, k, Key::of, Key::Other)
    }
    fn action(&mut self, pk: &Pickle, v: Value) -> Action {
        cached(&mut self.actions, pk, v, Action::parse, Action::Other)
    }

    /// A trace entry of a dict with an `action` string (None for other dicts); `items` are
    /// its keys and values, alternating.
    fn trace_entry(&mut self, pk: &Pickle, items: &[Value]) -> Result<Option<TraceEntry>, String> {
        if !items.chunks_exact(2).any(|kv| self.key(pk, kv[0]) == Key::Action && pk.str(kv[1]).is_some()) {
            return Ok(None);
        }
        let mut t = TraceEntry {
            action: Action::Other,
            addr: 0,
            size: 0,
            stream: 0,
            time: TraceEntry::NO_TIME,
            stack: 0,
            extra: 0,
        };
        let mut extra = EntryExtra::default();
        for kv in items.chunks_exact(2) {
            let (k, v) = (kv[0], kv[1]);
            let exact = |v| pk.u64(v).map_err(|e| format!("trace entry field '{}': {e}", pk.str(k).unwrap_or("")));
            match self.key(pk, k) {
                Key::Action => t.action = self.action(pk, v),
                Key::Addr => t.addr = exact(v)?.unwrap_or(0),
                Key::Size => t.size = exact(v)?.unwrap_or(0),
                Key::Stream => t.stream = self.stream_id(pk.int_clamped(v).map_or(0, |x| x.0))?,
                // i64::MIN (the no-time mark) only from a clamped wide negative: one µs later
                Key::Time => {
                    t.time = pk.int_clamped(v).map_or(TraceEntry::NO_TIME, |x| x.0.max(TraceEntry::NO_TIME + 1))
                }
                Key::DeviceFree => extra.device_free = exact(v)?,
                Key::Frames => t.stack = self.stack_of(pk, v),
                Key::CompileContext => extra.compile_context = self.intern(pk, v),
                Key::UserMetadata => extra.user_metadata = self.intern(pk, v),
                Key::Other => {}
            }
        }
        if extra != EntryExtra::default() {
            t.extra = self.extra_id(extra)?;
        }
        Ok(Some(t))
    }
}

/// A field where the exact value does not matter (device, stream): clamped to `i64`.
fn int(pk: &Pickle, d: Value, k: &str) -> Option<i64> {
    pk.get(d, k).and_then(|v| pk.int_clamped(v)).map(|x| x.0)
}
/// An address or size: exact, or an error naming the field (and the byte of a wide integer).
fn opt_uint(pk: &Pickle, d: Value, k: &str) -> Result<Option<u64>, String> {
    match pk.get(d, k) {
        Some(v) => pk.u64(v).map_err(|e| format!("field '{k}': {e}")),
        None => Ok(None),
    }
}
fn uint(pk: &Pickle, d: Value, k: &str) -> Result<u64, String> {
    opt_uint(pk, d, k)?.ok_or_else(|| format!("missing integer field '{k}'"))
}
fn text(pk: &Pickle, d: Value, k: &str) -> Option<String> {
    pk.get(d, k).and_then(|v| pk.str(v)).map(str::to_string)
}

/// Facts about an older layout met while reading, each said once in the snapshot's notes.
#[derive(Default)]
struct Legacy {
    bare_list: bool,
    block_addresses: usize,
    history_blocks: usize,
    no_requested: usize,
    segment_size_key: usize,
    segment_size_summed: usize,
    no_traces: bool,
}

impl Legacy {
    fn notes(&self, clamped_lines: usize) -> Vec<String> {
        let mut n = Vec::new();
        if self.bare_list {
            n.push(
                "legacy layout: a bare list of segments, as torch.cuda.memory_snapshot() returns; no allocation trace"
                    .into(),
            );
        } else if self.no_traces {
            n.push(
                "legacy layout: no device_traces (torch ≤ 1.13 or history recording off); no allocation trace".into(),
            );
        }
        if self.block_addresses > 0 {
            n.push(format!(
                "legacy layout (torch ≤ 2.0): {} blocks without an address, placed at their segment's address plus the sizes before them",
                self.block_addresses
            ));
        }
        if self.history_blocks > 0 {
            n.push(format!(
                "legacy layout (torch 1.13–2.0): stacks (and missing requested sizes) of {} blocks from their newest history entry",
                self.history_blocks
            ));
        }
        if self.no_requested > 0 {
            n.push(format!(
                "{} blocks without requested_size (torch ≤ 1.12): their size counts as requested, so rounding waste is not known for them",
                self.no_requested
            ));
        }
        if self.segment_size_key > 0 {
            n.push(format!("{} segments give `size` instead of `total_size`", self.segment_size_key));
        }
        if self.segment_size_summed > 0 {
            n.push(format!("{} segments without a size: taken as the sum of their blocks", self.segment_size_summed));
        }
        if clamped_lines > 0 {
            n.push(format!(
                "{clamped_lines} frame line numbers beyond 64-bit signed range (size_t(-1) of CUDA-graph / torch.compile frames) clamped"
            ));
        }
        n
    }
}

impl B {
    fn frame(&mut self, pk: &Pickle, v: Value) -> u32 {
        let key = match v {
            Value::Dict(i) => i,
            _ => u32::MAX,
        };
        if let Some(&id) = self.frame_ids.get(&key) {
            return id;
        }
        let (line, clamped) = pk.get(v, "line").and_then(|l| pk.int_clamped(l)).unwrap_or((0, false));
        let f = Frame {
            name: text(pk, v, "name").unwrap_or_default(),
            filename: text(pk, v, "filename").unwrap_or_default(),
            line,
        };
        let id = self.frame_id(f, clamped);
        self.frame_ids.insert(key, id);
        id
    }
    /// A frame's index in `snap.frames`, added if new.
    fn frame_id(&mut self, f: Frame, clamped: bool) -> u32 {
        let k = (f.name.clone(), f.filename.clone(), f.line);
        match self.frame_keys.get(&k) {
            Some(&id) => id,
            None => {
                self.snap.frames.push(f);
                self.frame_clamped.push(clamped);
                self.clamped_lines += clamped as usize;
                let id = (self.snap.frames.len() - 1) as u32;
                self.frame_keys.insert(k, id);
                id
            }
        }
    }
    /// Interns a `frames` list value (shared lists are converted once).
    fn stack_of(&mut self, pk: &Pickle, fr: Value) -> StackId {
        let (Value::List(key) | Value::Tuple(key)) = fr else { return 0 };
        if let Some(&id) = self.stack_ids.get(&key) {
            return id;
        }
        let items = pk.seq(fr).unwrap_or_default();
        let id = if items.is_empty() {
            0
        } else {
            let st: Vec<u32> = items.iter().map(|&f| self.frame(pk, f)).collect();
            self.snap.stacks.push(st);
            let id = (self.snap.stacks.len() - 1) as StackId;
            if let Some(k) = pk.prefix_source(fr) {
                self.stack_src.insert(id, k);
            }
            id
        };
        self.stack_ids.insert(key, id);
        id
    }
    fn stack(&mut self, pk: &Pickle, d: Value) -> StackId {
        match pk.get(d, "frames") {
            Some(fr) => self.stack_of(pk, fr),
            None => 0,
        }
    }
    fn intern(&mut self, pk: &Pickle, v: Value) -> u32 {
        let Value::Str(i) = v else { return 0 };
        if let Some(&id) = self.text_ids.get(&i) {
            return id;
        }
        let id = self.text_id(pk.str(v).unwrap_or(""));
        self.text_ids.insert(i, id);
        id
    }
    /// A text's index in `snap.strings` (0 for none or `N/A`), added if new.
    fn text_id(&mut self, s: &str) -> u32 {
        if s.is_empty() || s == "N/A" {
            0
        } else if let Some(&p) = self.text_keys.get(s) {
            p
        } else {
            self.snap.strings.push(s.to_string());
            let id = (self.snap.strings.len() - 1) as u32;
            self.text_keys.insert(s.to_string(), id);
            id
        }
    }
}

fn build(pk: Pickle, mut b: B) -> Result<MemorySnapshot, String> {
    let root = pk.root();
    let mut legacy = Legacy::default();
    let segs = match root {
        // torch.cuda.memory_snapshot() returns the segments alone; memory_viz's _read wraps it
        Value::List(_) | Value::Tuple(_) => {
            legacy.bare_list = true;
            root
        }
        Value::Dict(_) => pk.get(root, "segments").ok_or("no 'segments' key: not a torch memory snapshot")?,
        _ => return Err("pickle does not hold a dict or a list of segments (not a memory snapshot)".into()),
    };
    let segs = pk.seq(segs).ok_or("'segments' is not a list")?.to_vec();
    for (si, &sg) in segs.iter().enumerate() {
        let seg = segment(&pk, &mut b, &mut legacy, sg).map_err(|e| format!("segments[{si}]: {e}"))?;
        b.snap.segments.push(seg);
    }
    legacy.no_traces = !legacy.bare_list && pk.get(root, "device_traces").is_none();
    b.snap.allocator_settings = pk
        .get(root, "allocator_settings")
        .map(|v| pk.to_json(v, 16))
        .transpose()
        .map_err(|e| format!("allocator_settings: {e}"))?;
    if let Some(anns) = pk.get(root, "external_annotations").and_then(|v| pk.seq(v)) {
        for &a in anns.iter() {
            b.snap.external_annotations.push(Annotation {
                stage: text(&pk, a, "stage").unwrap_or_default(),
                name: text(&pk, a, "name").unwrap_or_default(),
                device: int(&pk, a, "device").unwrap_or(0),
                time_us: int(&pk, a, "time_us"),
            });
        }
    }
    let dts: Vec<Value> = pk.get(root, "device_traces").and_then(|v| pk.seq(v)).map(|s| s.to_vec()).unwrap_or_default();
    for (di, &dt) in dts.iter().enumerate() {
        // The usual case: this list holds every converted entry, in order (as a run, or, in
        // a pickle that lists them in one LIST opcode, item by item). Take the vector as it
        // is (no second copy of the trace in memory).
        let every_entry = |first: u32, n: usize| first == 0 && n > 0 && n == b.entries.len();
        if pk.ext_run(dt).is_some_and(|(first, n)| every_entry(first, n as usize)) {
            b.snap.device_traces.push(std::mem::take(&mut b.entries));
            b.taken.clear();
            continue;
        }
        let list = pk.seq(dt).ok_or_else(|| format!("device_traces[{di}] is not a list"))?;
        let n = list.len();
        if every_entry(0, n) && list.iter().enumerate().all(|(k, v)| *v == Value::Ext(k as u32)) {
            b.snap.device_traces.push(std::mem::take(&mut b.entries));
            b.taken.clear();
            continue;
        }
        b.taken.resize(b.entries.len(), false);
        let mut out = Vec::with_capacity(n);
        for ei in 0..n {
            let e = list[ei];
            let t = match e {
                Value::Ext(x) => match b.taken.get_mut(x as usize) {
                    Some(t) if !*t => {
                        *t = true;
                        Some(b.entries[x as usize].clone())
                    }
                    _ => None,
                },
                // filled one SETITEM at a time (protocols 0/1, or a 1-item dict), so never
                // handed to the sink: convert it here
                Value::Dict(_) => {
                    b.trace_entry(&pk, &pk.flat_items(e)).map_err(|x| format!("device_traces[{di}][{ei}]: {x}"))?
                }
                _ => None,
            };
            out.push(
                t.ok_or_else(|| format!("device_traces[{di}][{ei}]: not a trace entry (a dict with an 'action')"))?,
            );
        }
        b.snap.device_traces.push(out);
    }
    b.snap.notes = legacy.notes(b.clamped_lines);
    Ok(b.snap)
}

/// One segment with its blocks, in any layout torch wrote.
fn segment(pk: &Pickle, b: &mut B, legacy: &mut Legacy, sg: Value) -> Result<Segment, String> {
    if pk.dict(sg).is_none() {
        return Err("not a dict (not a memory snapshot segment)".into());
    }
    let address = uint(pk, sg, "address")?;
    let mut blocks = Vec::new();
    // where the next block starts: blocks tile their segment in address order
    let mut at = address;
    let listed = pk.get(sg, "blocks").and_then(|v| pk.seq(v)).unwrap_or_default();
    for (bi, &bk) in listed.iter().enumerate() {
        let ctx = |e: String| format!("blocks[{bi}]: {e}");
        if pk.dict(bk).is_none() {
            return Err(ctx("not a dict".into()));
        }
        let size = uint(pk, bk, "size").map_err(ctx)?;
        let own = opt_uint(pk, bk, "address").map_err(ctx)?;
        legacy.block_addresses += own.is_none() as usize;
        let block_address = own.unwrap_or(at);
        let state = BlockState::parse(&text(pk, bk, "state").unwrap_or_default());
        let mut requested_size = opt_uint(pk, bk, "requested_size").map_err(ctx)?;
        let mut stack = b.stack(pk, bk);
        // memory_viz: a block without `frames` is the legacy format; its newest history entry
        // (history[0]) carries the frames and, where requested_size is missing or 0, the size
        if pk.get(bk, "frames").is_none() {
            let newest = pk.get(bk, "history").and_then(|h| pk.seq(h)).and_then(|h| h.first().copied());
            if let Some(h) = newest {
                legacy.history_blocks += 1;
                stack = b.stack(pk, h);
                if requested_size.unwrap_or(0) == 0 {
                    requested_size = opt_uint(pk, h, "real_size").map_err(|e| ctx(format!("history[0]: {e}")))?;
                }
            } else if requested_size.is_none() && state.is_active() {
                legacy.no_requested += 1;
            }
        }
        blocks.push(Block { address: block_address, size, requested_size, state, stack });
        at = block_address.saturating_add(size);
    }
    let total_size = match (opt_uint(pk, sg, "total_size")?, opt_uint(pk, sg, "size")?) {
        (Some(t), _) => t,
        (None, Some(s)) => {
            legacy.segment_size_key += 1;
            s
        }
        (None, None) => {
            legacy.segment_size_summed += 1;
            blocks.iter().fold(0u64, |a, x| a.saturating_add(x.size))
        }
    };
    let pool_id = pk
        .get(sg, "segment_pool_id")
        .and_then(|v| pk.seq(v))
        .map(|t| (t.first().and_then(|v| pk.int(*v)).unwrap_or(0), t.get(1).and_then(|v| pk.int(*v)).unwrap_or(0)))
        .unwrap_or((0, 0));
    Ok(Segment {
        device: int(pk, sg, "device").unwrap_or(0),
        address,
        total_size,
        stream: int(pk, sg, "stream").unwrap_or(0),
        segment_type: text(pk, sg, "segment_type").unwrap_or_default(),
        pool_id,
        is_expandable: pk.get(sg, "is_expandable").map(|v| v == Value::Bool(true)).unwrap_or(false),
        blocks,
        stack: b.stack(pk, sg),
    })
}

/// Reads a `torch.cuda.memory_stats()` JSON dump (an object of numbers; others are skipped).
pub fn import_stats(path: &Path) -> Result<MemoryStats, ImportError> {
    let text = std::fs::read(path).map_err(|e| ImportError::io(path, e))?;
    stats_from_bytes(&text).map_err(|e| ImportError::bad(path, e))
}

/// Decodes a `torch.cuda.memory_stats()` dump from JSON bytes (the entry point a fuzz target calls).
pub fn stats_from_bytes(text: &[u8]) -> Result<MemoryStats, String> {
    let v: serde_json::Value = serde_json::from_slice(text).map_err(|e| format!("JSON: {e}"))?;
    let obj = v.as_object().ok_or("expected a JSON object (torch.cuda.memory_stats())")?;
    let mut s = MemoryStats::default();
    for (k, x) in obj {
        if let Some(f) = x.as_f64() {
            s.values.insert(k.clone(), f);
        }
    }
    Ok(s)
}
