//! Chrome trace-event JSON, as written by the PyTorch profiler (Kineto, CUDA and ROCm) and by
//! any other producer: `.json` or `.json.gz`, object or bare-array form, missing `]` and
//! trailing commas tolerated. Events are parsed on all cores (see `chunks`), then assembled
//! in file order into lanes, flows and counters (see `assemble`).

mod assemble;
mod blocks;
mod chunks;
pub(crate) mod direct;
mod event;
mod members;
mod object_blocks;
mod scan;
#[cfg(test)]
mod stream_tests;
mod text;

use crate::{ImportError, Progress};
use assemble::Assembler;
use rayon::prelude::*;
use std::io::Read;
use std::path::Path;
use std::sync::atomic::Ordering;
use strobe_model::{DeviceInfo, DistributedInfo, SourceFormat, TraceMeta};
use strobe_store::StoreBuilder;
use text::Text;

const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// How a gzip stream inflated into memory first ended, and what its reader noted.
type GzEnd = (members::End, Vec<String>);

/// Inflates a whole gzip stream into memory (every member, see `members`): the path where no
/// address space can be reserved for inflating alongside the parse.
fn inflate(path: &Path, compressed: impl Read, progress: &Progress) -> Result<(Vec<u8>, GzEnd), ImportError> {
    let mut dec = members::Members::new(std::io::BufReader::new(compressed));
    let mut out = Vec::new();
    let mut buf = vec![0u8; 1 << 20];
    let end = loop {
        if progress.cancelled() {
            return Err(ImportError::Cancelled { path: path.to_path_buf() });
        }
        match dec.read(&mut buf) {
            Ok(0) => break members::End::Complete,
            Ok(k) => out.extend_from_slice(&buf[..k]),
            Err(e) => match members::End::of_error(&e, out.len() as u64) {
                members::End::Corrupt(what) => return Err(ImportError::bad(path, what)),
                end => break end,
            },
        }
    };
    Ok((out, (end, dec.into_notes())))
}

/// Imports a gzip stream of `len` compressed bytes: inflated on a thread of its own while the
/// parse reads what has arrived (see `text`).
fn import_gzip(
    path: &Path,
    compressed: impl Read + Send,
    len: u64,
    reuse: Option<text::Reuse>,
    b: &mut StoreBuilder,
    progress: &Progress,
) -> Result<TraceMeta, ImportError> {
    // progress counts compressed bytes read by the inflater
    progress.bytes_total.store(len, Ordering::Relaxed);
    let counted = CountingReader { inner: compressed, progress };
    let Some(inflated) = text::Inflated::reserve(len, reuse) else {
        let (out, end) = inflate(path, counted, progress)?;
        progress.bytes_done.store(0, Ordering::Relaxed);
        progress.bytes_total.store(out.len() as u64, Ordering::Relaxed);
        return import_text(path, Text::Whole(&out), Some(end), b, progress);
    };
    std::thread::scope(|s| {
        let inflater = s.spawn(|| inflated.run(counted, progress));
        // however the parse ends (an error, a panic, or done while the stream still runs on),
        // the inflater stops at its next read instead of running on to the end of the file
        let stop = StopOnDrop(&inflated);
        let r = import_text(path, Text::Growing(&inflated), None, b, progress);
        drop(stop);
        // a panic in the inflater has already published an end (the parse saw it); its
        // payload is not needed here
        let _ = inflater.join();
        match inflated.end() {
            // corrupt deflate data is the file's fault whatever the parse made of the text before it
            Some((members::End::Corrupt(e), _)) => Err(ImportError::bad(path, e)),
            Some((members::End::Cancelled, _)) if progress.cancelled() => {
                Err(ImportError::Cancelled { path: path.to_path_buf() })
            }
            _ => r,
        }
    })
}

/// Stops an inflater when dropped.
struct StopOnDrop<'a>(&'a text::Inflated);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.stop();
    }
}

struct CountingReader<'p, R> {
    inner: R,
    progress: &'p Progress,
}

impl<R: Read> Read for CountingReader<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.progress.add_bytes(n as u64);
        Ok(n)
    }
}

/// The input less a UTF-8 character cut by the end of the file (a partial copy can end
/// mid-character): the JSON is then cut inside a string, which the parse reports as the cut.
fn without_cut_char(b: &[u8]) -> &[u8] {
    for k in 1..=b.len().min(3) {
        let c = b[b.len() - k];
        if c < 0x80 {
            break;
        }
        if c >= 0xC0 {
            let need = if c >= 0xF0 {
                4
            } else if c >= 0xE0 {
                3
            } else {
                2
            };
            if need > k {
                return &b[..b.len() - k];
            }
            break;
        }
    }
    b
}

fn skip_ws(b: &[u8], mut p: usize) -> usize {
    while p < b.len() && b[p].is_ascii_whitespace() {
        p += 1;
    }
    p
}

/// Imports a chrome/Kineto trace into `b`; returns the trace's metadata and load summary.
pub fn import(path: &Path, b: &mut StoreBuilder, progress: &Progress) -> Result<TraceMeta, ImportError> {
    let _t_all = strobe_store::timing::Phase::start("chrome import (total)");
    let mut f = std::fs::File::open(path).map_err(|e| ImportError::io(path, e))?;
    let len = f.metadata().map_err(|e| ImportError::io(path, e))?.len();
    let mut magic = [0u8; 2];
    let n = f.read(&mut magic).map_err(|e| ImportError::io(path, e))?;
    if n == 2 && magic == GZIP_MAGIC {
        let f = std::fs::File::open(path).map_err(|e| ImportError::io(path, e))?;
        return import_gzip(path, f, len, text::Reuse::from_env(), b, progress);
    }
    progress.bytes_total.store(len, Ordering::Relaxed);
    if len == 0 {
        return import_text(path, Text::Whole(&[]), None, b, progress);
    }
    // SAFETY: the input is only read; a file truncated while mapped can fault, which every
    // mmap-based reader accepts (the cache key catches changes made before opening).
    let m = unsafe { memmap2::Mmap::map(&f) }.map_err(|e| ImportError::io(path, e))?;
    // the file is mapped and pinned by the cache key: keep args there instead of copying
    if let Ok(abs) = std::fs::canonicalize(path) {
        b.args_in_source(&m, &abs.to_string_lossy());
    }
    import_text(path, Text::Whole(&m), None, b, progress)
}

/// Imports a trace held in memory, plain or gzipped (what a fuzz target calls): the same
/// parse as [`import`], with args copied into the store. `name` is the source named in
/// errors and in the metadata.
pub fn import_bytes(
    name: &Path,
    bytes: &[u8],
    b: &mut StoreBuilder,
    progress: &Progress,
) -> Result<TraceMeta, ImportError> {
    if bytes.starts_with(&GZIP_MAGIC) {
        return import_gzip(name, bytes, bytes.len() as u64, text::Reuse::from_env(), b, progress);
    }
    progress.bytes_total.store(bytes.len() as u64, Ordering::Relaxed);
    import_text(name, Text::Whole(bytes), None, b, progress)
}

/// Skips whitespace from `p`, waiting for more of a growing text when it runs out there.
/// Returns the text as it is then, whether that is all of it, and the position.
fn skip_ws_in<'a>(text: Text<'a>, p: usize) -> (&'a [u8], bool, usize) {
    loop {
        let (buf, done) = text.now();
        let q = skip_ws(buf, p);
        if q < buf.len() || done {
            return (buf, done, q);
        }
        text.beyond(buf.len());
    }
}

/// The JSON value of type `T` at `p` and the position after it: None when the text ends
/// first (a growing text is waited for, its available part parsed again at twice the length).
fn value_at<T: serde::de::DeserializeOwned>(text: Text<'_>, p: usize) -> (Option<Result<T, serde_json::Error>>, usize) {
    loop {
        let (buf, done) = text.now();
        let mut de = serde_json::Deserializer::from_slice(&buf[p.min(buf.len())..]).into_iter::<T>();
        let v = de.next();
        let incomplete = v.is_none() || matches!(&v, Some(Err(e)) if e.is_eof());
        if !incomplete || done {
            return (v, p + de.byte_offset());
        }
        text.beyond(buf.len() + (buf.len() - p.min(buf.len())).max(1 << 16));
    }
}

/// Parses the JSON text of `path` (growing while a gzip stream inflates); `gz_end` says how
/// a gzip stream inflated into memory first ended.
fn import_text<'a>(
    path: &Path,
    text: Text<'a>,
    gz_end: Option<GzEnd>,
    b: &mut StoreBuilder,
    progress: &Progress,
) -> Result<TraceMeta, ImportError> {
    let mut meta = TraceMeta::new(SourceFormat::Chrome, path.display().to_string());
    text.beyond(2); // room to see a byte-order mark
    let (mut buf, _, mut p) = skip_ws_in(text, 0);
    if buf[p..].starts_with(&[0xEF, 0xBB, 0xBF]) {
        (buf, _, p) = skip_ws_in(text, p + 3);
    }
    if p >= buf.len() {
        let what = if gz_end.is_some() || matches!(text, Text::Growing(_)) {
            "the gzip stream ends before any JSON"
        } else {
            "empty file: no JSON in it"
        };
        return Err(ImportError::bad(path, what));
    }
    // a growing text gives its pages back behind the parse: what is read at the end is kept
    let mut asm = Assembler::new(buf, matches!(text, Text::Growing(_)));
    // `ts`/`dur` are microseconds whatever `displayTimeUnit` says: the trace-event format
    // defines that key as a display hint only, and Perfetto's importer ignores it for
    // timestamps. PyTorch writes `"ns"` for traces whose µs values carry ns digits.
    let unit_ns = 1000i64;
    match buf[p] {
        b'[' => {
            parse_events(path, text, p + 1, unit_ns, &mut asm, b, progress)?;
        }
        b'{' => {
            p += 1;
            let mut saw_events = false;
            loop {
                let (buf, _, q) = skip_ws_in(text, p);
                p = q;
                if p >= buf.len() {
                    // the object left open: a cut file (Kineto always closes it); what was read stays
                    asm.cut.get_or_insert((buf.len() as u64, "the file ends before the top-level object's '}'".into()));
                    break;
                }
                match buf[p] {
                    b'}' => break,
                    b',' => {
                        p += 1;
                        continue;
                    }
                    b'"' => {}
                    c => {
                        return Err(ImportError::bad(
                            path,
                            format!("at byte {p}: expected a key in the top-level object, found {:?}", c as char),
                        ))
                    }
                }
                let key: String = match value_at::<String>(text, p) {
                    (Some(Ok(k)), q) => {
                        p = q;
                        k
                    }
                    (Some(Err(e)), _) if e.is_eof() => {
                        asm.cut.get_or_insert((p as u64, "the file ends inside a key of the top-level object".into()));
                        break;
                    }
                    (Some(Err(e)), _) => return Err(ImportError::bad(path, format!("at byte {p}: bad key: {e}"))),
                    (None, _) => {
                        asm.cut.get_or_insert((p as u64, "the file ends inside the top-level object".into()));
                        break;
                    }
                };
                let (buf, _, q) = skip_ws_in(text, p);
                p = q;
                if p >= buf.len() {
                    asm.cut.get_or_insert((p as u64, format!("the file ends after the key {key:?}")));
                    break;
                }
                if buf.get(p) != Some(&b':') {
                    return Err(ImportError::bad(path, format!("at byte {p}: expected ':' after key {key:?}")));
                }
                let (buf, _, q) = skip_ws_in(text, p + 1);
                p = q;
                if key == "traceEvents" {
                    if buf.get(p) != Some(&b'[') {
                        return Err(ImportError::bad(path, format!("at byte {p}: traceEvents is not an array")));
                    }
                    saw_events = true;
                    p = parse_events(path, text, p + 1, unit_ns, &mut asm, b, progress)?;
                    continue;
                }
                let v: serde_json::Value = match value_at::<serde_json::Value>(text, p) {
                    (Some(Ok(v)), q) => {
                        p = q;
                        v
                    }
                    (Some(Err(e)), _) if e.is_eof() => {
                        asm.cut.get_or_insert((p as u64, format!("the file ends inside the value of {key:?}")));
                        break;
                    }
                    (Some(Err(e)), _) => {
                        return Err(ImportError::bad(path, format!("at byte {p}: bad value of {key:?}: {e}")))
                    }
                    (None, _) => {
                        asm.cut.get_or_insert((p as u64, format!("the file ends before the value of {key:?}")));
                        break;
                    }
                };
                top_level_key(&mut meta, &key, v);
            }
            if !saw_events && asm.cut.is_none() {
                // the object form of the trace-event format is defined by its traceEvents
                let mut keys: Vec<&String> = meta.extra.keys().take(6).collect();
                keys.sort();
                return Err(ImportError::bad(
                    path,
                    if keys.is_empty() {
                        "not a chrome trace: an empty JSON object (no traceEvents array)".to_string()
                    } else {
                        format!(
                            "not a chrome trace: a JSON object without a traceEvents array (its keys: {})",
                            keys.iter().map(|k| k.as_str()).collect::<Vec<_>>().join(", ")
                        )
                    },
                ));
            }
            if !saw_events {
                meta.load.notes.push("no traceEvents array: 0 events".into());
            }
        }
        c => {
            return Err(ImportError::bad(
                path,
                format!("not a chrome trace: starts with {:?}, expected '{{' or '['", c as char),
            ))
        }
    }
    // the end of a gzip stream is waited for (what follows the JSON is inflated to check the
    // trailers); the text is then all there is
    let (full, _) = text.beyond(usize::MAX);
    let buf = without_cut_char(full);
    asm.set_text(buf);
    let (gzip_cut, gzip_notes) = match if let Text::Growing(g) = text { g.end() } else { gz_end } {
        Some((members::End::Cut(c), notes)) => (Some(c), notes),
        Some((_, notes)) => (None, notes),
        None => (None, Vec::new()),
    };
    let t_fin = strobe_store::timing::Phase::start("assemble finish (B/E, flows)");
    asm.finish(b, &mut meta).map_err(|e| ImportError::io(path, e))?;
    drop(t_fin);
    meta.load.notes.extend(gzip_notes);
    if asm.cut.is_some() || gzip_cut.is_some() {
        let (at, what) = asm.cut.clone().unwrap_or((buf.len() as u64, String::new()));
        let what = match (gzip_cut, what.is_empty()) {
            (Some(g), true) => g,
            (Some(g), false) => format!("{g}; {what}"),
            (None, _) => what,
        };
        meta.load.truncated = Some(strobe_model::Truncation { at_byte: at, events_read: meta.load.events, what });
    }
    if asm.kineto || meta.extra.contains_key("schemaVersion") || !meta.devices.is_empty() {
        meta.format = SourceFormat::Kineto;
    }
    Ok(meta)
}

/// One wave of chunks to parse: `ranges` cut `text` (valid UTF-8 throughout); `complete`
/// when `text` is the whole input, so its end is the file's end rather than where the
/// inflater had got to.
struct Wave<'a> {
    text: &'a str,
    ranges: Vec<(usize, usize)>,
    complete: bool,
}

/// Cuts the text into waves of chunks as it arrives.
struct Feed<'a> {
    text: Text<'a>,
    /// Where the next wave starts (a guessed event boundary).
    from: usize,
    /// Bytes below this were checked as UTF-8.
    valid_to: usize,
    chunk: usize,
    /// What `chunk` grows to, doubling per wave (a growing text starts on small chunks, so
    /// the first events are parsed soon after the inflater starts).
    max_chunk: usize,
    wave: usize,
    finished: bool,
}

impl<'a> Feed<'a> {
    /// The next wave, waiting for its text; None after the wave that reached the end.
    fn next(&mut self, path: &Path) -> Result<Option<Wave<'a>>, ImportError> {
        if self.finished {
            return Ok(None);
        }
        let mut want = self.from + self.chunk * (self.wave + 1);
        loop {
            let (buf, done) = self.text.beyond(want.saturating_sub(1));
            // a character cut by the end of what is there: waits for its rest (or is the cut)
            let buf = without_cut_char(buf);
            let scan_to = buf.len().min(want);
            let complete = done && scan_to == buf.len();
            let mut starts = chunks::guess_boundaries(&buf[..scan_to], self.from, self.chunk);
            // the last chunk of a text still arriving may be cut: it opens the next wave. Where
            // there is only one (no event starts in what arrived: one long event, or a long run
            // of whitespace) it is parsed as far as it has arrived, and an event cut there is
            // parsed again by the next wave, so the parse never waits on a boundary that may
            // not come (and `from` moves on, so no byte is scanned for boundaries twice).
            let limit = if complete {
                buf.len()
            } else if starts.len() > 1 {
                starts.pop().unwrap_or(0)
            } else {
                // at a character boundary, as every wave's end is
                without_cut_char(&buf[..scan_to]).len()
            };
            if limit <= self.from && complete {
                // the text is all there and ends where the last wave did (a stream that stopped
                // at a wave's edge): one empty, complete wave lets the parse see the end there
                // (asking for more would wait, or spin, for bytes that will not come)
                let to = self.from.min(buf.len());
                if let Err(err) = simdutf8::compat::from_utf8(&buf[self.valid_to.min(to)..to]) {
                    return Err(ImportError::bad(
                        path,
                        format!("at byte {}: invalid UTF-8", self.valid_to.min(to) + err.valid_up_to()),
                    ));
                }
                // SAFETY: `buf[..to]` is UTF-8: below `valid_to` by earlier waves, the rest just now
                let text: &'a str = unsafe { std::str::from_utf8_unchecked(&buf[..to]) };
                self.finished = true;
                return Ok(Some(Wave { text, ranges: vec![(to, to)], complete: true }));
            }
            if limit <= self.from {
                want += self.chunk * (self.wave + 1);
                continue;
            }
            let mut ends: Vec<usize> = starts.iter().skip(1).copied().collect();
            ends.push(limit);
            let ranges: Vec<(usize, usize)> = starts.into_iter().zip(ends).collect();
            // UTF-8 once, in parallel over the chunks (each starts at a char boundary: an ASCII '{'
            // or a wave's start)
            let mut pieces: Vec<(usize, usize)> = ranges.clone();
            pieces[0].0 = self.valid_to.min(pieces[0].0);
            let bad = pieces
                .par_iter()
                .filter_map(|&(s, e)| simdutf8::compat::from_utf8(&buf[s..e]).err().map(|err| s + err.valid_up_to()))
                .min();
            if let Some(at) = bad {
                return Err(ImportError::bad(path, format!("at byte {at}: invalid UTF-8")));
            }
            self.valid_to = limit;
            // SAFETY: every byte of `buf[..limit]` was validated as UTF-8, here or by an
            // earlier wave (the text below `valid_to` never changes).
            let text: &'a str = unsafe { std::str::from_utf8_unchecked(&buf[..limit]) };
            self.from = limit;
            self.finished = complete;
            self.chunk = (self.chunk * 2).min(self.max_chunk);
            return Ok(Some(Wave { text, ranges, complete }));
        }
    }
}

/// Reads the events of the array whose first event starts at or after `from` (just past its
/// `[`) as each of the ingest's chunks does, on this thread alone: how `strobe bench scanners`
/// compares the scanner with other JSON parsers on the same bytes. Returns the events read
/// and the position just past the array's `]`, or where an error stopped it, and why.
pub fn scan_events_on_one_thread(text: &str, from: usize) -> (u64, usize, Option<String>) {
    let out = chunks::parse_chunk(text, from, text.len(), 1000);
    (out.events, out.array_end.unwrap_or(out.stop), out.error.map(|(_, what)| what))
}

/// Parses the event array that starts at `from`; returns the position after it.
fn parse_events<'a>(
    path: &Path,
    text: Text<'a>,
    from: usize,
    unit_ns: i64,
    asm: &mut Assembler<'a>,
    b: &mut StoreBuilder,
    progress: &Progress,
) -> Result<usize, ImportError> {
    let threads = rayon::current_num_threads().max(1);
    let (now, done) = text.now();
    // a whole text is cut into ~64 chunks per core; one still arriving into 256 kB chunks
    // growing to 2 MB
    let (chunk, max_chunk) = if done {
        let c = ((now.len() - from) / (threads * 64)).clamp(1 << 20, 4 << 20);
        (c, c)
    } else {
        (256 << 10, 2 << 20)
    };
    let report_bytes = done;
    let wctx = WaveCtx { path, unit_ns, progress, report_bytes };
    let mut feed = Feed { text, from, valid_to: 0, chunk, max_chunk, wave: threads * 4, finished: false };
    // the chunks' event buffers go round: a wave's, once assembled, are the next wave's, so
    // their pages are not given back and faulted in again (on this VM, faulting fresh pages
    // took a third of a scaled ResNet trace's ingest)
    let spare = chunks::SpareEvents::default();
    let parse_wave = |w: Wave<'a>| -> (Wave<'a>, Vec<chunks::ChunkOut<'a>>) {
        let outs =
            w.ranges.par_iter().map(|&(s, e)| chunks::parse_chunk_into(w.text, s, e, unit_ns, spare.take())).collect();
        (w, outs)
    };
    // Pipeline: assemble wave k (serial, one core) while wave k+1 waits for its text and
    // parses (all cores).
    let mut expected = from;
    let mut reserved = false;
    let mut ready = feed.next(path)?.map(&parse_wave);
    while let Some((wave, outs)) = ready.take() {
        if progress.cancelled() {
            return Err(ImportError::Cancelled { path: path.to_path_buf() });
        }
        let t0 = std::time::Instant::now();
        if expected > from && !reserved {
            // the spans of the whole file, guessed from the first wave's density: one
            // allocation instead of doublings that copy hundreds of MB into fresh pages (pages
            // of an over-guess are never touched)
            let total = if report_bytes {
                Some((now.len() - from) as f64)
            } else {
                // still inflating: the text so far scaled by the compressed bytes read so far
                // (read ahead of the inflate, so low: doubled)
                let read = progress.bytes_done.load(Ordering::Relaxed) as f64;
                let all = progress.bytes_total.load(Ordering::Relaxed) as f64;
                (read >= (1 << 20) as f64).then(|| wave.text.len() as f64 * all / read * 2.0)
            };
            if let Some(total) = total {
                reserved = true;
                // twice the first wave's density: Kineto writes a step's CPU ops apart from
                // its GPU work, so the file's first megabytes can hold half the spans per byte
                // of the rest (a scaled ResNet trace: 1108 bytes a span in its first 18 MB,
                // 617 over the file). A text still inflating has its length doubled already:
                // doubling again would ask four times the room, and a request that large can
                // send the arrays to files as if memory were short.
                let headroom = if report_bytes { 2.0 } else { 1.0 };
                let guess = |count: usize| (count as f64 / (expected - from) as f64 * total * headroom) as usize + 1024;
                let spans = guess(b.span_count());
                b.reserve_spans(spans.saturating_sub(b.span_count()).min(1 << 31));
                let steps = guess(b.flow_step_count());
                b.reserve_flow_steps(steps.saturating_sub(b.flow_step_count()).min(1 << 28));
            }
        }
        asm.set_text(wave.text.as_bytes());
        let (done, next) = rayon::join(
            || -> Result<Option<usize>, ImportError> {
                let t_asm = std::time::Instant::now();
                let r = assemble_wave(&wctx, &wave, outs, &mut expected, asm, b, &spare);
                asm.assemble_ns += t_asm.elapsed().as_nanos() as u64;
                r
            },
            || feed.next(path).map(|w| w.map(&parse_wave)),
        );
        asm.parse_ns += t0.elapsed().as_nanos() as u64;
        if let Some(end) = done? {
            return Ok(end);
        }
        // SAFETY: nothing below `expected` less 3 bytes is read again. The next wave's chunks
        // start at or after it (and are re-parsed from it when their guess was wrong), and
        // boundaries are guessed from the next wave's start on; the assembler copied what it
        // keeps (names interned, thread keys owned, B/E and async args kept:
        // `Assembler::new`); what follows the event array lies after it. The 3 bytes:
        // `without_cut_char` looks back that far from the end of what has arrived.
        unsafe { text.release(expected.saturating_sub(3)) };
        ready = next?;
    }
    Ok(expected)
}

/// What every wave's assembly needs besides the wave.
struct WaveCtx<'p> {
    path: &'p Path,
    unit_ns: i64,
    progress: &'p Progress,
    /// The whole text is known: progress is reported in its bytes.
    report_bytes: bool,
}

/// Adds one parsed wave's chunks to the store in order (serial: span ids follow the file),
/// re-parsing a chunk whose guessed start fell inside a string. `expected` is where the
/// next chunk must start. Some(position after the event array) when the array ended in this
/// wave (or the file was cut, keeping every complete event before the cut).
fn assemble_wave<'a>(
    w: &WaveCtx<'_>,
    wave: &Wave<'a>,
    outs: Vec<chunks::ChunkOut<'a>>,
    expected: &mut usize,
    asm: &mut Assembler<'a>,
    b: &mut StoreBuilder,
    spare: &chunks::SpareEvents,
) -> Result<Option<usize>, ImportError> {
    for (i, out) in outs.into_iter().enumerate() {
        let out = if out.start == *expected {
            out
        } else {
            // the guess was inside a string: parse again from the true boundary
            chunks::parse_chunk(wave.text, *expected, wave.ranges[i].1.max(*expected), w.unit_ns)
        };
        if let (Some((at, what)), true) = (&out.error, out.truncated) {
            asm.add_chunk(&out, b).map_err(|e| ImportError::io(w.path, e))?;
            w.progress.add_events(out.events);
            if !wave.complete {
                // cut by where the inflater had got to: the next wave goes on from here
                *expected = *at;
                continue;
            }
            // a cut file: keep every complete event before the cut
            asm.cut = Some((*at as u64, what.clone()));
            return Ok(Some(wave.text.len()));
        }
        if let Some((at, what)) = &out.error {
            return Err(ImportError::bad(w.path, format!("at byte {at} (event {}): {what}", asm.events + out.events)));
        }
        asm.add_chunk(&out, b).map_err(|e| ImportError::io(w.path, e))?;
        w.progress.add_events(out.events);
        spare.give(out.evs);
        if w.report_bytes {
            w.progress.bytes_done.store(out.stop as u64, Ordering::Relaxed);
        }
        *expected = out.stop;
        if let Some(end) = out.array_end {
            return Ok(Some(end));
        }
        if out.eof && wave.complete {
            asm.note_open_array();
            return Ok(Some(wave.text.len()));
        }
    }
    Ok(None)
}

fn top_level_key(meta: &mut TraceMeta, key: &str, v: serde_json::Value) {
    match key {
        "deviceProperties" => {
            if let Some(arr) = v.as_array() {
                for d in arr {
                    let Some(o) = d.as_object() else { continue };
                    let mut info = DeviceInfo {
                        id: o.get("id").and_then(|x| x.as_i64()).unwrap_or(meta.devices.len() as i64),
                        name: o.get("name").and_then(|x| x.as_str()).unwrap_or("").to_string(),
                        total_memory_bytes: o.get("totalGlobalMem").and_then(|x| x.as_u64()),
                        sm_count: o.get("numSms").and_then(|x| x.as_u64()).map(|x| x as u32),
                        compute_capability: match (
                            o.get("computeMajor").and_then(|x| x.as_i64()),
                            o.get("computeMinor").and_then(|x| x.as_i64()),
                        ) {
                            (Some(a), Some(b)) => Some(format!("{a}.{b}")),
                            _ => None,
                        },
                        extra: serde_json::Map::new(),
                    };
                    for (k, x) in o {
                        if !matches!(
                            k.as_str(),
                            "id" | "name" | "totalGlobalMem" | "numSms" | "computeMajor" | "computeMinor"
                        ) {
                            info.extra.insert(k.clone(), x.clone());
                        }
                    }
                    meta.devices.push(info);
                }
            }
        }
        "distributedInfo" => {
            if let Some(o) = v.as_object() {
                let mut di = DistributedInfo {
                    rank: o.get("rank").and_then(|x| x.as_i64()),
                    world_size: o.get("world_size").and_then(|x| x.as_i64()),
                    backend: o.get("backend").and_then(|x| x.as_str()).map(String::from),
                    extra: serde_json::Map::new(),
                };
                for (k, x) in o {
                    if !matches!(k.as_str(), "rank" | "world_size" | "backend") {
                        di.extra.insert(k.clone(), x.clone());
                    }
                }
                meta.distributed = Some(di);
            }
        }
        "baseTimeNanoseconds" => {
            meta.base_time_ns = v.as_i64().or_else(|| v.as_u64().map(|u| u as i64));
        }
        // huge free-form payloads some producers embed: not worth keeping in metadata
        "systemTraceEvents" | "powerTraceAsString" | "stackFrames" | "samples" => {}
        _ => {
            meta.extra.insert(key.to_string(), v);
        }
    }
}
