//! Row writers: CSV through the `csv` crate, JSON Lines written by hand (keys pre-rendered,
//! strings escaped by serde_json, args copied as the source's JSON text).

use std::io::{BufWriter, Write};
use strobe_model::IdKey;

use super::Format;

/// One field of a row.
#[derive(Clone, Copy, Debug)]
pub enum Cell<'a> {
    /// Empty in CSV, `null` in JSON.
    Null,
    Int(i64),
    UInt(u64),
    Float(f64),
    Str(&'a str),
    /// A pid or tid: a number when the source wrote a number, else the string as written.
    Id(&'a IdKey),
    /// JSON text (a span's args object), written as is (line breaks removed).
    Json(&'a str),
}

const BUF: usize = 1 << 18;

pub enum Sink<W: Write> {
    Csv(csv::Writer<W>),
    Jsonl { w: BufWriter<W>, keys: Vec<Vec<u8>>, scratch: Vec<u8> },
}

impl<W: Write> Sink<W> {
    pub fn new(out: W, format: Format, columns: &[&str]) -> std::io::Result<Sink<W>> {
        match format {
            Format::Csv => {
                let mut w = csv::WriterBuilder::new().buffer_capacity(BUF).has_headers(false).from_writer(out);
                w.write_record(columns).map_err(csv_err)?;
                Ok(Sink::Csv(w))
            }
            Format::Jsonl => {
                let keys = columns
                    .iter()
                    .enumerate()
                    .map(|(i, c)| {
                        let mut k = Vec::new();
                        k.push(if i == 0 { b'{' } else { b',' });
                        serde_json::to_writer(&mut k, c).expect("writing to a Vec cannot fail");
                        k.push(b':');
                        k
                    })
                    .collect();
                Ok(Sink::Jsonl { w: BufWriter::with_capacity(BUF, out), keys, scratch: Vec::new() })
            }
        }
    }

    #[inline]
    pub fn row(&mut self, cells: &[Cell<'_>]) -> std::io::Result<()> {
        match self {
            Sink::Csv(w) => {
                let mut ib = itoa::Buffer::new();
                let mut fb = ryu::Buffer::new();
                for c in cells {
                    let r = match *c {
                        Cell::Null => w.write_field(b""),
                        Cell::Int(v) => w.write_field(ib.format(v)),
                        Cell::UInt(v) => w.write_field(ib.format(v)),
                        Cell::Float(v) => w.write_field(if v.is_finite() { fb.format_finite(v) } else { "" }),
                        Cell::Str(s) => w.write_field(s),
                        Cell::Id(IdKey::Num(v)) => w.write_field(ib.format(*v)),
                        Cell::Id(IdKey::Str(s)) => w.write_field(s),
                        Cell::Json(s) => {
                            if has_line_break(s) {
                                w.write_field(one_line(s))
                            } else {
                                w.write_field(s)
                            }
                        }
                    };
                    r.map_err(csv_err)?;
                }
                w.write_record(None::<&[u8]>).map_err(csv_err)
            }
            Sink::Jsonl { w, keys, scratch } => {
                scratch.clear();
                let mut ib = itoa::Buffer::new();
                let mut fb = ryu::Buffer::new();
                for (c, k) in cells.iter().zip(keys.iter()) {
                    scratch.extend_from_slice(k);
                    match *c {
                        Cell::Null => scratch.extend_from_slice(b"null"),
                        Cell::Int(v) => scratch.extend_from_slice(ib.format(v).as_bytes()),
                        Cell::UInt(v) => scratch.extend_from_slice(ib.format(v).as_bytes()),
                        Cell::Float(v) if v.is_finite() => scratch.extend_from_slice(fb.format_finite(v).as_bytes()),
                        Cell::Float(_) => scratch.extend_from_slice(b"null"),
                        Cell::Str(s) | Cell::Id(IdKey::Str(s)) => json_str(scratch, s),
                        Cell::Id(IdKey::Num(v)) => scratch.extend_from_slice(ib.format(*v).as_bytes()),
                        Cell::Json(s) => {
                            if has_line_break(s) {
                                scratch.extend_from_slice(one_line(s).as_bytes());
                            } else {
                                scratch.extend_from_slice(s.as_bytes());
                            }
                        }
                    }
                }
                scratch.extend_from_slice(b"}\n");
                w.write_all(scratch)
            }
        }
    }

    pub fn finish(self) -> std::io::Result<()> {
        match self {
            Sink::Csv(mut w) => w.flush(),
            Sink::Jsonl { mut w, .. } => w.flush(),
        }
    }
}

fn csv_err(e: csv::Error) -> std::io::Error {
    match e.into_kind() {
        csv::ErrorKind::Io(e) => e,
        k => std::io::Error::other(format!("{k:?}")),
    }
}

#[inline]
fn has_line_break(s: &str) -> bool {
    memchr::memchr2(b'\n', b'\r', s.as_bytes()).is_some()
}

/// JSON text on one line: raw line breaks can only be whitespace between tokens (inside
/// strings they must be escaped), so they become spaces.
fn one_line(s: &str) -> String {
    s.replace(['\n', '\r'], " ")
}

/// A JSON string literal (quotes and escapes as serde_json writes them).
#[inline]
fn json_str(out: &mut Vec<u8>, s: &str) {
    let b = s.as_bytes();
    if b.iter().all(|&c| c >= 0x20 && c != b'"' && c != b'\\') {
        out.push(b'"');
        out.extend_from_slice(b);
        out.push(b'"');
    } else {
        let _ = serde_json::ser::format_escaped_str(out, &mut serde_json::ser::CompactFormatter, s);
    }
}

/// Args as exported: the source's JSON object text; `{}` when the event had none (or
/// `null`); any other JSON value is wrapped as `{"value": …}` so every row holds an object.
pub fn args_json<'a>(raw: &'a str, scratch: &'a mut String) -> &'a str {
    let t = raw.trim_start();
    if t.starts_with('{') {
        return raw;
    }
    if t.is_empty() || t == "null" {
        return "{}";
    }
    scratch.clear();
    scratch.push_str("{\"value\":");
    scratch.push_str(raw);
    scratch.push('}');
    scratch
}
