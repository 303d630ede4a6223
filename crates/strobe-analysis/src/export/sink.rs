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
/// `\n`). The tests read every export back with the `csv` crate and write it again with it:
/// the bytes must be the same.
pub struct Sink<W: Write> {
    w: W,
    format: Format,
    /// JSON Lines: `{"col":` / `,"col":` per column.
    keys: Vec<Vec<u8>>,
    buf: Vec<u8>,
    /// Buffer size at which it goes to `w` (never, for a piece).
    flush_at: usize,
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

    /// A sink for rows only.
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
        Sink { w: out, format, keys, buf: Vec::with_capacity(BUF + 4096), flush_at: BUF }
    }

    #[inline]
    pub fn row(&mut self, cells: &[Cell<'_>]) -> std::io::Result<()> {
        self.row_after(&[], 0, cells)
    }

    /// The first `cells.len()` columns of a row, rendered once (a lane's identity columns,
    /// the same for all its rows), for `row_after`.
    pub fn prefix(&mut self, cells: &[Cell<'_>]) -> Vec<u8> {
        let keep = std::mem::take(&mut self.buf);
        self.cells(0, cells);
        std::mem::replace(&mut self.buf, keep)
    }

    /// A row whose columns before `first` are `prefix` (from `prefix`).
    #[inline]
    pub fn row_after(&mut self, prefix: &[u8], first: usize, cells: &[Cell<'_>]) -> std::io::Result<()> {
        self.buf.extend_from_slice(prefix);
        self.cells(first, cells);
        self.buf.extend_from_slice(match self.format {
            Format::Csv => b"\n",
            Format::Jsonl => b"}\n",
        });
        if self.buf.len() >= self.flush_at {
            self.w.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }

    #[inline]
    fn cells(&mut self, first: usize, cells: &[Cell<'_>]) {
        let mut ib = itoa::Buffer::new();
        let mut fb = ryu::Buffer::new();
        let out = &mut self.buf;
        match self.format {
            Format::Csv => {
                for (n, c) in cells.iter().enumerate() {
                    if first + n > 0 {
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
                        Cell::Json(s) => csv_json_field(out, s.as_bytes()),
                    }
                }
            }
            Format::Jsonl => {
                for (c, k) in cells.iter().zip(self.keys[first..].iter()) {
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
                        Cell::Json(s) => one_line(out, s.as_bytes()),
                    }
                }
            }
        }
    }

    /// Writes out what is buffered and hands the writer back.
    pub fn into_inner(mut self) -> std::io::Result<W> {
        self.w.write_all(&self.buf)?;
        self.w.flush()?;
        Ok(self.w)
    }
}

impl Sink<std::io::Sink> {
    /// A sink that keeps its rows in memory (a piece of a file formatted apart).
    pub fn piece(format: Format, columns: &[&str], capacity: usize) -> Sink<std::io::Sink> {
        let mut s = Sink::body(std::io::sink(), format, columns);
        s.buf = Vec::with_capacity(capacity);
        s.flush_at = usize::MAX;
        s
    }

    pub fn into_bytes(self) -> Vec<u8> {
        self.buf
    }
}

const LO: u64 = 0x0101_0101_0101_0101;

/// The high bit of each byte of `x` that equals `c`, and no other bit (exact per byte).
#[inline]
fn eq_mask(x: u64, c: u8) -> u64 {
    const LOW7: u64 = 0x7F7F_7F7F_7F7F_7F7F;
    let y = x ^ (LO * c as u64);
    !(((y & LOW7).wrapping_add(LOW7)) | y | LOW7)
}

/// A JSON object as one CSV field in one pass: quoted (unless it holds no quote, comma or
/// line break, like `{}`), quotes doubled, raw line breaks (whitespace) made spaces. Kineto
/// args have a quote every few bytes, so this is a plain byte loop into room made first.
#[inline]
fn csv_json_field(out: &mut Vec<u8>, b: &[u8]) {
    if memchr::memchr3(b'"', b',', b'\n', b).is_none() && memchr::memchr(b'\r', b).is_none() {
        out.extend_from_slice(b);
        return;
    }
    let start = out.len();
    out.resize(start + 2 * b.len() + 2, 0);
    let dst = &mut out[start..];
    dst[0] = b'"';
    let mut j = 1;
    let byte = |dst: &mut [u8], j: &mut usize, c: u8| {
        dst[*j] = if c == b'\n' || c == b'\r' { b' ' } else { c };
        *j += 1;
        if c == b'"' {
            dst[*j] = b'"';
            *j += 1;
        }
    };
    // eight bytes at a time where they hold no quote (line breaks become spaces by mask)
    let mut chunks = b.chunks_exact(8);
    for c in &mut chunks {
        let x = u64::from_le_bytes(c.try_into().expect("8 bytes"));
        if eq_mask(x, b'"') == 0 {
            let nl = eq_mask(x, b'\n') | eq_mask(x, b'\r');
            let m = (nl >> 7) * 0xFF;
            let y = (x & !m) | ((LO * b' ' as u64) & m);
            dst[j..j + 8].copy_from_slice(&y.to_le_bytes());
            j += 8;
        } else {
            for &c in c {
                byte(dst, &mut j, c);
            }
        }
    }
    for &c in chunks.remainder() {
        byte(dst, &mut j, c);
    }
    dst[j] = b'"';
    out.truncate(start + j + 1);
}

/// One CSV field, quoted only when it must be.
#[inline]
fn csv_field(out: &mut Vec<u8>, b: &[u8]) {
    let special = memchr::memchr3(b',', b'"', b'\n', b).is_some() || memchr::memchr(b'\r', b).is_some();
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
/// byte for byte, so numbers keep every digit the source wrote.
fn one_line(out: &mut Vec<u8>, b: &[u8]) {
    out.reserve(b.len());
    let mut chunks = b.chunks_exact(8);
    for c in &mut chunks {
        let x = u64::from_le_bytes(c.try_into().expect("8 bytes"));
        if eq_mask(x, b'\n') | eq_mask(x, b'\r') == 0 {
            out.extend_from_slice(c);
        } else {
            out.extend(c.iter().map(|&c| if c == b'\n' || c == b'\r' { b' ' } else { c }));
        }
    }
    out.extend(chunks.remainder().iter().map(|&c| if c == b'\n' || c == b'\r' { b' ' } else { c }));
}

/// A JSON string literal (quotes and escapes as serde_json writes them).
#[inline]
fn json_str(out: &mut Vec<u8>, s: &str) {
    let b = s.as_bytes();
    if !needs_json_escape(b) {
        out.push(b'"');
        out.extend_from_slice(b);
        out.push(b'"');
    } else {
        let _ = serde_json::to_writer(out, s);
    }
}

/// Whether a string holds a byte JSON must escape (a control character, `"` or `\`); eight
/// bytes at a time (the "has less than" / "has zero byte" word tricks).
#[inline]
fn needs_json_escape(b: &[u8]) -> bool {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    let zero = |x: u64| x.wrapping_sub(LO) & !x & HI;
    let mut chunks = b.chunks_exact(8);
    for c in &mut chunks {
        let x = u64::from_le_bytes(c.try_into().expect("8 bytes"));
        let control = x.wrapping_sub(LO * 0x20) & !x & HI;
        if control | zero(x ^ (LO * b'"' as u64)) | zero(x ^ (LO * b'\\' as u64)) != 0 {
            return true;
        }
    }
    chunks.remainder().iter().any(|&c| c < 0x20 || c == b'"' || c == b'\\')
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_escape_check_matches_the_plain_rule() {
        let naive = |b: &[u8]| b.iter().any(|&c| c < 0x20 || c == b'"' || c == b'\\');
        let alphabet: &[u8] = b"a\x00\x1f \x20\"\\\x7f\xc3\xa9~!0";
        let mut seed = 12345u64;
        for len in 0..40 {
            for _ in 0..200 {
                let s: Vec<u8> = (0..len)
                    .map(|_| {
                        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                        alphabet[(seed >> 33) as usize % alphabet.len()]
                    })
                    .collect();
                assert_eq!(needs_json_escape(&s), naive(&s), "{s:?}");
            }
        }
        let mut out = Vec::new();
        json_str(&mut out, "tab\there \"q\" \\ é");
        assert_eq!(String::from_utf8(out).unwrap(), r#""tab\there \"q\" \\ é""#);
    }

    #[test]
    fn eq_mask_is_exact_per_byte() {
        let mut seed = 99u64;
        for _ in 0..20000 {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let bytes: [u8; 8] =
                std::array::from_fn(|k| [b'"', b'#', b'!', 0, 1, b'\n', 0x0b, 0xff][((seed >> (8 * k)) & 7) as usize]);
            let x = u64::from_le_bytes(bytes);
            for c in [b'"', b'\n', 0u8] {
                let want =
                    bytes.iter().enumerate().fold(0u64, |m, (k, &b)| if b == c { m | 0x80 << (8 * k) } else { m });
                assert_eq!(eq_mask(x, c), want, "{bytes:?} {c}");
            }
        }
    }

    #[test]
    fn csv_fields() {
        let f = |s: &str| {
            let mut out = Vec::new();
            csv_field(&mut out, s.as_bytes());
            String::from_utf8(out).unwrap()
        };
        assert_eq!(f("plain text"), "plain text");
        assert_eq!(f(""), "");
        assert_eq!(f("a,b"), "\"a,b\"");
        assert_eq!(f("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(f("two\nlines"), "\"two\nlines\"");
        assert_eq!(f("cr\r"), "\"cr\r\"");
        let j = |s: &str| {
            let mut out = Vec::new();
            csv_json_field(&mut out, s.as_bytes());
            String::from_utf8(out).unwrap()
        };
        assert_eq!(j("{}"), "{}");
        assert_eq!(j("{\"a\":1}"), "\"{\"\"a\"\":1}\"");
        assert_eq!(
            j("{\n  \"long key here\": \"v,w\",\r\n  \"b\": [1, 2]\n}"),
            "\"{   \"\"long key here\"\": \"\"v,w\"\",    \"\"b\"\": [1, 2] }\""
        );
        let mut out = Vec::new();
        one_line(&mut out, b"{\n \"a\": 1,\r\n \"b\": \"x\\ny\"\n}");
        assert_eq!(out, b"{  \"a\": 1,   \"b\": \"x\\ny\" }");
    }
}
