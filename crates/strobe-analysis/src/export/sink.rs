//! Row writers: CSV through the `csv` crate, JSON Lines written by hand (keys pre-rendered,
//! strings escaped by serde_json, args copied as the source's JSON text).

use std::io::Write;
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
    Csv(csv::Writer<W>, Vec<u8>),
    /// Rows accumulate in `buf`, which goes to `w` whenever it passes `BUF`.
    Jsonl { w: W, keys: Vec<Vec<u8>>, buf: Vec<u8> },
}

impl<W: Write> Sink<W> {
    /// A sink that starts with the CSV header row (JSON Lines has none).
    pub fn new(out: W, format: Format, columns: &[&str]) -> std::io::Result<Sink<W>> {
        let mut s = Sink::body(out, format, columns);
        if let Sink::Csv(w, _) = &mut s {
            w.write_record(columns).map_err(csv_err)?;
        }
        Ok(s)
    }

    /// A sink for rows only (a piece of a file formatted apart).
    pub fn body(out: W, format: Format, columns: &[&str]) -> Sink<W> {
        match format {
            Format::Csv => Sink::Csv(csv::WriterBuilder::new().buffer_capacity(BUF).has_headers(false).from_writer(out), Vec::new()),
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
                Sink::Jsonl { w: out, keys, buf: Vec::with_capacity(BUF + 4096) }
            }
        }
    }

    #[inline]
    pub fn row(&mut self, cells: &[Cell<'_>]) -> std::io::Result<()> {
        match self {
            Sink::Csv(w, scratch) => {
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
                        Cell::Json(s) => match memchr::memchr2(b'\n', b'\r', s.as_bytes()) {
                            None => w.write_field(s),
                            Some(at) => {
                                scratch.clear();
                                one_line(scratch, s.as_bytes(), at);
                                w.write_field(&scratch[..])
                            }
                        },
                    };
                    r.map_err(csv_err)?;
                }
                w.write_record(None::<&[u8]>).map_err(csv_err)
            }
            Sink::Jsonl { w, keys, buf: scratch } => {
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
                        Cell::Str(s) => json_str(scratch, s),
                        Cell::Id(IdKey::Str(s)) => json_str(scratch, s),
                        Cell::Id(IdKey::Num(v)) => scratch.extend_from_slice(ib.format(*v).as_bytes()),
                        Cell::Json(s) => match memchr::memchr2(b'\n', b'\r', s.as_bytes()) {
                            None => scratch.extend_from_slice(s.as_bytes()),
                            Some(at) => one_line(scratch, s.as_bytes(), at),
                        },
                    }
                }
                scratch.extend_from_slice(b"}\n");
                if scratch.len() >= BUF {
                    w.write_all(scratch)?;
                    scratch.clear();
                }
                Ok(())
            }
        }
    }

    /// Writes out what is buffered and hands the writer back.
    pub fn into_inner(self) -> std::io::Result<W> {
        match self {
            Sink::Csv(w, _) => w.into_inner().map_err(|e| std::io::Error::new(e.error().kind(), e.error().to_string())),
            Sink::Jsonl { mut w, buf, .. } => {
                w.write_all(&buf)?;
                w.flush()?;
                Ok(w)
            }
        }
    }
}

fn csv_err(e: csv::Error) -> std::io::Error {
    match e.into_kind() {
        csv::ErrorKind::Io(e) => e,
        k => std::io::Error::other(format!("{k:?}")),
    }
}

/// Appends JSON text on one line: raw line breaks can only be whitespace between tokens
/// (inside strings they must be escaped), so they become spaces; everything else is copied
/// byte for byte, so numbers keep every digit the source wrote. `at` is the first break.
fn one_line(out: &mut Vec<u8>, s: &[u8], mut at: usize) {
    let mut from = 0;
    loop {
        out.extend_from_slice(&s[from..at]);
        out.push(b' ');
        from = at + 1;
        match memchr::memchr2(b'\n', b'\r', &s[from..]) {
            Some(k) => at = from + k,
            None => break,
        }
    }
    out.extend_from_slice(&s[from..]);
}

/// A JSON string literal (quotes and escapes as serde_json writes them).
#[inline]
fn json_str(out: &mut Vec<u8>, s: &str) {
    let b = s.as_bytes();
    // no short circuit: this form vectorises
    let plain = !b.iter().fold(false, |bad, &c| bad | (c < 0x20) | (c == b'"') | (c == b'\\'));
    if plain {
        out.push(b'"');
        out.extend_from_slice(b);
        out.push(b'"');
    } else {
        let _ = serde_json::to_writer(out, s);
    }
}

/// Args as exported: the source's JSON object text; `{}` when the event had none (or
/// `null`); any other JSON value is wrapped as `{"value": …}` so every row holds an object.
pub fn opt_str(s: &Option<String>) -> Cell<'_> {
    s.as_deref().map(Cell::Str).unwrap_or(Cell::Null)
}

pub fn opt_id(s: Option<&IdKey>) -> Cell<'_> {
    s.map(Cell::Id).unwrap_or(Cell::Null)
}

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
