//! Opcodes that push a number, a string or bytes read from the pickle itself.

use super::reader::{long_le, raw_unicode_escape, str_value, text_int, Long, PickleError, State, Value, WideInt};

impl<'a> State<'a> {
    /// An integer too wide for 64 bits: where it is, for a field that needs it to say so.
    fn new_wide(&mut self, len: usize, negative: bool) -> Value {
        self.out.new_wide(WideInt { offset: self.c.op_at, len, negative })
    }

    /// A string value. Equal short strings share one index: a snapshot writes `'N/A'` and its
    /// action names afresh in millions of trace entries, and one copy each is what a reader needs.
    #[inline(always)]
    fn new_str(&mut self, b: &'a [u8]) -> Result<Value, PickleError> {
        str_value(&mut self.out, &mut self.short_strs, b).map_err(|e| self.c.err(e))
    }

    /// LONG1 / LONG4: two's-complement little-endian of any length (LONG4's length is a
    /// signed 32-bit count, checked against the bytes left before use).
    #[inline(always)]
    pub(super) fn long(&mut self, n: i64) -> Result<(), PickleError> {
        if n < 0 {
            return Err(self.c.err(format!("LONG4 with negative length {n}")));
        }
        let b = self.c.take(n as usize)?;
        let v = match long_le(b) {
            Long::Fits(v) => v,
            Long::Wide { negative } => self.new_wide(b.len(), negative),
        };
        self.push(v)
    }

    /// INT / LONG (protocols 0 and 1): a decimal line; `I01`/`I00` are True/False; LONG may
    /// end in the Python 2 `L` suffix.
    pub(super) fn text_int(&mut self, op: u8) -> Result<(), PickleError> {
        let line = self.c.line()?;
        let v = match (op, line) {
            (b'I', b"01") => Value::Bool(true),
            (b'I', b"00") => Value::Bool(false),
            _ => {
                let digits = if op == b'L' { line.strip_suffix(b"L").unwrap_or(line) } else { line };
                match text_int(digits) {
                    Some(Long::Fits(v)) => v,
                    Some(Long::Wide { negative }) => self.new_wide(digits.len(), negative),
                    None => {
                        return Err(self.c.err(format!(
                            "INT/LONG argument {:?} is not an integer",
                            String::from_utf8_lossy(&line[..line.len().min(40)])
                        )))
                    }
                }
            }
        };
        self.push(v)
    }

    /// FLOAT (protocol 0): a decimal line.
    pub(super) fn text_float(&mut self) -> Result<(), PickleError> {
        let line = self.c.line()?;
        let v = std::str::from_utf8(line)
            .ok()
            .and_then(|t| t.trim().parse::<f64>().ok())
            .ok_or_else(|| self.c.err("FLOAT argument is not a number"))?;
        self.push(Value::Float(v))
    }

    /// UNICODE (protocol 0): a raw-unicode-escape line (Python 3 writes every str so).
    pub(super) fn raw_unicode(&mut self) -> Result<(), PickleError> {
        let line = self.c.line()?;
        let text = raw_unicode_escape(line).ok_or_else(|| self.c.err("UNICODE argument has a bad \\u escape"))?;
        let v = self.out.new_str_owned(text);
        self.push(v)
    }

    /// SHORT_BINUNICODE, BINUNICODE, BINUNICODE8: `n` bytes of UTF-8.
    #[inline(always)]
    pub(super) fn str_of_len(&mut self, n: usize) -> Result<(), PickleError> {
        let b = self.c.take(n)?;
        let v = self.new_str(b)?;
        self.push(v)
    }

    /// SHORT_BINSTRING, BINSTRING (Python 2 str): read as text where valid, bytes otherwise.
    #[inline(always)]
    pub(super) fn py2_str(&mut self, n: i64) -> Result<(), PickleError> {
        if n < 0 {
            return Err(self.c.err("negative string length"));
        }
        let b = self.c.take(n as usize)?;
        let v = if std::str::from_utf8(b).is_ok() { self.new_str(b)? } else { self.out.new_bytes(b) };
        self.push(v)
    }

    /// SHORT_BINBYTES, BINBYTES, BINBYTES8, BYTEARRAY8: `n` bytes.
    #[inline(always)]
    pub(super) fn bytes_of_len(&mut self, n: usize) -> Result<(), PickleError> {
        let b = self.c.take(n)?;
        let v = self.out.new_bytes(b);
        self.push(v)
    }
}
