#!/usr/bin/env python3
"""Makes a small copy of an Nsight Compute report for sample-traces/: the same launches,
metrics and rule results, without what Strobe never reads (the SASS/source blocks and each
result's section bodies: tables and charts). The copy is gzipped. Stdlib only.

Usage: tests/tools/trim_ncu_rep.py IN.ncu-rep[.gz] OUT.ncu-rep.gz

Container (see crates/strobe-import/src/ncu_rep/framing.rs): `NVR\\0`, a u32-length-prefixed
FileHeader, then blocks: a u32-length-prefixed BlockHeader (field 1 NumSources, 2 NumResults,
5 PayloadSize) and its payload of u32-length-prefixed items (sources, then results). A
ProfileResult's field 17 holds its sections' bodies.
"""
import gzip
import struct
import sys


def varint(b, i):
    r = s = 0
    while True:
        c = b[i]
        i += 1
        r |= (c & 0x7F) << s
        s += 7
        if c < 0x80:
            return r, i


def enc_varint(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def fields(b):
    """(field number, raw bytes of the whole field incl. key, varint value or None)."""
    i = 0
    while i < len(b):
        start = i
        k, i = varint(b, i)
        t = k & 7
        v = None
        if t == 0:
            v, i = varint(b, i)
        elif t == 1:
            i += 8
        elif t == 5:
            i += 4
        elif t == 2:
            n, i = varint(b, i)
            i += n
        else:
            raise ValueError(f"wire type {t} at {start}")
        yield k >> 3, b[start:i], v


def drop(msg, numbers):
    return b"".join(raw for f, raw, _ in fields(msg) if f not in numbers)


def main(src, dst):
    data = open(src, "rb").read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    assert data[:4] == b"NVR\0", "not an .ncu-rep"
    n = struct.unpack("<I", data[4:8])[0]
    pos = 8 + n
    out = bytearray(data[:pos])
    while pos < len(data):
        n = struct.unpack("<I", data[pos : pos + 4])[0]
        header = data[pos + 4 : pos + 4 + n]
        pos += 4 + n
        h = {f: v for f, _, v in fields(header) if v is not None}
        size, sources, results = h.get(5, 0), h.get(1, 0), h.get(2, 0)
        payload = data[pos : pos + size]
        pos += size
        items, j = [], 0
        while j < len(payload):
            m = struct.unpack("<I", payload[j : j + 4])[0]
            items.append(payload[j + 4 : j + 4 + m])
            j += 4 + m
        if sources and not results and len(items) == sources:
            continue  # a block of sources only
        kept = [drop(it, {17}) if sources <= i < sources + results else it for i, it in enumerate(items)]
        kept = kept[sources:]
        new_payload = b"".join(struct.pack("<I", len(it)) + it for it in kept)
        new_header = drop(header, {1, 5}) + enc_varint(1 << 3) + enc_varint(0)
        new_header += enc_varint(5 << 3) + enc_varint(len(new_payload))
        out += struct.pack("<I", len(new_header)) + new_header + new_payload
    with gzip.GzipFile(dst, "wb", compresslevel=9, mtime=0) as f:
        f.write(bytes(out))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
