//! Chrome trace-event JSON, as written by the PyTorch profiler (Kineto, CUDA and ROCm) and by
//! any other producer: `.json` or `.json.gz`, object or bare-array form, missing `]` and
//! trailing commas tolerated. Events are parsed on all cores (see `chunks`), then assembled
//! in file order into lanes, flows and counters (see `assemble`).

mod assemble;
mod chunks;
mod event;
mod scan;

use crate::{ImportError, Progress};
use assemble::Assembler;
use rayon::prelude::*;
use std::io::Read;
use std::path::Path;
use std::sync::atomic::Ordering;
use strobe_model::{DeviceInfo, DistributedInfo, SourceFormat, TraceMeta};
use strobe_store::StoreBuilder;

/// The bytes of the source: mapped when plain, decompressed into memory when gzipped.
enum Input {
    Map(memmap2::Mmap),
    Owned(Vec<u8>),
}

impl Input {
    fn bytes(&self) -> &[u8] {
        match self {
            Input::Map(m) => m,
            Input::Owned(v) => v,
        }
    }
}

/// Reads the source. A gzip stream that ends early (a partial copy) keeps what inflated and
/// says so in the second value; corrupt deflate data is an error.
fn read_input(path: &Path, progress: &Progress) -> Result<(Input, Option<String>), ImportError> {
    let mut f = std::fs::File::open(path).map_err(|e| ImportError::io(path, e))?;
    let len = f.metadata().map_err(|e| ImportError::io(path, e))?.len();
    let mut magic = [0u8; 2];
    let n = f.read(&mut magic).map_err(|e| ImportError::io(path, e))?;
    if n == 2 && magic == GZIP_MAGIC {
        let f = std::fs::File::open(path).map_err(|e| ImportError::io(path, e))?;
        let counted = CountingReader { inner: std::io::BufReader::with_capacity(1 << 20, f), progress };
        let (out, cut) = inflate(path, counted, len, progress)?;
        return Ok((Input::Owned(out), cut));
    }
    progress.bytes_total.store(len, Ordering::Relaxed);
    if len == 0 {
        return Ok((Input::Owned(Vec::new()), None));
    }
    // SAFETY: the input is only read; a file truncated while mapped can fault, which every
    // mmap-based reader accepts (the cache key catches changes made before opening).
    let m = unsafe { memmap2::Mmap::map(&f) }.map_err(|e| ImportError::io(path, e))?;
    Ok((Input::Map(m), None))
}

const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Inflates a gzip stream of `len` compressed bytes (members concatenated, as `gzip -c a b`
/// writes). One that ends early keeps what inflated and says so in the second value.
fn inflate(
    path: &Path,
    compressed: impl Read,
    len: u64,
    progress: &Progress,
) -> Result<(Vec<u8>, Option<String>), ImportError> {
    let mut dec = flate2::read::MultiGzDecoder::new(std::io::BufReader::new(compressed));
    let mut out = Vec::with_capacity((len as usize).saturating_mul(8).min(1 << 32));
    let mut buf = vec![0u8; 1 << 20];
    let mut cut = None;
    loop {
        if progress.cancelled() {
            return Err(ImportError::Cancelled { path: path.to_path_buf() });
        }
        match dec.read(&mut buf) {
            Ok(0) => break,
            Ok(k) => out.extend_from_slice(&buf[..k]),
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                cut =
                    Some(format!("the gzip stream ends early: {len} compressed bytes inflate to {} bytes", out.len()));
                break;
            }
            Err(e) => {
                return Err(ImportError::bad(path, format!("corrupt gzip after {} decompressed bytes: {e}", out.len())))
            }
        }
    }
    progress.bytes_done.store(0, Ordering::Relaxed);
    progress.bytes_total.store(out.len() as u64, Ordering::Relaxed);
    Ok((out, cut))
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
    let t_all = strobe_store::timing::Phase::start("chrome import (total)");
    let t_read = strobe_store::timing::Phase::start("read/decompress input");
    let (input, gzip_cut) = read_input(path, progress)?;
    drop(t_read);
    if let Input::Map(m) = &input {
        // the file is mapped and pinned by the cache key: keep args there instead of copying
        if let Ok(abs) = std::fs::canonicalize(path) {
            b.args_in_source(m, &abs.to_string_lossy());
        }
    }
    let meta = import_text(path, input.bytes(), gzip_cut, b, progress);
    drop(t_all);
    meta
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
        let counted = CountingReader { inner: bytes, progress };
        let (text, cut) = inflate(name, counted, bytes.len() as u64, progress)?;
        return import_text(name, &text, cut, b, progress);
    }
    progress.bytes_total.store(bytes.len() as u64, Ordering::Relaxed);
    import_text(name, bytes, None, b, progress)
}

/// Parses the (inflated) JSON text of `path`; `gzip_cut` says where a gzip stream ended early.
fn import_text(
    path: &Path,
    input: &[u8],
    gzip_cut: Option<String>,
    b: &mut StoreBuilder,
    progress: &Progress,
) -> Result<TraceMeta, ImportError> {
    let buf = without_cut_char(input);
    let mut meta = TraceMeta::new(SourceFormat::Chrome, path.display().to_string());
    let mut p = skip_ws(buf, 0);
    if buf[p..].starts_with(&[0xEF, 0xBB, 0xBF]) {
        p = skip_ws(buf, p + 3);
    }
    if p >= buf.len() {
        let what =
            if gzip_cut.is_some() { "the gzip stream ends before any JSON" } else { "empty file: no JSON in it" };
        return Err(ImportError::bad(path, what));
    }
    let mut asm = Assembler::new(buf);
    // `ts`/`dur` are microseconds whatever `displayTimeUnit` says: the trace-event format
    // defines that key as a display hint only, and Perfetto's importer ignores it for
    // timestamps. PyTorch writes `"ns"` for traces whose µs values carry ns digits.
    let unit_ns = 1000i64;
    match buf[p] {
        b'[' => {
            parse_events(path, buf, p + 1, unit_ns, &mut asm, b, progress)?;
        }
        b'{' => {
            p += 1;
            let mut saw_events = false;
            loop {
                p = skip_ws(buf, p);
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
                let mut de = serde_json::Deserializer::from_slice(&buf[p..]).into_iter::<String>();
                let key: String = match de.next() {
                    Some(Ok(k)) => k,
                    Some(Err(e)) if e.is_eof() => {
                        asm.cut.get_or_insert((p as u64, "the file ends inside a key of the top-level object".into()));
                        break;
                    }
                    Some(Err(e)) => return Err(ImportError::bad(path, format!("at byte {p}: bad key: {e}"))),
                    None => {
                        asm.cut.get_or_insert((p as u64, "the file ends inside the top-level object".into()));
                        break;
                    }
                };
                p += de.byte_offset();
                p = skip_ws(buf, p);
                if p >= buf.len() {
                    asm.cut.get_or_insert((p as u64, format!("the file ends after the key {key:?}")));
                    break;
                }
                if buf.get(p) != Some(&b':') {
                    return Err(ImportError::bad(path, format!("at byte {p}: expected ':' after key {key:?}")));
                }
                p = skip_ws(buf, p + 1);
                if key == "traceEvents" {
                    if buf.get(p) != Some(&b'[') {
                        return Err(ImportError::bad(path, format!("at byte {p}: traceEvents is not an array")));
                    }
                    saw_events = true;
                    p = parse_events(path, buf, p + 1, unit_ns, &mut asm, b, progress)?;
                    continue;
                }
                let mut de = serde_json::Deserializer::from_slice(&buf[p..]).into_iter::<serde_json::Value>();
                let v: serde_json::Value = match de.next() {
                    Some(Ok(v)) => v,
                    Some(Err(e)) if e.is_eof() => {
                        asm.cut.get_or_insert((p as u64, format!("the file ends inside the value of {key:?}")));
                        break;
                    }
                    Some(Err(e)) => {
                        return Err(ImportError::bad(path, format!("at byte {p}: bad value of {key:?}: {e}")))
                    }
                    None => {
                        asm.cut.get_or_insert((p as u64, format!("the file ends before the value of {key:?}")));
                        break;
                    }
                };
                p += de.byte_offset();
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
    let t_fin = strobe_store::timing::Phase::start("assemble finish (B/E, flows)");
    asm.finish(b, &mut meta).map_err(|e| ImportError::io(path, e))?;
    drop(t_fin);
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

/// Parses the event array that starts at `from`; returns the position after it.
fn parse_events(
    path: &Path,
    buf: &[u8],
    from: usize,
    unit_ns: i64,
    asm: &mut Assembler,
    b: &mut StoreBuilder,
    progress: &Progress,
) -> Result<usize, ImportError> {
    let threads = rayon::current_num_threads().max(1);
    let remaining = buf.len() - from;
    let chunk = (remaining / (threads * 64)).clamp(1 << 20, 4 << 20);
    let starts = chunks::guess_boundaries(buf, from, chunk);
    // UTF-8 once, in parallel over the chunks (each starts at an ASCII '{', a char boundary)
    let mut bounds = starts.clone();
    bounds.push(buf.len());
    let bad = bounds
        .par_windows(2)
        .filter_map(|w| std::str::from_utf8(&buf[w[0]..w[1]]).err().map(|e| w[0] + e.valid_up_to()))
        .min();
    if let Some(at) = bad.or_else(|| std::str::from_utf8(&buf[..from]).err().map(|e| e.valid_up_to())) {
        return Err(ImportError::bad(path, format!("at byte {at}: invalid UTF-8")));
    }
    // SAFETY: every byte of `buf` was just validated as UTF-8 in the pieces above.
    let text: &str = unsafe { std::str::from_utf8_unchecked(buf) };
    let wave = threads * 4;
    let waves: Vec<Vec<(usize, usize)>> = (0..starts.len())
        .step_by(wave)
        .map(|k| {
            (k..(k + wave).min(starts.len()))
                .map(|i| (starts[i], starts.get(i + 1).copied().unwrap_or(buf.len())))
                .collect()
        })
        .collect();
    let parse_wave = |ranges: &Vec<(usize, usize)>| -> Vec<chunks::ChunkOut> {
        ranges.par_iter().map(|&(s, e)| chunks::parse_chunk(text, s, e, unit_ns)).collect()
    };
    // Pipeline: assemble wave k (serial, one core) while wave k+1 parses (all cores).
    let mut expected = from;
    let mut ready: Option<Vec<chunks::ChunkOut>> = waves.first().map(&parse_wave);
    for w in 0..waves.len() {
        if progress.cancelled() {
            return Err(ImportError::Cancelled { path: path.to_path_buf() });
        }
        let outs = ready.take().unwrap_or_default();
        let ranges = &waves[w];
        let t0 = std::time::Instant::now();
        let (done, next) = rayon::join(
            || -> Result<Option<usize>, ImportError> {
                for (i, out) in outs.into_iter().enumerate() {
                    let out = if out.start == expected {
                        out
                    } else {
                        // the guess was inside a string: parse again from the true boundary
                        chunks::parse_chunk(text, expected, ranges[i].1.max(expected), unit_ns)
                    };
                    if let (Some((at, what)), true) = (&out.error, out.truncated) {
                        // a cut file: keep every complete event before the cut
                        asm.add_chunk(&out, b).map_err(|e| ImportError::io(path, e))?;
                        progress.add_events(out.events);
                        asm.cut = Some((*at as u64, what.clone()));
                        return Ok(Some(buf.len()));
                    }
                    if let Some((at, what)) = &out.error {
                        return Err(ImportError::bad(
                            path,
                            format!("at byte {at} (event {}): {what}", asm.events + out.events),
                        ));
                    }
                    asm.add_chunk(&out, b).map_err(|e| ImportError::io(path, e))?;
                    progress.add_events(out.events);
                    progress.bytes_done.store(out.stop as u64, Ordering::Relaxed);
                    expected = out.stop;
                    if let Some(end) = out.array_end {
                        return Ok(Some(end));
                    }
                    if out.eof {
                        asm.note_open_array();
                        return Ok(Some(buf.len()));
                    }
                }
                Ok(None)
            },
            || waves.get(w + 1).map(&parse_wave),
        );
        asm.parse_ns += t0.elapsed().as_nanos() as u64;
        if let Some(end) = done? {
            return Ok(end);
        }
        ready = next;
    }
    Ok(expected)
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
