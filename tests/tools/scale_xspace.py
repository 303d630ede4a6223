#!/usr/bin/env python3
"""Scales a real XSpace profile (`.xplane.pb`) for `strobe bench ingest`: every line's events
are repeated N times, each repeat shifted in time by the profile's whole span, so the copies
follow one another as more steps of the same run would; `correlation_id` stats are shifted
too, so each repeat's launches link to their own device work. Planes, metadata and stats
are kept as they are.

    scale_xspace.py IN.xplane.pb OUT.xplane.pb --repeat N

The JSON form of the same trace is scaled with `strobe bench generate --from IN.trace.json.gz`.
"""
import argparse


def varint(b, i):
    r = s = 0
    while True:
        x = b[i]
        i += 1
        r |= (x & 0x7F) << s
        s += 7
        if x < 0x80:
            return r, i


def put_varint(n):
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def fields(b):
    """(field, wire type, value, raw bytes of the whole field)."""
    i = 0
    while i < len(b):
        start = i
        k, i = varint(b, i)
        f, w = k >> 3, k & 7
        if w == 0:
            v, i = varint(b, i)
        elif w == 1:
            v, i = b[i : i + 8], i + 8
        elif w == 2:
            n, i = varint(b, i)
            v, i = b[i : i + n], i + n
        elif w == 5:
            v, i = b[i : i + 4], i + 4
        else:
            raise ValueError(f"wire type {w} at byte {start}")
        yield f, w, v, b[start:i]


def signed(v):
    return v - (1 << 64) if v >= 1 << 63 else v


def ld(f, payload):
    return put_varint(f << 3 | 2) + put_varint(len(payload)) + payload


def vf(f, v):
    return put_varint(f << 3) + put_varint(v)


def correlation_ids(plane):
    """The stat metadata ids named `correlation_id` in a plane."""
    out = set()
    for f, _, v, _ in fields(plane):
        if f != 5:
            continue
        key, name = None, None
        for g, _, x, _ in fields(v):
            if g == 1:
                key = x
            elif g == 2:
                for h, _, y, _ in fields(x):
                    if h == 2:
                        name = bytes(y).decode("utf-8", "replace")
        if name == "correlation_id":
            out.add(key)
    return out


def span_of(planes):
    """(first start, last end) in ps over every line of every plane."""
    lo, hi = None, None
    for p in planes:
        for f, _, line, _ in fields(p):
            if f != 3:
                continue
            ts, evs = 0, []
            for g, _, x, _ in fields(line):
                if g == 3:
                    ts = signed(x)
                elif g == 4:
                    evs.append(x)
            for e in evs:
                off, dur = 0, 0
                for h, _, y, _ in fields(e):
                    if h == 2:
                        off = signed(y)
                    elif h == 3:
                        dur = signed(y)
                s = ts * 1000 + off
                lo = s if lo is None else min(lo, s)
                hi = s + max(dur, 0) if hi is None else max(hi, s + max(dur, 0))
    return lo or 0, hi or 0


def shifted_event(e, dt_ps, corr_ids, corr_shift):
    out = bytearray()
    for f, _, v, raw in fields(e):
        if f == 2:
            out += vf(2, signed(v) + dt_ps)
        elif f == 4 and corr_shift:
            stat = bytearray()
            mid = None
            for g, _, x, sraw in fields(v):
                if g == 1:
                    mid = x
                if g in (3, 4) and mid in corr_ids:
                    stat += vf(g, x + corr_shift)
                else:
                    stat += sraw
            out += ld(4, bytes(stat))
        else:
            out += raw
    return bytes(out)


def scale_plane(plane, repeat, period_ps, corr_ids, corr_step):
    out = bytearray()
    for f, _, v, raw in fields(plane):
        if f != 3:
            out += raw
            continue
        head, evs = bytearray(), []
        for g, _, x, lraw in fields(v):
            if g == 4:
                evs.append(x)
            else:
                head += lraw
        line = bytearray(head)
        for k in range(repeat):
            for e in evs:
                line += ld(4, shifted_event(e, k * period_ps, corr_ids, k * corr_step))
        out += ld(3, bytes(line))
    return bytes(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("src")
    ap.add_argument("out")
    ap.add_argument("--repeat", type=int, required=True)
    a = ap.parse_args()
    data = open(a.src, "rb").read()
    top = list(fields(data))
    planes = [v for f, _, v, _ in top if f == 1]
    lo, hi = span_of(planes)
    # a gap of a tenth of the span between copies, as between steps
    period = (hi - lo) + (hi - lo) // 10 + 1000
    corr_step = 1 << 24
    with open(a.out, "wb") as out:
        for f, _, v, raw in top:
            if f == 1:
                out.write(ld(1, scale_plane(v, a.repeat, period, correlation_ids(v), corr_step)))
            else:
                out.write(raw)


if __name__ == "__main__":
    main()
