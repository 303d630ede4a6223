//! Parallel parse of the event array. The array is cut at guessed event boundaries (a `{`
//! after `},`); each chunk parses events until it passes its end, on its own rayon task. A
//! guess inside a string is caught because the previous chunk then stops somewhere else, and
//! that chunk is parsed again from the true boundary — so the result is always exact.

use super::event::{id_value, raw_key, raw_str, CEv, Key, RawEvent};
use rustc_hash::FxHashMap;
use std::borrow::Cow;
use strobe_model::SpanKind;

/// What one chunk found.
pub struct ChunkOut<'a> {
    pub start: usize,
    /// Where the next event starts (or where parsing stopped).
    pub stop: usize,
    /// Position just past the array's closing `]`, if this chunk reached it.
    pub array_end: Option<usize>,
    /// End of input reached without `]` (allowed by the format).
    pub eof: bool,
    pub error: Option<(usize, String)>,
    /// The error is the input ending inside an event (a cut file), not bad JSON.
    pub truncated: bool,
    pub strings: Vec<Cow<'a, str>>,
    pub threads: Vec<(Key<'a>, Key<'a>)>,
    pub evs: Vec<CEv>,
    /// (reason, count) of events skipped here.
    pub skipped: FxHashMap<&'static str, u64>,
    /// Events per phase byte (`?` counts phases that are not one ASCII byte).
    pub by_phase: Box<[u64; 128]>,
    pub by_cat: FxHashMap<u32, u64>,
    pub events: u64,
}

struct Local<'a> {
    strings: Vec<Cow<'a, str>>,
    string_ids: FxHashMap<Cow<'a, str>, u32>,
    threads: Vec<(Key<'a>, Key<'a>)>,
    thread_ids: FxHashMap<(Key<'a>, Key<'a>), u32>,
    /// The span kind of each string as a category, decided once per string.
    cat_kinds: Vec<Option<SpanKind>>,
}

impl<'a> Local<'a> {
    fn kind_of_cat(&mut self, cat: u32) -> SpanKind {
        let i = cat as usize;
        if i >= self.cat_kinds.len() {
            self.cat_kinds.resize(self.strings.len().max(i + 1), None);
        }
        *self.cat_kinds[i].get_or_insert_with(|| SpanKind::from_chrome_category(&self.strings[i]))
    }
    fn s(&mut self, v: Cow<'a, str>) -> u32 {
        if let Some(&i) = self.string_ids.get(&v) {
            return i;
        }
        let i = self.strings.len() as u32;
        self.strings.push(v.clone());
        self.string_ids.insert(v, i);
        i
    }
    fn t(&mut self, k: (Key<'a>, Key<'a>)) -> u32 {
        if let Some(&i) = self.thread_ids.get(&k) {
            return i;
        }
        let i = self.threads.len() as u32;
        self.threads.push(k.clone());
        self.thread_ids.insert(k, i);
        i
    }
}

/// Guesses event starts near each multiple of `chunk` within `buf[from..]`; reads no byte
/// below `from` (a growing text may have given those pages back, see `text`).
pub fn guess_boundaries(buf: &[u8], from: usize, chunk: usize) -> Vec<usize> {
    let mut out = vec![from];
    let mut pos = from + chunk;
    while pos < buf.len() {
        match find_event_start(buf, from, pos) {
            Some(p) => {
                if p > *out.last().unwrap() {
                    out.push(p);
                }
                pos = p + chunk;
            }
            None => break,
        }
    }
    out
}

/// Next `{` at or after `pos` whose previous non-space bytes, at or after `floor`, are `}` `,`
/// (a `{` after nothing but whitespace back to `floor` is not taken: a guess may miss a
/// boundary, and the parse then goes on past it).
fn find_event_start(buf: &[u8], floor: usize, mut pos: usize) -> Option<usize> {
    while let Some(off) = memchr::memchr(b'{', &buf[pos..]) {
        let p = pos + off;
        let mut q = p;
        let prev = |q: &mut usize| -> Option<u8> {
            while *q > floor {
                *q -= 1;
                let c = buf[*q];
                if !c.is_ascii_whitespace() {
                    return Some(c);
                }
            }
            None
        };
        if prev(&mut q) == Some(b',') && prev(&mut q) == Some(b'}') {
            return Some(p);
        }
        pos = p + 1;
    }
    None
}

/// Event buffers of assembled chunks, for the next chunks to fill (see `parse_events`).
#[derive(Default)]
pub struct SpareEvents(std::sync::Mutex<Vec<Vec<CEv>>>);

impl SpareEvents {
    /// An empty buffer, with the room a previous chunk left in it where there is one.
    pub fn take(&self) -> Vec<CEv> {
        self.0.lock().ok().and_then(|mut v| v.pop()).unwrap_or_default()
    }

    /// `evs` is assembled: its room goes to a later chunk (a few waves' worth are kept).
    pub fn give(&self, mut evs: Vec<CEv>) {
        evs.clear();
        if let Ok(mut v) = self.0.lock() {
            if v.len() < 64 {
                v.push(evs);
            }
        }
    }
}

/// Parses events from `start` until an event would start at or after `end`. `text` is the
/// whole input, validated as UTF-8 once up front, so raw values borrow without re-checks.
pub fn parse_chunk<'a>(text: &'a str, start: usize, end: usize, unit_ns: i64) -> ChunkOut<'a> {
    parse_chunk_into(text, start, end, unit_ns, Vec::new())
}

/// `parse_chunk` into `evs` (empty; its room reused).
pub fn parse_chunk_into<'a>(text: &'a str, start: usize, end: usize, unit_ns: i64, mut evs: Vec<CEv>) -> ChunkOut<'a> {
    let buf = text.as_bytes();
    evs.reserve(end.saturating_sub(start) / 200);
    let mut local = Local {
        strings: Vec::new(),
        string_ids: FxHashMap::default(),
        threads: Vec::new(),
        thread_ids: FxHashMap::default(),
        cat_kinds: Vec::new(),
    };
    let empty = local.s(Cow::Borrowed(""));
    debug_assert_eq!(empty, 0);
    let mut out = ChunkOut {
        start,
        stop: start,
        array_end: None,
        eof: false,
        error: None,
        truncated: false,
        strings: Vec::new(),
        threads: Vec::new(),
        evs,
        skipped: FxHashMap::default(),
        by_phase: Box::new([0; 128]),
        by_cat: FxHashMap::default(),
        events: 0,
    };
    let mut pos = start;
    loop {
        // skip separators
        while pos < buf.len() && (buf[pos].is_ascii_whitespace() || buf[pos] == b',') {
            pos += 1;
        }
        if pos >= buf.len() {
            out.eof = true;
            break;
        }
        if buf[pos] == b']' {
            out.array_end = Some(pos + 1);
            break;
        }
        if pos >= end {
            break;
        }
        let (ev, next) = match RawEvent::scan(text, pos) {
            Ok(x) => x,
            Err(e) => {
                out.truncated = e.eof;
                let what = if e.eof {
                    "the file ends inside an event".to_string()
                } else if buf[pos] != b'{' {
                    format!("expected an event object, found {:?}", snippet(&buf[pos..]))
                } else {
                    format!("bad event: {} at byte {}", e.what, e.at)
                };
                out.error = Some((pos, what));
                break;
            }
        };
        out.events += 1;
        convert(buf, ev, unit_ns, &mut local, &mut out);
        pos = next;
    }
    out.stop = pos;
    out.strings = local.strings;
    out.threads = local.threads;
    out
}

fn snippet(b: &[u8]) -> String {
    String::from_utf8_lossy(&b[..b.len().min(24)]).into_owned()
}

fn convert<'a>(buf: &'a [u8], ev: RawEvent<'a>, unit_ns: i64, local: &mut Local<'a>, out: &mut ChunkOut<'a>) {
    let base = buf.as_ptr() as usize;
    // a phase is one ASCII character: read straight from the text when written plainly
    let ph = match ev.ph.map(str::as_bytes) {
        Some([b'"', c, b'"']) if c.is_ascii() && *c != b'\\' => Some(*c),
        Some(_) => match ev.ph.and_then(raw_str).as_deref().map(str::as_bytes) {
            Some([c]) if c.is_ascii() => Some(*c),
            _ => None,
        },
        None => None,
    };
    let Some(ph) = ph else {
        *out.skipped.entry("no or unknown phase").or_default() += 1;
        out.by_phase[b'?' as usize] += 1;
        return;
    };
    out.by_phase[ph as usize] += 1;
    let cat = ev.cat.and_then(raw_str).map(|c| local.s(c)).unwrap_or(0);
    if ev.cat.is_some() {
        *out.by_cat.entry(cat).or_default() += 1;
    }
    let name = ev.name.and_then(raw_str).map(|c| local.s(c)).unwrap_or(0);
    let pid = raw_key(ev.pid).unwrap_or(Key::Num(0));
    // a missing tid means the process's main thread, whose tid equals the pid on Linux
    let tid = raw_key(ev.tid).unwrap_or_else(|| pid.clone());
    let needs_ts = ph != b'M';
    let ts = match ev.ts {
        Some(t) => crate::time::decimal_to_ns(t.as_bytes(), unit_ns),
        None => None,
    };
    if needs_ts && ts.is_none() {
        *out.skipped.entry(if ev.ts.is_none() { "missing ts" } else { "ts not a finite number" }).or_default() += 1;
        return;
    }
    let mut dur = -1i64;
    if ph == b'X' {
        match ev.dur.map(|d| crate::time::decimal_to_ns(d.as_bytes(), unit_ns)) {
            Some(Some(d)) if d >= 0 => dur = d,
            Some(Some(_)) => {
                *out.skipped.entry("negative duration").or_default() += 1;
                return;
            }
            Some(None) => {
                *out.skipped.entry("dur not a finite number").or_default() += 1;
                return;
            }
            None => {
                *out.skipped.entry("X event without dur").or_default() += 1;
                return;
            }
        }
    }
    let (args_off, args_len) = match ev.args {
        Some(s) => ((s.as_ptr() as usize - base) as u64, s.len() as u32),
        None => (0, 0),
    };
    let mut cev = CEv {
        ts: ts.unwrap_or(0),
        dur,
        args_off,
        args_len,
        name,
        cat,
        thread: local.t((pid, tid)),
        ph,
        bp_enclosing: ev.bp.and_then(raw_str).map(|b| b == "e").unwrap_or(false),
        flow_in: ev.flow_in == Some("true"),
        flow_out: ev.flow_out == Some("true"),
        id: 0,
        has_id: false,
        device: 0,
        stream: 0,
        correlation: 0,
        has_device: false,
        has_stream: false,
    };
    if let Some(id) = ev.bind_id.or(ev.id).or(ev.id2) {
        cev.id = id_value(id);
        cev.has_id = true;
    }
    if ph == b'X' {
        let kind = (cat != 0).then(|| local.kind_of_cat(cat));
        super::event::put_launch_fields(&mut cev, kind, ev.args.unwrap_or(""));
    }
    out.evs.push(cev);
}
