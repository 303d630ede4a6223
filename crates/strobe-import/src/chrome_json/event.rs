//! One trace event as serde reads it, borrowing from the input, and the compact form the
//! chunk parsers hand to the assembler.

use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;

/// Fields of a trace event that Strobe reads. Unknown fields are skipped by serde; values of
/// an unexpected type are kept raw and judged later, so one odd event never fails a file.
#[derive(Deserialize)]
pub struct RawEvent<'a> {
    #[serde(borrow, default)]
    pub ph: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub name: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub cat: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub ts: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub dur: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub pid: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub tid: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub id2: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub bp: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub args: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub bind_id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub flow_in: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub flow_out: Option<&'a RawValue>,
}

/// The few Kineto args the model needs, read from a GPU or runtime event's args.
#[derive(Deserialize, Default)]
pub struct KinetoArgs<'a> {
    #[serde(borrow, default)]
    pub device: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub stream: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub correlation: Option<&'a RawValue>,
}

/// A JSON string's contents (unescaped only when it has escapes), or None if not a string.
pub fn raw_str<'a>(v: &'a RawValue) -> Option<Cow<'a, str>> {
    let t = v.get();
    if !t.starts_with('"') {
        return None;
    }
    let inner = &t[1..t.len() - 1];
    if !inner.contains('\\') {
        return Some(Cow::Borrowed(inner));
    }
    serde_json::from_str::<String>(t).ok().map(Cow::Owned)
}

/// An integer from a JSON number (or a numeric string, which some producers write).
pub fn raw_int(v: &RawValue) -> Option<i64> {
    let t = v.get().as_bytes();
    let t = if t.first() == Some(&b'"') && t.len() >= 2 { &t[1..t.len() - 1] } else { t };
    crate::time::decimal_to_ns(t, 1)
}

/// A pid or tid: integer, or string kept as written.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Key<'a> {
    Num(i64),
    Str(Cow<'a, str>),
}

pub fn raw_key<'a>(v: Option<&'a RawValue>) -> Option<Key<'a>> {
    let v = v?;
    if let Some(s) = raw_str(v) {
        return Some(Key::Str(s));
    }
    crate::time::decimal_to_ns(v.get().as_bytes(), 1).map(Key::Num)
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
pub fn id_value(v: &RawValue) -> u64 {
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
        None => xxhash_id(v.get().as_bytes()),
    }
}

fn xxhash_id(b: &[u8]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = rustc_hash::FxHasher::default();
    b.hash(&mut h);
    h.finish() | (1u64 << 63)
}
