//! Trace events handed to the assembler in memory instead of as JSON text: for an importer
//! that decodes another format into Kineto's shape (a Perfetto trace), so that the same
//! lanes, kernels, steps, flows and counters come out as from the chrome path, without
//! writing the events as text and parsing them again. Each event is taken as the chunk
//! parser takes the same event read from text (`chunks::convert`); only args stay JSON
//! text, as the store keeps them.

use super::assemble::Assembler;
use super::chunks::ChunkOut;
use super::event::CEv;
use crate::{ImportError, Progress};
use rustc_hash::FxHashMap;
use std::borrow::Cow;
use std::path::Path;
use strobe_model::{SourceFormat, SpanKind, TraceMeta};
use strobe_store::StoreBuilder;

pub use super::event::Key;

/// Events in the order the assembler is to see them (as they would stand in the file).
pub struct Events {
    strings: Vec<String>,
    string_ids: FxHashMap<String, u32>,
    /// Each string's span kind as a category, decided once per string.
    cat_kinds: Vec<Option<SpanKind>>,
    threads: Vec<(Key<'static>, Key<'static>)>,
    thread_ids: FxHashMap<(Key<'static>, Key<'static>), u32>,
    evs: Vec<CEv>,
    /// Every event's args, one after another.
    args: Vec<u8>,
    skipped: FxHashMap<&'static str, u64>,
    by_phase: Box<[u64; 128]>,
    by_cat: FxHashMap<u32, u64>,
}

impl Default for Events {
    fn default() -> Self {
        let mut e = Events {
            strings: Vec::new(),
            string_ids: FxHashMap::default(),
            cat_kinds: Vec::new(),
            threads: Vec::new(),
            thread_ids: FxHashMap::default(),
            evs: Vec::new(),
            args: Vec::new(),
            skipped: FxHashMap::default(),
            by_phase: Box::new([0; 128]),
            by_cat: FxHashMap::default(),
        };
        // id 0 is "": what an event without a name or category has, as in a parsed chunk
        e.string("");
        e
    }
}

fn blank() -> CEv {
    CEv {
        ts: 0,
        dur: -1,
        args_off: 0,
        args_len: 0,
        name: 0,
        cat: 0,
        thread: 0,
        ph: 0,
        bp_enclosing: false,
        flow_in: false,
        flow_out: false,
        id: 0,
        has_id: false,
        device: 0,
        stream: 0,
        correlation: 0,
        has_device: false,
        has_stream: false,
    }
}

impl Events {
    pub fn with_capacity(events: usize, args_bytes: usize) -> Events {
        let mut e = Events::default();
        e.evs.reserve(events);
        e.args.reserve(args_bytes);
        e
    }

    /// The id of string `s` (interned once).
    pub fn string(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.string_ids.get(s) {
            return i;
        }
        let i = self.strings.len() as u32;
        self.strings.push(s.to_string());
        self.string_ids.insert(s.to_string(), i);
        i
    }

    /// The id of thread `(pid, tid)`.
    pub fn thread(&mut self, pid: Key<'static>, tid: Key<'static>) -> u32 {
        let k = (pid, tid);
        if let Some(&i) = self.thread_ids.get(&k) {
            return i;
        }
        let i = self.threads.len() as u32;
        self.threads.push(k.clone());
        self.thread_ids.insert(k, i);
        i
    }

    fn kind_of_cat(&mut self, cat: u32) -> SpanKind {
        let i = cat as usize;
        if i >= self.cat_kinds.len() {
            self.cat_kinds.resize(self.strings.len().max(i + 1), None);
        }
        *self.cat_kinds[i].get_or_insert_with(|| SpanKind::from_chrome_category(&self.strings[i]))
    }

    fn put_args(&mut self, ev: &mut CEv, args: &[u8]) {
        ev.args_off = self.args.len() as u64;
        ev.args_len = args.len() as u32;
        self.args.extend_from_slice(args);
    }

    /// The args being written for the next event: `write` appends them to the buffer.
    fn args_written(&mut self, ev: &mut CEv, write: impl FnOnce(&mut Vec<u8>)) {
        let at = self.args.len();
        write(&mut self.args);
        ev.args_off = at as u64;
        ev.args_len = (self.args.len() - at) as u32;
    }

    fn phase(&mut self, ph: u8, cat: Option<u32>) {
        self.by_phase[ph as usize] += 1;
        if let Some(c) = cat {
            *self.by_cat.entry(c).or_default() += 1;
        }
    }

    /// A complete (`X`) event whose args are written by `write` (a JSON object's text, or
    /// nothing). Its duration must not be negative (such an event is skipped, as in text).
    #[allow(clippy::too_many_arguments)]
    pub fn complete(&mut self, thread: u32, name: u32, cat: u32, ts: i64, dur: i64, write: impl FnOnce(&mut Vec<u8>)) {
        self.phase(b'X', Some(cat));
        if dur < 0 {
            *self.skipped.entry("negative duration").or_default() += 1;
            return;
        }
        let mut ev = CEv { ts, dur, name, cat, thread, ph: b'X', ..blank() };
        self.args_written(&mut ev, write);
        // the launch and device fields, as the chunk parser reads them
        let kind = (cat != 0).then(|| self.kind_of_cat(cat));
        let args = &self.args[ev.args_off as usize..][..ev.args_len as usize];
        super::event::put_launch_fields(&mut ev, kind, std::str::from_utf8(args).unwrap_or(""));
        self.evs.push(ev);
    }

    /// A thread-scoped instant (`i`).
    pub fn instant(&mut self, thread: u32, name: u32, cat: u32, ts: i64, args: &[u8]) {
        self.phase(b'i', Some(cat));
        let mut ev = CEv { ts, name, cat, thread, ph: b'i', ..blank() };
        self.put_args(&mut ev, args);
        self.evs.push(ev);
    }

    /// A flow step (`s` start, `f` finish binding to the enclosing slice) with id `id`.
    pub fn flow(&mut self, ph: u8, thread: u32, name: u32, ts: i64, id: u64) {
        self.phase(ph, Some(name));
        let ev = CEv { ts, name, cat: name, thread, ph, id, has_id: true, bp_enclosing: ph == b'f', ..blank() };
        self.evs.push(ev);
    }

    /// A counter (`C`) of the thread's process: `series` = `value`.
    pub fn counter(&mut self, thread: u32, name: u32, ts: i64, series: &str, value: f64) {
        self.phase(b'C', None);
        let mut ev = CEv { ts, name, thread, ph: b'C', ..blank() };
        self.args_written(&mut ev, |out| {
            use std::io::Write;
            let _ = write!(out, "{{{}:{value}}}", serde_json::to_string(series).unwrap_or_default());
        });
        self.evs.push(ev);
    }

    /// A metadata (`M`) event such as `process_name` / `thread_name` with `{"name": label}`.
    pub fn metadata(&mut self, thread: u32, what: &str, label: &str) {
        self.phase(b'M', None);
        let name = self.string(what);
        let mut ev = CEv { name, thread, ph: b'M', ..blank() };
        self.args_written(&mut ev, |out| {
            out.extend_from_slice(b"{\"name\":");
            out.extend_from_slice(serde_json::to_string(label).unwrap_or_default().as_bytes());
            out.push(b'}');
        });
        self.evs.push(ev);
    }
}

/// Builds the store's lanes, spans, flows and counters from `events`, as the chrome
/// importer does from a file holding them; `base_time_ns` is the trace's wall-clock base.
pub fn import_events(
    path: &Path,
    events: Events,
    base_time_ns: Option<i64>,
    b: &mut StoreBuilder,
    progress: &Progress,
) -> Result<TraceMeta, ImportError> {
    let mut meta = TraceMeta::new(SourceFormat::Chrome, path.display().to_string());
    meta.base_time_ns = base_time_ns;
    let Events { strings, threads, evs, args, skipped, by_phase, by_cat, .. } = events;
    b.reserve_spans(evs.len());
    let chunk = ChunkOut {
        start: 0,
        stop: 0,
        array_end: None,
        eof: false,
        error: None,
        truncated: false,
        strings: strings.iter().map(|s| Cow::Borrowed(s.as_str())).collect(),
        threads,
        events: evs.len() as u64 + skipped.values().sum::<u64>(),
        evs,
        skipped,
        by_phase,
        by_cat,
    };
    let mut asm = Assembler::new(&args, false);
    asm.add_chunk(&chunk, b).map_err(|e| ImportError::io(path, e))?;
    progress.add_events(chunk.events);
    asm.finish(b, &mut meta).map_err(|e| ImportError::io(path, e))?;
    if asm.kineto || !meta.devices.is_empty() {
        meta.format = SourceFormat::Kineto;
    }
    Ok(meta)
}
