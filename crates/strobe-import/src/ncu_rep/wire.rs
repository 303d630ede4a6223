//! A bounded protobuf wire-format reader: just enough of the encoding to walk ncu's
//! messages field by field. Every length is checked against the bytes that are really
//! there before anything is sliced, so a corrupt length can neither panic nor allocate.
//! Positions in errors are absolute byte offsets in the report.

/// A wire-level error: what went wrong and the byte offset it was found at.
#[derive(Debug, Clone, PartialEq)]
pub struct WireError {
    pub offset: usize,
    pub what: String,
}

pub type Result<T> = std::result::Result<T, WireError>;

pub fn err<T>(offset: usize, what: impl Into<String>) -> Result<T> {
    Err(WireError { offset, what: what.into() })
}

/// One field's payload, by wire type. Groups (wire types 3 and 4, deprecated and never
/// written by ncu) are refused.
#[derive(Debug, Clone, Copy)]
pub enum Value<'a> {
    Varint(u64),
    Fixed64([u8; 8]),
    Bytes(&'a [u8]),
    Fixed32([u8; 4]),
}

impl Value<'_> {
    fn wire_name(&self) -> &'static str {
        match self {
            Value::Varint(_) => "varint",
            Value::Fixed64(_) => "64-bit",
            Value::Bytes(_) => "length-delimited",
            Value::Fixed32(_) => "32-bit",
        }
    }
}

/// One decoded field: its number, its payload and where its payload starts.
#[derive(Debug, Clone, Copy)]
pub struct Field<'a> {
    pub number: u32,
    pub value: Value<'a>,
    /// Absolute offset of the field's key.
    pub offset: usize,
    /// Absolute offset of a length-delimited payload's first byte.
    pub payload_offset: usize,
}

impl<'a> Field<'a> {
    fn wrong(&self, msg: &str, want: &str) -> WireError {
        WireError {
            offset: self.offset,
            what: format!("{msg} field {} has wire type {}, expected {want}", self.number, self.value.wire_name()),
        }
    }
    pub fn varint(&self, msg: &str) -> Result<u64> {
        match self.value {
            Value::Varint(v) => Ok(v),
            _ => Err(self.wrong(msg, "varint")),
        }
    }
    pub fn bytes(&self, msg: &str) -> Result<&'a [u8]> {
        match self.value {
            Value::Bytes(b) => Ok(b),
            _ => Err(self.wrong(msg, "length-delimited")),
        }
    }
    /// A nested message: a reader over its bytes, offsets kept absolute.
    pub fn message(&self, msg: &str) -> Result<Reader<'a>> {
        Ok(Reader::new(self.bytes(msg)?, self.payload_offset))
    }
    /// A string: invalid UTF-8 is replaced, not refused (names are for display).
    pub fn string(&self, msg: &str) -> Result<String> {
        Ok(String::from_utf8_lossy(self.bytes(msg)?).into_owned())
    }
    pub fn double(&self, msg: &str) -> Result<f64> {
        match self.value {
            Value::Fixed64(b) => Ok(f64::from_le_bytes(b)),
            _ => Err(self.wrong(msg, "64-bit")),
        }
    }
    pub fn float(&self, msg: &str) -> Result<f32> {
        match self.value {
            Value::Fixed32(b) => Ok(f32::from_le_bytes(b)),
            _ => Err(self.wrong(msg, "32-bit")),
        }
    }
}

/// Walks the fields of one message.
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    /// Absolute offset of `buf[0]`.
    base: usize,
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8], base: usize) -> Reader<'a> {
        Reader { buf, pos: 0, base }
    }

    fn varint(&mut self) -> Result<u64> {
        let start = self.base + self.pos;
        let mut v: u64 = 0;
        for i in 0..10 {
            let Some(&b) = self.buf.get(self.pos) else {
                return err(start, "message ends inside a varint");
            };
            self.pos += 1;
            if i == 9 && b > 1 {
                return err(start, "varint longer than 64 bits");
            }
            v |= u64::from(b & 0x7f) << (7 * i);
            if b < 0x80 {
                return Ok(v);
            }
        }
        err(start, "varint longer than 10 bytes")
    }

    fn take(&mut self, n: usize, what: &str, at: usize) -> Result<&'a [u8]> {
        let left = self.buf.len() - self.pos;
        if n > left {
            return err(at, format!("{what} of {n} bytes runs past the end of its message ({left} bytes left)"));
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    /// The next field, or None at the end of the message.
    pub fn next_field(&mut self) -> Result<Option<Field<'a>>> {
        if self.pos >= self.buf.len() {
            return Ok(None);
        }
        let offset = self.base + self.pos;
        let key = self.varint()?;
        let number = key >> 3;
        if number == 0 || number > u64::from(u32::MAX >> 3) {
            return err(offset, format!("invalid field number {number}"));
        }
        let number = number as u32;
        let value = match key & 7 {
            0 => Value::Varint(self.varint()?),
            1 => Value::Fixed64(self.take(8, "64-bit field", offset)?.try_into().expect("8 bytes")),
            2 => {
                let len_at = self.base + self.pos;
                let n = self.varint()?;
                let n = usize::try_from(n).unwrap_or(usize::MAX);
                let payload_offset = self.base + self.pos;
                let b = self.take(n, "length-delimited field", len_at)?;
                return Ok(Some(Field { number, value: Value::Bytes(b), offset, payload_offset }));
            }
            5 => Value::Fixed32(self.take(4, "32-bit field", offset)?.try_into().expect("4 bytes")),
            w => return err(offset, format!("field {number} has wire type {w}, which ncu does not write")),
        };
        Ok(Some(Field { number, value, offset, payload_offset: offset }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_fields_and_skips_nothing() {
        // field 1 varint 300, field 2 bytes "hi", field 3 double 1.5, field 4 fixed32 2.0f
        let mut b = vec![0x08, 0xac, 0x02, 0x12, 0x02, b'h', b'i', 0x19];
        b.extend_from_slice(&1.5f64.to_le_bytes());
        b.push(0x25);
        b.extend_from_slice(&2.0f32.to_le_bytes());
        let mut r = Reader::new(&b, 100);
        let f = r.next_field().unwrap().unwrap();
        assert_eq!((f.number, f.varint("m").unwrap(), f.offset), (1, 300, 100));
        let f = r.next_field().unwrap().unwrap();
        assert_eq!((f.string("m").unwrap().as_str(), f.payload_offset), ("hi", 105));
        assert!(f.varint("m").unwrap_err().what.contains("wire type length-delimited"));
        assert_eq!(r.next_field().unwrap().unwrap().double("m").unwrap(), 1.5);
        assert_eq!(r.next_field().unwrap().unwrap().float("m").unwrap(), 2.0);
        assert!(r.next_field().unwrap().is_none());
    }

    #[test]
    fn refuses_bad_lengths_and_types() {
        // a length of 2^62 must be refused without allocating
        let b = [0x12, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40];
        let e = Reader::new(&b, 7).next_field().unwrap_err();
        assert_eq!(e.offset, 8);
        assert!(e.what.contains("runs past the end"), "{}", e.what);
        let e = Reader::new(&[0x0b], 0).next_field().unwrap_err(); // wire type 3
        assert!(e.what.contains("wire type 3"), "{}", e.what);
        let e = Reader::new(&[0x08, 0x80], 0).next_field().unwrap_err();
        assert!(e.what.contains("inside a varint"), "{}", e.what);
        let e = Reader::new(&[0x08; 1].iter().chain([0xff; 11].iter()).copied().collect::<Vec<_>>(), 0)
            .next_field()
            .unwrap_err();
        assert!(e.what.contains("varint"), "{}", e.what);
        let e = Reader::new(&[0x00], 0).next_field().unwrap_err();
        assert!(e.what.contains("field number 0"), "{}", e.what);
    }
}
