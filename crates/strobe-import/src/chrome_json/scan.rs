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

#[inline]
pub fn skip_ws(b: &[u8], mut p: usize) -> usize {
    while p < b.len() && matches!(b[p], b' ' | b'\n' | b'\r' | b'\t') {
        p += 1;
    }
    p
}

/// `p` at an opening quote; returns the position after the closing quote.
#[inline]
pub fn skip_string(b: &[u8], p: usize) -> Result<usize, ScanError> {
    let mut i = p + 1;
    loop {
        match memchr::memchr2(b'"', b'\\', &b[i.min(b.len())..]) {
            None => return Err(eof(p)),
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

/// `p` at the first byte of a value; returns the position just after it.
pub fn skip_value(b: &[u8], p: usize) -> Result<usize, ScanError> {
    match b.get(p) {
        None => Err(eof(p)),
        Some(b'"') => skip_string(b, p),
        Some(b'{') | Some(b'[') => {
            let mut depth = 0usize;
            let mut i = p;
            while i < b.len() {
                match b[i] {
                    b'"' => {
                        i = skip_string(b, i)?;
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
            Err(eof(p))
        }
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
