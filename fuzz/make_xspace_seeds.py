#!/usr/bin/env python3
"""Writes small XSpace seeds for the `xspace` fuzz target (fuzz/seeds/xspace/), encoded here
field by field: a GPU plane with two streams (kernels with `kernel_details` inline and as a
reference, a memcpy, correlation ids), the host plane with the launches, a Python frame,
a StepTraceAnnotation and an instant, an aggregated event, a custom plane and
`Task Environment`; plus the same gzipped and cut short."""

import gzip
import os
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "seeds", "xspace")


def varint(v):
    v &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def key(f, w):
    return varint(f << 3 | w)


def vi(f, v):
    return key(f, 0) + varint(v)


def ld(f, b):
    if isinstance(b, str):
        b = b.encode()
    return key(f, 2) + varint(len(b)) + b


def dbl(f, x):
    return key(f, 1) + struct.pack("<d", x)


def stat(mid, kind, v):
    body = vi(1, mid)
    if kind == "i":
        body += vi(4, v)
    elif kind == "u":
        body += vi(3, v)
    elif kind == "s":
        body += ld(5, v)
    elif kind == "r":
        body += vi(7, v)
    elif kind == "d":
        body += dbl(2, v)
    return body


def event(md, off_ps, dur_ps, stats=(), occurrences=None):
    b = vi(1, md)
    b += vi(5, occurrences) if occurrences is not None else vi(2, off_ps)
    b += vi(3, dur_ps)
    for s in stats:
        b += ld(4, stat(*s))
    return b


def line(lid, name, ts, events):
    return vi(1, lid) + ld(2, name) + vi(3, ts) + b"".join(ld(4, e) for e in events) + ld(11, name)


def plane(pid, name, lines, ev_names, st_names, stats=()):
    b = vi(1, pid) + ld(2, name)
    for l in lines:
        b += ld(3, l)
    for k, n in ev_names.items():
        b += ld(4, vi(1, k) + ld(2, vi(1, k) + ld(2, n)))
    for k, n in st_names.items():
        b += ld(5, vi(1, k) + ld(2, vi(1, k) + ld(2, n)))
    for s in stats:
        b += ld(6, stat(*s))
    return b


ST = {1: "correlation_id", 2: "kernel_details", 3: "hlo_op", 4: "hlo_module", 5: "step_num", 6: "memcpy_details",
      7: "grid:4,1,1 block:128,1,1 regs:32 occ_pct:50", 8: "memory_size", 9: "core_count", 10: "flops",
      11: "cuda_graph_id", 12: "process_id", 13: "profile_start_time", 14: "_r"}


def space():
    gpu = plane(
        1,
        "/device:GPU:0",
        [
            line(14, "Stream #14(Compute,Memset)", 1000, [
                event(1, 2_000_000, 5_000_000, [(1, "i", 7), (2, "r", 7), (3, "s", "fusion.1"), (4, "s", "jit_step"), (10, "d", 1e9)]),
                event(1, 9_000_000, 1_000_000, [(1, "i", 8), (2, "s", "grid:1,1,1 block:32,1,1"), (11, "i", 3)]),
            ]),
            line(15, "Stream #15(MemcpyH2D)", 1000, [event(2, 1_000_000, 2_000_000, [(1, "i", 6), (6, "s", "kind:HtoD size:64")])]),
            line(99, "XLA Ops", 1000, [event(1, 2_000_000, 5_000_000)]),
        ],
        {1: "loop_fusion", 2: "MemcpyH2D"},
        ST,
        [(8, "u", 80 << 30), (9, "i", 132)],
    )
    host = plane(
        2,
        "/host:CPU",
        [
            line(101, "python", 900, [
                event(3, 0, 20_000_000, [(5, "i", 0), (14, "i", 1)]),
                event(4, 500_000, 1_000_000, [(1, "i", 6)]),
                event(5, 1_500_000, 500_000, [(1, "i", 7)]),
                event(5, 1_900_000, 500_000, [(1, "i", 8)]),
                event(6, 3_000_000, 4_000_000),
                event(7, 8_000_000, 0),
                event(6, 0, 0, occurrences=12),
            ]),
        ],
        {3: "train", 4: "cudaMemcpyAsync", 5: "cuLaunchKernel", 6: "$train.py:10 step", 7: "ThreadpoolListener::StartRegion"},
        ST,
        [(12, "i", 4242)],
    )
    custom = plane(3, "/device:CUSTOM:Megascale Trace", [], {1: "x"}, {1: "graph_protos"})
    env = plane(4, "Task Environment", [], {}, ST, [(13, "i", 1_700_000_000_000_000_000)])
    return b"".join(ld(1, p) for p in (gpu, host, custom, env)) + ld(4, "seedhost")


def main():
    os.makedirs(OUT, exist_ok=True)
    s = space()
    files = {
        "small.xplane.pb": s,
        "small.xplane.pb.gz": gzip.compress(s, mtime=0),
        "cut.xplane.pb": s[: len(s) * 2 // 3],
    }
    for n, b in files.items():
        with open(os.path.join(OUT, n), "wb") as f:
            f.write(b)
        print(n, len(b))


if __name__ == "__main__":
    main()
