//! Walks a `Trace` (`repeated TracePacket packet = 1`) packet by packet, with each packet's
//! byte offset, instead of decoding the whole trace as one message: a trace of millions of
//! packets never sits in memory twice, and a damaged one is reported where it breaks.

/// Where the walk stopped on bad bytes: the offset in the trace and what was wrong there.
#[derive(Debug, Clone, PartialEq)]
pub struct Broken {
    pub offset: usize,
    pub what: String,
}

/// A varint at `p`: its value and the position after it; None when it runs past the end
/// or past ten bytes.
pub fn varint(b: &[u8], mut p: usize) -> Option<(u64, usize)> {
    let mut v = 0u64;
    for shift in (0..70).step_by(7) {
        let byte = *b.get(p)?;
        p += 1;
        v |= ((byte & 0x7f) as u64) << shift.min(63);
        if byte < 0x80 {
            return Some((v, p));
        }
    }
    None
}

/// The packets of a trace: `(offset, bytes)` of each, in file order. Fields of `Trace` other
/// than packets are skipped; a field that cannot be read stops the walk (`broken`).
pub struct Packets<'a> {
    buf: &'a [u8],
    pos: usize,
    pub broken: Option<Broken>,
}

impl<'a> Packets<'a> {
    pub fn new(buf: &'a [u8]) -> Packets<'a> {
        Packets { buf, pos: 0, broken: None }
    }

    fn stop(&mut self, offset: usize, what: impl Into<String>) -> Option<(usize, &'a [u8])> {
        self.broken = Some(Broken { offset, what: what.into() });
        self.pos = self.buf.len();
        None
    }
}

impl<'a> Iterator for Packets<'a> {
    type Item = (usize, &'a [u8]);

    fn next(&mut self) -> Option<(usize, &'a [u8])> {
        loop {
            if self.pos >= self.buf.len() {
                return None;
            }
            let at = self.pos;
            let Some((tag, p)) = varint(self.buf, at) else {
                return self.stop(at, "a field tag cut short (truncated varint)");
            };
            let (field, wire) = (tag >> 3, tag & 7);
            let rest = self.buf.len() - p;
            match wire {
                2 => {
                    let Some((len, q)) = varint(self.buf, p) else {
                        return self.stop(at, "a length cut short (truncated varint)");
                    };
                    if len > (self.buf.len() - q) as u64 {
                        return self.stop(
                            at,
                            format!("a field of {len} bytes runs past the end ({} bytes left)", self.buf.len() - q),
                        );
                    }
                    let end = q + len as usize;
                    self.pos = end;
                    if field == 1 {
                        return Some((at, &self.buf[q..end]));
                    }
                }
                0 => match varint(self.buf, p) {
                    Some((_, q)) => self.pos = q,
                    None => return self.stop(at, "a varint cut short"),
                },
                1 if rest >= 8 => self.pos = p + 8,
                5 if rest >= 4 => self.pos = p + 4,
                1 | 5 => return self.stop(at, "a fixed-width field cut short"),
                w => return self.stop(at, format!("wire type {w} of field {field} is not a trace's")),
            }
            if field == 1 {
                return self.stop(at, format!("a packet field with wire type {wire} (a packet is length-delimited)"));
            }
        }
    }
}

/// Whether `head` (the first bytes of a file, decompressed; a few KB) looks like a Perfetto
/// trace: nothing but packet fields (`0x0a`, a length), each packet's bytes well-formed
/// protobuf fields ending where the packet ends (the last may run past `head` unless `whole`,
/// `head` being the whole file). Text fails: a JSON file opening with a newline reads as a
/// packet field, but not its contents.
pub fn looks_like_trace(head: &[u8], whole: bool) -> bool {
    if head.first() != Some(&0x0a) {
        return false;
    }
    // text, however it parses: a trace's first packet has binary varints and tags
    if head.iter().take(256).all(|&b| b.is_ascii_graphic() || b.is_ascii_whitespace()) {
        return false;
    }
    let mut p = 0;
    let mut packets = 0;
    while p < head.len() {
        if head[p] != 0x0a {
            return false;
        }
        let Some((len, q)) = varint(head, p + 1) else { return packets > 0 };
        if len > 1 << 31 {
            return false;
        }
        let end = q as u64 + len;
        if end > head.len() as u64 {
            return !whole && fields_well_formed(&head[q..], true);
        }
        if !fields_well_formed(&head[q..end as usize], false) {
            return false;
        }
        packets += 1;
        p = end as usize;
    }
    packets > 0
}

/// Whether `b` is a run of protobuf fields with sane tags; `cut`: `b` may stop mid-field.
fn fields_well_formed(b: &[u8], cut: bool) -> bool {
    let mut p = 0;
    while p < b.len() {
        let Some((tag, q)) = varint(b, p) else { return cut };
        let (field, wire) = (tag >> 3, tag & 7);
        if field == 0 || field > 100_000 {
            return false;
        }
        let next = match wire {
            0 => match varint(b, q) {
                Some((_, r)) => r as u64,
                None => return cut,
            },
            1 => q as u64 + 8,
            5 => q as u64 + 4,
            2 => match varint(b, q) {
                Some((len, r)) => r as u64 + len,
                None => return cut,
            },
            _ => return false,
        };
        if next > b.len() as u64 {
            return cut;
        }
        p = next as usize;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packets_are_walked_with_their_offsets_and_damage_is_located() {
        // two packets (one empty), a skipped varint field 2, then a cut one
        let t = [0x0a, 0x02, 0x40, 0x01, 0x0a, 0x00, 0x10, 0x05, 0x0a, 0x05, 0x01];
        let mut w = Packets::new(&t);
        assert_eq!(w.next(), Some((0, &t[2..4])));
        assert_eq!(w.next(), Some((4, &t[6..6])));
        assert_eq!(w.next(), None);
        let b = w.broken.clone().unwrap();
        assert_eq!(b.offset, 8);
        assert!(b.what.contains("runs past the end"), "{b:?}");
        // a truncated varint tag
        let mut w = Packets::new(&[0x0a, 0x00, 0xff]);
        assert!(w.next().is_some() && w.next().is_none());
        assert_eq!(w.broken.unwrap().offset, 2);
        // a packet field of the wrong wire type
        let mut w = Packets::new(&[0x08, 0x01]);
        assert!(w.next().is_none());
        assert!(w.broken.unwrap().what.contains("wire type 0"));
    }

    #[test]
    fn a_trace_is_told_from_other_bytes() {
        assert!(looks_like_trace(&[0x0a, 0x02, 0x40, 0x01, 0x0a, 0x00], true));
        assert!(!looks_like_trace(b"{\"traceEvents\": []}", true));
        assert!(!looks_like_trace(&[0x0a, 0x02, 0x43, 0x01], true));
        assert!(!looks_like_trace(&[], true));
        // JSON opening with a newline: a "packet" whose contents are not fields
        assert!(!looks_like_trace(b"\n[\n{\"ph\": \"X\", \"name\": \"a\", \"ts\": 1, \"dur\": 2}\n]\n", true));
        assert!(!looks_like_trace(b"\n{\"traceEvents\": [{\"ph\": \"X\"}]}", false));
    }
}
