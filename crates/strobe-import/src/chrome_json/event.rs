//! One trace event as serde reads it, borrowing from the input, and the compact form the
//! chunk parsers hand to the assembler.

use std::borrow::Cow;

/// Fields of a trace event that Strobe reads, as the raw JSON text of each value. Values of
/// an unexpected type are kept raw and judged later, so one odd event never fails a file.
#[derive(Default)]
pub struct RawEvent<'a> {
    pub ph: Option<&'a str>,
    pub name: Option<&'a str>,
    pub cat: Option<&'a str>,
    pub ts: Option<&'a str>,
    pub dur: Option<&'a str>,
    pub pid: Option<&'a str>,
    pub tid: Option<&'a str>,
    pub id: Option<&'a str>,
    pub id2: Option<&'a str>,
    pub bp: Option<&'a str>,
    pub args: Option<&'a str>,
    pub bind_id: Option<&'a str>,
    pub flow_in: Option<&'a str>,
    pub flow_out: Option<&'a str>,
}

impl<'a> RawEvent<'a> {
    /// Scans the event object at `p`; returns it and the position after it. `KinetoArgs::scan`
    /// reads the same way, written out apart: one generic reader for both cost the ingest 4–5 %.
    pub fn scan(text: &'a str, p: usize) -> Result<(RawEvent<'a>, usize), super::scan::ScanError> {
        let mut ev = RawEvent::default();
        if let Some(end) = super::object_blocks::scan_object(text, p, &mut |k, v| ev.set(k, v)) {
            return Ok((ev, end));
        }
        // declined: the exact scan, from the start
        let mut ev = RawEvent::default();
        let end = super::scan::scan_object(text, p, |k, v| ev.set(k, v))?;
        Ok((ev, end))
    }

    #[inline(always)]
    fn set(&mut self, k: &str, v: &'a str) {
        match k {
            "ph" => self.ph = Some(v),
            "name" => self.name = Some(v),
            "cat" => self.cat = Some(v),
            "ts" => self.ts = Some(v),
            "dur" => self.dur = Some(v),
            "pid" => self.pid = Some(v),
            "tid" => self.tid = Some(v),
            "id" => self.id = Some(v),
            "id2" => self.id2 = Some(v),
            "bp" => self.bp = Some(v),
            "args" => self.args = Some(v),
            "bind_id" => self.bind_id = Some(v),
            "flow_in" => self.flow_in = Some(v),
            "flow_out" => self.flow_out = Some(v),
            _ => {}
        }
    }
}

/// The few Kineto args the model needs, read from a GPU or runtime event's args.
#[derive(Default)]
pub struct KinetoArgs<'a> {
    pub device: Option<&'a str>,
    pub stream: Option<&'a str>,
    pub correlation: Option<&'a str>,
}

impl<'a> KinetoArgs<'a> {
    pub fn scan(args: &'a str) -> KinetoArgs<'a> {
        let mut k = KinetoArgs::default();
        if super::object_blocks::scan_object(args, 0, &mut |key, v| k.set(key, v)).is_some() {
            return k;
        }
        let mut k = KinetoArgs::default();
        let _ = super::scan::scan_object(args, 0, |key, v| k.set(key, v));
        k
    }

    #[inline(always)]
    fn set(&mut self, key: &str, v: &'a str) {
        match key {
            "device" => self.device = Some(v),
            "stream" => self.stream = Some(v),
            "correlation" => self.correlation = Some(v),
            // XLA's name for it (a JAX profile's launches and the device work they launched)
            "correlation_id" if self.correlation.is_none() => self.correlation = Some(v),
            _ => {}
        }
    }
}

/// The launch fields of a complete (`X`) event from its args, whatever path read it: GPU work
/// and runtime calls (`kind`) carry `device`, `stream` and `correlation`; XLA's Chrome JSON (a
/// JAX profile) has no categories (`kind` None), and its launches and device work carry a
/// `correlation_id` instead.
pub fn put_launch_fields(ev: &mut CEv, kind: Option<strobe_model::SpanKind>, args: &str) {
    use strobe_model::SpanKind::*;
    match kind {
        Some(Kernel | Memcpy | Memset | GpuAnnotation | CudaRuntime | CudaDriver) if !args.is_empty() => {
            let k = KinetoArgs::scan(args);
            if let Some(d) = k.device.and_then(raw_int) {
                ev.device = d;
                ev.has_device = true;
            }
            if let Some(s) = k.stream.and_then(raw_int) {
                ev.stream = s;
                ev.has_stream = true;
            }
            ev.correlation = k.correlation.and_then(raw_int).unwrap_or(0);
        }
        None if memchr::memmem::find(args.as_bytes(), b"\"correlation_id\"").is_some() => {
            ev.correlation = KinetoArgs::scan(args).correlation.and_then(raw_int).unwrap_or(0);
        }
        _ => {}
    }
}

/// A JSON string's contents (unescaped only when it has escapes), or None if not a string.
pub fn raw_str(t: &str) -> Option<Cow<'_, str>> {
    if !t.starts_with('"') || t.len() < 2 {
        return None;
    }
    let inner = &t[1..t.len() - 1];
    if !inner.contains('\\') {
        return Some(Cow::Borrowed(inner));
    }
    serde_json::from_str::<String>(t).ok().map(Cow::Owned)
}

/// An integer from a JSON number (or a numeric string, which some producers write).
pub fn raw_int(v: &str) -> Option<i64> {
    let t = v.as_bytes();
    let t = if t.first() == Some(&b'"') && t.len() >= 2 { &t[1..t.len() - 1] } else { t };
    crate::time::decimal_to_ns(t, 1)
}

/// A pid or tid: integer, or string kept as written.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Key<'a> {
    Num(i64),
    Str(Cow<'a, str>),
}

pub fn raw_key(v: Option<&str>) -> Option<Key<'_>> {
    let v = v?;
    if let Some(s) = raw_str(v) {
        return Some(Key::Str(s));
    }
    crate::time::decimal_to_ns(v.as_bytes(), 1).map(Key::Num)
}

impl Key<'_> {
    pub fn to_id(&self) -> strobe_model::IdKey {
        match self {
            Key::Num(n) => strobe_model::IdKey::Num(*n),
            Key::Str(s) => strobe_model::IdKey::Str(s.to_string()),
        }
    }
}

/// Compact parsed event. Strings are chunk-local ids; args point into the input buffer.
#[derive(Clone, Copy, Debug)]
pub struct CEv {
    pub ts: i64,
    /// Duration for X events; -1 when absent.
    pub dur: i64,
    pub args_off: u64,
    pub args_len: u32,
    pub name: u32,
    pub cat: u32,
    /// Chunk-local (pid, tid) id.
    pub thread: u32,
    pub ph: u8,
    /// Flow/async binding: `bp == "e"`.
    pub bp_enclosing: bool,
    pub flow_in: bool,
    pub flow_out: bool,
    /// Flow/async id (hash of its text when not an integer), or bind_id for v2 flows.
    pub id: u64,
    pub has_id: bool,
    pub device: i64,
    pub stream: i64,
    pub correlation: i64,
    pub has_device: bool,
    pub has_stream: bool,
}

/// Flow and async ids: the integer when it is one, else a hash of the text.
pub fn id_value(v: &str) -> u64 {
    if let Some(n) = raw_int(v) {
        return n as u64;
    }
    match raw_str(v) {
        Some(s) => {
            let s = s.trim();
            if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
                if let Ok(n) = u64::from_str_radix(h, 16) {
                    return n;
                }
            }
            if let Ok(n) = s.parse::<u64>() {
                return n;
            }
            xxhash_id(s.as_bytes())
        }
        None => xxhash_id(v.as_bytes()),
    }
}

fn xxhash_id(b: &[u8]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = rustc_hash::FxHasher::default();
    b.hash(&mut h);
    h.finish() | (1u64 << 63)
}
