//! Row writers for CSV and JSON Lines (keys pre-rendered, strings escaped as serde_json
//! escapes them, args copied as the source's JSON text).

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

/// Formats rows into a buffer that goes to the writer whenever it passes `BUF`.
///
/// CSV is written here rather than through the `csv` crate: its byte-at-a-time quoting was
/// half the cost of a spans export, and the rules are short (RFC 4180: a field is quoted when
/// it holds a comma, a quote or a line break, quotes inside are doubled; records end in
/// `\n`). The tests read every export back with the `csv` crate's reader.
pub struct Sink<W: Write> {
    w: W,
    format: Format,
    /// JSON Lines: `{"col":` / `,"col":` per column.
    keys: Vec<Vec<u8>>,
    buf: Vec<u8>,
}

impl<W: Write> Sink<W> {
    /// A sink that starts with the CSV header row (JSON Lines has none).
    pub fn new(out: W, format: Format, columns: &[&str]) -> std::io::Result<Sink<W>> {
        let mut s = Sink::body(out, format, columns);
        if format == Format::Csv {
            for (i, c) in columns.iter().enumerate() {
                if i > 0 {
                    s.buf.push(b',');
                }
                csv_field(&mut s.buf, c.as_bytes());
            }
            s.buf.push(b'\n');
        }
        Ok(s)
    }

    /// A sink for rows only (a piece of a file formatted apart).
    pub fn body(out: W, format: Format, columns: &[&str]) -> Sink<W> {
        let keys = columns
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let mut k = Vec::new();
                k.push(if i == 0 { b'{' } else { b',' });
                json_str(&mut k, c);
                k.push(b':');
                k
            })
            .collect();
        Sink { w: out, format, keys, buf: Vec::with_capacity(BUF + 4096) }
    }

    #[inline]
    pub fn row(&mut self, cells: &[Cell<'_>]) -> std::io::Result<()> {
        let mut ib = itoa::Buffer::new();
        let mut fb = ryu::Buffer::new();
        let out = &mut self.buf;
        match self.format {
            Format::Csv => {
                for (n, c) in cells.iter().enumerate() {
                    if n > 0 {
                        out.push(b',');
                    }
                    match *c {
                        Cell::Null => {}
                        Cell::Int(v) => out.extend_from_slice(ib.format(v).as_bytes()),
                        Cell::UInt(v) => out.extend_from_slice(ib.format(v).as_bytes()),
                        Cell::Float(v) if v.is_finite() => out.extend_from_slice(fb.format_finite(v).as_bytes()),
                        Cell::Float(_) => {}
                        Cell::Str(s) => csv_field(out, s.as_bytes()),
                        Cell::Id(IdKey::Str(s)) => csv_field(out, s.as_bytes()),
                        Cell::Id(IdKey::Num(v)) => out.extend_from_slice(ib.format(*v).as_bytes()),
                        Cell::Json(s) => match memchr::memchr2(b'\n', b'\r', s.as_bytes()) {
                            None => csv_field(out, s.as_bytes()),
                            Some(at) => {
                                let mut one = Vec::with_capacity(s.len());
                                one_line(&mut one, s.as_bytes(), at);
                                csv_field(out, &one);
                            }
                        },
                    }
                }
                out.push(b'\n');
            }
            Format::Jsonl => {
                for (c, k) in cells.iter().zip(self.keys.iter()) {
                    out.extend_from_slice(k);
                    match *c {
                        Cell::Null => out.extend_from_slice(b"null"),
                        Cell::Int(v) => out.extend_from_slice(ib.format(v).as_bytes()),
                        Cell::UInt(v) => out.extend_from_slice(ib.format(v).as_bytes()),
                        Cell::Float(v) if v.is_finite() => out.extend_from_slice(fb.format_finite(v).as_bytes()),
                        Cell::Float(_) => out.extend_from_slice(b"null"),
                        Cell::Str(s) => json_str(out, s),
                        Cell::Id(IdKey::Str(s)) => json_str(out, s),
                        Cell::Id(IdKey::Num(v)) => out.extend_from_slice(ib.format(*v).as_bytes()),
                        Cell::Json(s) => match memchr::memchr2(b'\n', b'\r', s.as_bytes()) {
                            None => out.extend_from_slice(s.as_bytes()),
                            Some(at) => one_line(out, s.as_bytes(), at),
                        },
                    }
                }
                out.extend_from_slice(b"}\n");
            }
        }
        if self.buf.len() >= BUF {
            self.w.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }

    /// Writes out what is buffered and hands the writer back.
    pub fn into_inner(mut self) -> std::io::Result<W> {
        self.w.write_all(&self.buf)?;
        self.w.flush()?;
        Ok(self.w)
    }
}

/// One CSV field, quoted only when it must be.
#[inline]
fn csv_field(out: &mut Vec<u8>, b: &[u8]) {
    // no short circuit: this form vectorises
    let special = b.iter().fold(false, |x, &c| x | (c == b',') | (c == b'"') | (c == b'\n') | (c == b'\r'));
    if !special {
        out.extend_from_slice(b);
        return;
    }
    out.push(b'"');
    let mut from = 0;
    for at in memchr::memchr_iter(b'"', b) {
        out.extend_from_slice(&b[from..=at]);
        out.push(b'"');
        from = at + 1;
    }
    out.extend_from_slice(&b[from..]);
    out.push(b'"');
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
