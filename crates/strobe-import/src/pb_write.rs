//! Protobuf written by hand, for the tests of the readers that walk it by hand (XSpace lines,
//! Perfetto packets, Nsight Compute reports): a field of each wire type Strobe reads.

/// `v` as a varint.
pub fn varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Field `num` holding the bytes `b` (a string, bytes or an embedded message).
pub fn field_bytes(num: u64, b: &[u8], out: &mut Vec<u8>) {
    varint(num << 3 | 2, out);
    varint(b.len() as u64, out);
    out.extend_from_slice(b);
}

/// Field `num` holding the varint `v`.
pub fn field_varint(num: u64, v: u64, out: &mut Vec<u8>) {
    varint(num << 3, out);
    varint(v, out);
}
