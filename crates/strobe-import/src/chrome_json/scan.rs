//! A structural JSON scanner for trace events: finds each top-level key and the extent of
//! its value without building anything, several times faster than a full parse of the big
//! `args` objects Kineto writes. Values Strobe reads are then parsed from their exact text;
//! everything else (args) is kept as text. Structure is checked (strings closed, brackets
//! balanced, values where values belong); the insides of args are checked when read.

/// Where and why the scan stopped.
#[derive(Debug)]
pub struct ScanError {
    pub at: usize,
    pub what: &'static str,
    /// The input ended inside the value (a truncated file).
    pub eof: bool,
}

fn err(at: usize, what: &'static str) -> ScanError {
    ScanError { at, what, eof: false }
}

fn eof(at: usize) -> ScanError {
    ScanError { at, what: "the file ends inside an event", eof: true }
}

/// Past JSON whitespace from `p`. Kineto pretty-prints (a newline and four spaces before
/// most keys), so runs longer than a byte are common: those are tested eight bytes at once.
#[inline]
pub fn skip_ws(b: &[u8], p: usize) -> usize {
    match b.get(p) {
        Some(&c) if c > b' ' => p,
        None => p,
        _ => skip_ws_run(b, p),
    }
}

fn skip_ws_run(b: &[u8], mut p: usize) -> usize {
    while p + 8 <= b.len() {
        let w = word_at(b, p);
        let ws = byte_is_zero(w ^ (ONES * b' ' as u64))
            | byte_is_zero(w ^ (ONES * b'\n' as u64))
            | byte_is_zero(w ^ (ONES * b'\r' as u64))
            | byte_is_zero(w ^ (ONES * b'\t' as u64));
        let other = !ws & HIGHS;
        if other != 0 {
            return p + (other.trailing_zeros() / 8) as usize;
        }
        p += 8;
    }
    while p < b.len() && matches!(b[p], b' ' | b'\n' | b'\r' | b'\t') {
        p += 1;
    }
    p
}

/// A high bit at each zero byte of `y`, exactly (no borrow crosses bytes: unlike
/// `bytes_eq`, every byte's answer can be read).
#[inline]
fn byte_is_zero(y: u64) -> u64 {
    !(((y & !HIGHS).wrapping_add(!HIGHS)) | y) & HIGHS
}

// Eight bytes at a time (SWAR): the args objects Kineto writes are mostly short keys and
// numbers, where a per-byte loop, or a memchr call per short string, is what the scan costs.
const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// A high bit at each byte of `w` equal to `c`. Exact at the lowest such byte (a borrow can
/// mark bytes above a match), which is the only one the callers read.
#[inline]
fn bytes_eq(w: u64, c: u8) -> u64 {
    let y = w ^ (ONES * c as u64);
    y.wrapping_sub(ONES) & !y & HIGHS
}

#[inline]
fn word_at(b: &[u8], i: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[i..i + 8]);
    u64::from_le_bytes(a)
}

/// The first `"` or backslash at or after `i`.
#[inline]
fn next_quote_or_escape(b: &[u8], mut i: usize) -> Option<usize> {
    while i + 8 <= b.len() {
        let w = word_at(b, i);
        let m = bytes_eq(w, b'"') | bytes_eq(w, b'\\');
        if m != 0 {
            return Some(i + (m.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    (i..b.len()).find(|&k| matches!(b[k], b'"' | b'\\'))
}

/// `p` at an opening quote; returns the position after the closing quote.
#[inline]
pub fn skip_string(b: &[u8], p: usize) -> Result<usize, ScanError> {
    let mut i = p + 1;
    loop {
        match next_quote_or_escape(b, i.min(b.len())) {
            None => return Err(eof(p)),
            Some(q) => {
                if b[q] == b'"' {
                    return Ok(q + 1);
                }
                i = q + 2;
            }
        }
    }
}

/// `p` at the first byte of a value; returns the position just after it.
pub fn skip_value(b: &[u8], p: usize) -> Result<usize, ScanError> {
    match b.get(p) {
        None => Err(eof(p)),
        Some(b'"') => skip_string(b, p),
        Some(b'{') | Some(b'[') => super::blocks::container_end(b, p).ok_or_else(|| eof(p)),
        Some(c) if c.is_ascii_digit() || matches!(c, b'-' | b't' | b'f' | b'n' | b'N' | b'I') => {
            let mut i = p + 1;
            while i < b.len() && !matches!(b[i], b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t') {
                i += 1;
            }
            if i >= b.len() {
                return Err(eof(p));
            }
            Ok(i)
        }
        Some(_) => Err(err(p, "expected a JSON value")),
    }
}

/// Scans the object at `p`, calling `f(key_raw, value_raw)` for each member (key without
/// its quotes, still escaped). Returns the position after the object.
pub fn scan_object<'a>(text: &'a str, p: usize, mut f: impl FnMut(&'a str, &'a str)) -> Result<usize, ScanError> {
    let b = text.as_bytes();
    if b.get(p) != Some(&b'{') {
        return Err(if p >= b.len() { eof(p) } else { err(p, "expected an event object") });
    }
    let mut i = skip_ws(b, p + 1);
    if b.get(i) == Some(&b'}') {
        return Ok(i + 1);
    }
    loop {
        if i >= b.len() {
            return Err(eof(p));
        }
        if b[i] != b'"' {
            return Err(err(i, "expected a key"));
        }
        let ke = skip_string(b, i)?;
        let key = &text[i + 1..ke - 1];
        i = skip_ws(b, ke);
        match b.get(i) {
            Some(b':') => {}
            None => return Err(eof(p)),
            _ => return Err(err(i, "expected ':' after a key")),
        }
        i = skip_ws(b, i + 1);
        let ve = skip_value(b, i)?;
        f(key, &text[i..ve]);
        i = skip_ws(b, ve);
        match b.get(i) {
            Some(b',') => i = skip_ws(b, i + 1),
            Some(b'}') => return Ok(i + 1),
            None => return Err(eof(p)),
            _ => return Err(err(i, "expected ',' or '}' in an object")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The byte-at-a-time scan the word-at-a-time one replaced: the two must agree on every
    /// input, valid or not.
    fn skip_value_bytewise(b: &[u8], p: usize) -> Result<usize, (usize, bool)> {
        fn string(b: &[u8], p: usize) -> Result<usize, (usize, bool)> {
            let mut i = p + 1;
            loop {
                match b.get(i.min(b.len())..).and_then(|t| t.iter().position(|&c| c == b'"' || c == b'\\')) {
                    None => return Err((p, true)),
                    Some(k) => {
                        let q = i + k;
                        if b[q] == b'"' {
                            return Ok(q + 1);
                        }
                        i = q + 2;
                    }
                }
            }
        }
        match b.get(p) {
            None => Err((p, true)),
            Some(b'"') => string(b, p),
            Some(b'{') | Some(b'[') => {
                let (mut depth, mut i) = (0usize, p);
                while i < b.len() {
                    match b[i] {
                        // outside a string too, a backslash escapes the next byte (see `blocks`)
                        b'\\' => {
                            i += 2;
                            continue;
                        }
                        b'"' => {
                            // the text ending inside is reported at the container
                            i = string(b, i).map_err(|_| (p, true))?;
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth -= 1;
                            if depth == 0 {
                                return Ok(i + 1);
                            }
                        }
                        _ => {}
                    }
                    i += 1;
                }
                Err((p, true))
            }
            Some(_) => skip_value(b, p).map_err(|e| (e.at, e.eof)),
        }
    }

    proptest::proptest! {
        #[test]
        fn word_scan_agrees_with_the_bytewise_one(
            body in proptest::collection::vec(proptest::sample::select(
                b"{}[]\"\\:, a1\x02\x5c|{;\x7d\x5b\x5d\xff".to_vec()), 0..80),
            open in proptest::sample::select(b"{[\"".to_vec()),
        ) {
            let mut b = vec![open];
            b.extend_from_slice(&body);
            let got = skip_value(&b, 0).map_err(|e| (e.at, e.eof));
            proptest::prop_assert_eq!(got, skip_value_bytewise(&b, 0));
        }
    }
    proptest::proptest! {
        #[test]
        fn whitespace_runs(body in proptest::collection::vec(proptest::sample::select(
                b"   \n\r\t\t\x0b\x00\x1f\x20\x21\x8ax\xa0\x89".to_vec()), 0..40), from in 0usize..40) {
            let want = (from.min(body.len())..body.len())
                .find(|&k| !matches!(body[k], b' ' | b'\n' | b'\r' | b'\t'))
                .unwrap_or(body.len().max(from));
            proptest::prop_assert_eq!(skip_ws(&body, from), want);
        }
    }

    #[test]
    fn scans_members() {
        let t = r#"{"ph": "X", "name":"a\"b", "args": {"x": [1, {"y": "}"}]}, "ts": 1.5 } tail"#;
        let mut got = Vec::new();
        let end = scan_object(t, 0, |k, v| got.push((k, v))).unwrap();
        assert_eq!(&t[end..], " tail");
        assert_eq!(
            got,
            vec![("ph", "\"X\""), ("name", r#""a\"b""#), ("args", r#"{"x": [1, {"y": "}"}]}"#), ("ts", "1.5")]
        );
    }
    #[test]
    fn nested_containers() {
        for t in [r#"[[]]"#, r#"{"a": [1, [2, {"b": "]}"}], {}]}"#, r#"[{"x": "\\"}, "[", "\""]"#, "[[[[[[]]]]]]"] {
            assert_eq!(skip_value(t.as_bytes(), 0).unwrap(), t.len(), "{t}");
        }
        assert!(skip_value(b"[[]", 0).unwrap_err().eof);
    }

    #[test]
    fn truncated_and_broken() {
        assert!(scan_object(r#"{"ph": "X", "ts": 1"#, 0, |_, _| {}).unwrap_err().eof);
        assert!(scan_object(r#"{"ph": "X"#, 0, |_, _| {}).unwrap_err().eof);
        assert!(!scan_object(r#"{"ph" "X"}"#, 0, |_, _| {}).unwrap_err().eof);
        assert!(!scan_object(r#"{"ph": ]}"#, 0, |_, _| {}).unwrap_err().eof);
        assert!(!scan_object(r#"[1,2]"#, 0, |_, _| {}).unwrap_err().eof);
    }
}
