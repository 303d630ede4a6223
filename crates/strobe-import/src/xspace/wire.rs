//! Protobuf fields read by hand, one at a time (`next`). The outermost message: an `XSpace`
//! is a run of fields, and reading them one at a time keeps every plane that arrived whole
//! when the file was cut short (a killed job, a partial copy), where decoding the message at
//! once would refuse it all. A plane's lines are walked the same way (`lines`).

/// One top-level field: its number and, for a length-delimited one, its bytes.
pub enum Field<'a> {
    Bytes(u32, &'a [u8]),
    Other,
}

/// Where a walk stopped making sense: the byte offset and what was wrong.
pub struct Cut {
    pub at: usize,
    pub what: &'static str,
}

fn varint(b: &[u8], i: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let x = *b.get(*i)?;
        *i += 1;
        v |= ((x & 0x7f) as u64) << shift;
        if x < 0x80 {
            return Some(v);
        }
    }
    None
}

/// What a walk is over, in the words of its `Cut`s: the bytes ending inside a field's key, a
/// number, a length, or the contents of a length-delimited field.
pub struct Walk {
    key: &'static str,
    number: &'static str,
    length: &'static str,
    contents: &'static str,
}

/// The whole file (its fields are planes).
pub const FILE: Walk = Walk {
    key: "the file ends inside a field's key",
    number: "the file ends inside a number",
    length: "the file ends inside a length",
    contents: "the file ends inside a plane",
};

/// A plane (its lines).
pub const PLANE: Walk = Walk {
    key: "the plane ends inside a field's key",
    number: "the plane ends inside a number",
    length: "the plane ends inside a length",
    contents: "the plane ends inside a line",
};

/// A line (its events).
pub const LINE: Walk = Walk {
    key: "the line ends inside a field's key",
    number: "the line ends inside a number",
    length: "the line ends inside a length",
    contents: "the line ends inside an event",
};

/// One field's value: a varint's number, a length-delimited field's bytes, or a fixed-width
/// number (skipped: XSpace has none Strobe reads).
pub enum Value<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
    Fixed,
}

/// The field at `*i` in `b` (its number and value), moving `*i` past it; or what is wrong
/// there, in the words of `walk`.
pub fn next<'a>(b: &'a [u8], i: &mut usize, walk: &Walk) -> Result<(u32, Value<'a>), Cut> {
    let at = *i;
    let cut = |what| Cut { at, what };
    let key = varint(b, i).ok_or_else(|| cut(walk.key))?;
    let (num, wire) = ((key >> 3) as u32, key & 7);
    if num == 0 {
        return Err(cut("a field numbered 0 (not protobuf)"));
    }
    match wire {
        0 => varint(b, i).map(|v| (num, Value::Varint(v))).ok_or_else(|| cut(walk.number)),
        1 | 5 => {
            *i += if wire == 1 { 8 } else { 4 };
            if *i > b.len() {
                return Err(cut(walk.number));
            }
            Ok((num, Value::Fixed))
        }
        2 => {
            let len = varint(b, i).ok_or_else(|| cut(walk.length))?;
            let end = i.checked_add(len as usize).filter(|&e| len <= b.len() as u64 && e <= b.len());
            let end = end.ok_or_else(|| cut(walk.contents))?;
            let v = &b[*i..end];
            *i = end;
            Ok((num, Value::Bytes(v)))
        }
        _ => Err(cut("a field of an unknown wire type (not protobuf)")),
    }
}

/// The fields of the message `b`, in order, up to the first that cannot be read.
pub fn fields(b: &[u8]) -> (Vec<Field<'_>>, Option<Cut>) {
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match next(b, &mut i, &FILE) {
            Ok((num, Value::Bytes(v))) => out.push(Field::Bytes(num, v)),
            Ok(_) => out.push(Field::Other),
            Err(c) => return (out, Some(c)),
        }
    }
    (out, None)
}

/// Whether `b` opens like an XSpace: a plane (field 1) whose first fields are its id and a
/// name that reads as a plane's (`/host:CPU`, `/device:GPU:0`, `Task Environment`). A
/// Perfetto trace also opens with field 1 (a packet), but no packet's field 2 is such a name.
pub fn looks_like_space(b: &[u8]) -> bool {
    let mut i = 0;
    if b.first() != Some(&0x0a) {
        return false;
    }
    i += 1;
    if varint(b, &mut i).is_none() {
        return false;
    }
    // the plane's id (field 1, varint) may come first
    if b.get(i) == Some(&0x08) {
        i += 1;
        if varint(b, &mut i).is_none() {
            return false;
        }
    }
    if b.get(i) != Some(&0x12) {
        return false;
    }
    i += 1;
    let Some(len) = varint(b, &mut i) else { return false };
    let name = &b[i.min(b.len())..(i.saturating_add(len as usize)).min(b.len())];
    if name.is_empty() || len > 256 || !name.iter().all(|c| (0x20..0x7f).contains(c)) {
        return false;
    }
    name.starts_with(b"/") || name.starts_with(b"Task Environment")
}
