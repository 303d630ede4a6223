#!/usr/bin/env python3
"""Independent oracle for Strobe's tests: GPU figures of a Kineto / chrome trace.

Written in plain Python (stdlib only), deliberately without sharing any code or
logic with the Rust implementation, so that the Rust tests compare against
figures computed a second, independent way.  See README.md for the rules.

usage: python3 tests/expected/kineto_expected.py TRACE.json[.gz] > X.report.json
"""
import gzip
import json
import os
import re
import sys
from collections import Counter, defaultdict
from decimal import ROUND_HALF_EVEN, Decimal

KERNEL = {"kernel"}
MEMORY = {"gpu_memcpy", "memcpy", "gpu_memset", "memset"}
GPU = KERNEL | MEMORY
STEP_RE = re.compile(r"^ProfilerStep#\d+$")


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        text = f.read().strip()
    if text.startswith("[") and not text.endswith("]"):  # unterminated array
        text = text.rstrip(",") + "]"
    # parse_float=Decimal keeps "5132768220117.759" exact (no binary float).
    return json.loads(text, parse_float=Decimal)


def to_ns(value, scale):
    """Exact decimal microseconds (or ns) -> integer nanoseconds."""
    d = Decimal(value) * scale
    return int(d.to_integral_value(rounding=ROUND_HALF_EVEN))


def union(intervals):
    """Merge half-open [s, e) intervals; empty ones vanish."""
    out = []
    for s, e in sorted(iv for iv in intervals if iv[1] > iv[0]):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def length(merged):
    return sum(e - s for s, e in merged)


def intersection_length(a, b):
    """|A ∩ B| for two merged (sorted, disjoint) interval lists."""
    i = j = total = 0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        total += max(0, hi - lo)
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return total


def sort_key(v):
    """Orders mixed int / str ids (pid 0 vs "stream 7") deterministically."""
    return (0, v, "") if isinstance(v, int) else (1, 0, str(v))


def report(path):
    doc = load(path)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    scale = 1000  # ts/dur are µs; displayTimeUnit is a display hint only

    gpu = []   # (device, stream, start, end, kind, name)
    steps = []
    for e in events:
        if e.get("ph") != "X":
            continue
        cat = str(e.get("cat", "")).lower()
        start = to_ns(e.get("ts") or 0, scale)
        dur = to_ns(e.get("dur") or 0, scale)
        if STEP_RE.match(str(e.get("name", ""))):
            steps.append({"name": e["name"], "cat": e.get("cat"), "pid": e.get("pid"),
                          "tid": e.get("tid"), "start_ns": start, "dur_ns": dur})
        if cat not in GPU:
            continue
        args = e.get("args") or {}
        device = args.get("device", e.get("pid"))
        stream = args.get("stream", e.get("tid"))
        name = str(e.get("name", ""))
        if cat in MEMORY:
            kind = "memory"
        elif "nccl" in name.lower() or "rccl" in name.lower():
            kind = "comm"
        else:
            kind = "compute"
        gpu.append((device, stream, start, start + dur, kind, name, cat))

    # ---- memory water level (profile_memory=True `[memory]` instants) --------
    # Per device (Device Type != 0, i.e. not host memory): the highest "Total Allocated" and
    # "Total Reserved" and the first time each is reached, in (ts, file order).
    mem = defaultdict(list)
    for idx, e in enumerate(events):
        if e.get("ph") in ("i", "I") and e.get("name") == "[memory]":
            a = e.get("args") or {}
            has_totals = a.get("Total Allocated") is not None or a.get("Total Reserved") is not None
            if has_totals and a.get("Device Type") not in (None, 0) and isinstance(a.get("Device Id"), int) and a["Device Id"] >= 0:
                mem[a["Device Id"]].append((to_ns(e["ts"], scale), idx, a.get("Total Allocated"), a.get("Total Reserved")))

    def first_max(points, k):
        best = None
        for p in sorted(points, key=lambda p: (p[0], p[1])):
            if p[k] is not None and (best is None or p[k] > best[k]):
                best = p
        return best

    def memory_of(dev):
        pts = mem.get(dev)
        if not pts:
            return None
        a, r = first_max(pts, 2), first_max(pts, 3)
        return {"device": dev, "peak_allocated_bytes": a and a[2], "peak_reserved_bytes": r and r[3],
                "at_ns": (a or r)[0], "reserved_at_ns": r and r[0],
                "samples": sum(1 for p in pts if p[2 if a else 3] is not None)}

    # ---- per device --------------------------------------------------------
    gpus = []
    for dev in sorted({g[0] for g in gpu}, key=sort_key):
        mine = [g for g in gpu if g[0] == dev]
        iv = {k: union((g[2], g[3]) for g in mine if g[4] == k)
              for k in ("compute", "comm", "memory")}
        window = max(g[3] for g in mine) - min(g[2] for g in mine)
        busy = length(union((g[2], g[3]) for g in mine))
        comm = length(iv["comm"])
        overlapped = intersection_length(iv["comm"], iv["compute"])
        gpus.append({
            "device": dev,
            "start_ns": min(g[2] for g in mine),
            "end_ns": max(g[3] for g in mine),
            "window_ns": window,
            "busy_ns": busy,
            "idle_ns": window - busy,
            "idle_pct": (window - busy) / window * 100 if window else 0.0,
            "compute_ns": length(iv["compute"]),
            "comm_ns": comm,
            "memory_ns": length(iv["memory"]),
            "comm_overlapped_ns": overlapped,
            "overlap_pct": overlapped / comm * 100 if comm else 0.0,
            "kernels": sum(1 for g in mine if g[6] in KERNEL),
            "memcpy": sum(1 for g in mine if "memcpy" in g[6]),
            "memset": sum(1 for g in mine if "memset" in g[6]),
        })
        if memory_of(dev):
            gpus[-1]["memory"] = memory_of(dev)

    # ---- top kernels (kernel category only, whole trace) -------------------
    durs = defaultdict(list)
    for g in gpu:
        if g[6] in KERNEL:
            durs[g[5]].append(g[3] - g[2])
    kernel_total = sum(sum(v) for v in durs.values())
    top = [{"name": n, "count": len(v), "total_ns": sum(v),
            "mean_ns": sum(v) // len(v), "min_ns": min(v), "max_ns": max(v),
            "pct_kernel_time": sum(v) / kernel_total * 100 if kernel_total else 0.0}
           for n, v in durs.items()]
    top.sort(key=lambda k: (-k["total_ns"], k["name"]))

    # ---- streams -------------------------------------------------------------
    per_stream = defaultdict(list)
    for g in gpu:
        per_stream[(g[0], g[1])].append(g)
    streams = [{"device": d, "stream": s,
                "events": len(v),
                "kernels": sum(1 for g in v if g[6] in KERNEL),
                "busy_ns": length(union((g[2], g[3]) for g in v))}
               for (d, s), v in sorted(per_stream.items(),
                                       key=lambda kv: (sort_key(kv[0][0]), sort_key(kv[0][1])))]

    steps.sort(key=lambda s: (s["start_ns"], s["name"]))
    return {
        "source": os.path.basename(path),
        "time_unit": "us",
        "events": len(events),
        "by_phase": dict(sorted(Counter(str(e.get("ph", "")) for e in events).items())),
        "by_category": dict(sorted(Counter(str(e["cat"]) for e in events if "cat" in e).items())),
        "kernel_count": sum(len(v) for v in durs.values()),
        "kernel_total_ns": kernel_total,
        "distinct_kernels": len(durs),
        "gpus": gpus,
        "top_kernels": top[:20],
        "streams": streams,
        "steps": steps,
    }


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    json.dump(report(sys.argv[1]), sys.stdout, indent=1, ensure_ascii=False)
    sys.stdout.write("\n")
