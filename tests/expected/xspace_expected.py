#!/usr/bin/env python3
"""Expected figures for the XSpace samples (`sample-traces/*.xplane.pb`), from a minimal
protobuf wire decoder written here (no generated code, no Strobe): per GPU the kernel
count and busy time (union of the stream events, ns = floor(ps / 1000)), launches on the
host that match device work by correlation id, the StepTraceAnnotation steps with each
step's GPU idle time, XLA op events run on host threads, the longest `time.sleep` on the
host (a planted stall), and per HLO op the GPU work that carries XLA's cost stats (`flops`,
`bytes_accessed`, as the profiler's stat metadata names them): count, FLOPs, bytes, GPU ns.

    python3 tests/expected/xspace_expected.py   # writes tests/expected/<stem>.xspace.json
"""

import json
import os
import re
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLES = os.path.join(HERE, "..", "..", "sample-traces")
FILES = [
    "jax_rocm_conv_8gpu.xplane.pb",
    "jax_rocm_te_fused_attn.xplane.pb",
    "jax_cpu_transformer.xplane.pb",
    "jax_cpu_stall.xplane.pb",
]


def varint(b, i):
    r = s = 0
    while True:
        x = b[i]
        i += 1
        r |= (x & 0x7F) << s
        s += 7
        if x < 0x80:
            return r, i


def fields(b):
    i = 0
    while i < len(b):
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
            raise ValueError(f"wire type {w}")
        yield f, w, v


def signed(v):
    return v - (1 << 64) if v >= 1 << 63 else v


def stat(b, names):
    """(name, value) of an XStat; a ref value is resolved to the name it refers to."""
    mid, val = None, None
    for f, _, v in fields(b):
        if f == 1:
            mid = v
        elif f == 2:
            val = struct.unpack("<d", v)[0]
        elif f == 3:
            val = v
        elif f == 4:
            val = signed(v)
        elif f in (5, 6):
            val = bytes(v).decode("utf-8", "replace")
        elif f == 7:
            val = names.get(v, "")
    return names.get(mid, ""), val


def map_entry(b):
    key, val = None, None
    for f, _, v in fields(b):
        if f == 1:
            key = v
        elif f == 2:
            val = v
    return key, val


def plane(b):
    name, lines, ev_md, st_md = "", [], {}, {}
    for f, _, v in fields(b):
        if f == 2:
            name = bytes(v).decode()
        elif f == 3:
            lines.append(v)
        elif f == 4:
            k, m = map_entry(v)
            ev_md[k] = m
        elif f == 5:
            k, m = map_entry(v)
            for g, _, x in fields(m):
                if g == 2:
                    st_md[k] = bytes(x).decode()
    events_md = {}
    for k, m in ev_md.items():
        nm, disp, sts = "", "", []
        for g, _, x in fields(m):
            if g == 2:
                nm = bytes(x).decode("utf-8", "replace")
            elif g == 4:
                disp = bytes(x).decode("utf-8", "replace")
            elif g == 5:
                sts.append(stat(x, st_md))
        events_md[k] = (nm or disp, sts)
    out = []
    for lb in lines:
        lname, disp, ts, evs = "", "", 0, []
        for f, _, v in fields(lb):
            if f == 2:
                lname = bytes(v).decode()
            elif f == 11:
                disp = bytes(v).decode()
            elif f == 3:
                ts = signed(v)
            elif f == 4:
                evs.append(v)
        events = []
        for eb in evs:
            mid, off, dur, sts, agg = 0, 0, 0, [], False
            for f, _, v in fields(eb):
                if f == 1:
                    mid = v
                elif f == 2:
                    off = signed(v)
                elif f == 3:
                    dur = signed(v)
                elif f == 5:
                    agg = True
                elif f == 4:
                    sts.append(stat(v, st_md))
            if agg:
                continue
            nm, shared = events_md.get(mid, (f"event {mid}", []))
            start_ps = ts * 1000 + off
            events.append(
                {"name": nm, "start": start_ps // 1000, "end": (start_ps + max(dur, 0)) // 1000, "stats": dict(shared + sts)}
            )
        out.append((disp or lname, events))
    return name, out


def union_total(iv):
    tot, cur_s, cur_e = 0, None, None
    for s, e in sorted(iv):
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                tot += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    if cur_e is not None:
        tot += cur_e - cur_s
    return tot


def overlap(iv, a, b):
    """Length of the union of `iv` inside [a, b)."""
    return union_total([(max(s, a), min(e, b)) for s, e in iv if min(e, b) > max(s, a)])


def expect(path):
    data = open(path, "rb").read()
    gpus, host_lines = {}, []
    for f, _, v in fields(data):
        if f != 1:
            continue
        name, lines = plane(v)
        m = re.fullmatch(r"/device:GPU:(\d+)", name)
        if m:
            d = int(m.group(1))
            g = gpus.setdefault(
                d, {"device": d, "kernels": 0, "memcpy": 0, "intervals": [], "corr": [], "streams": [], "costed": []}
            )
            for lname, events in lines:
                if not lname.startswith("Stream #") or not events:
                    continue
                g["streams"].append(int(re.match(r"Stream #(\d+)", lname).group(1)))
                for e in events:
                    if e["name"].startswith("Memcpy") or "memcpy_details" in e["stats"]:
                        g["memcpy"] += 1
                    elif not e["name"].startswith("Memset"):
                        g["kernels"] += 1
                    g["intervals"].append((e["start"], e["end"]))
                    if e["stats"].get("correlation_id"):
                        g["corr"].append(int(e["stats"]["correlation_id"]))
                    st = e["stats"]
                    costs = [st.get(k) for k in ("flops", "bytes_accessed")]
                    if any(isinstance(c, (int, float)) and c >= 0 for c in costs):
                        g["costed"].append((st.get("hlo_op") or e["name"], costs, e["end"] - e["start"]))
        elif name == "/host:CPU":
            host_lines = lines
    busy_all = [iv for g in gpus.values() for iv in g["intervals"]]
    steps, xla_ops, sleeps = [], 0, []
    host_corr = set()
    for lname, events in host_lines:
        for e in events:
            c = e["stats"].get("correlation_id")
            if c:
                host_corr.add(int(c))
            if "step_num" in e["stats"] and e["end"] > e["start"]:
                steps.append((e["start"], e["end"], f"{e['name']} {int(e['stats']['step_num'])}"))
            if "hlo_op" in e["stats"] and "correlation_id" not in e["stats"]:
                xla_ops += 1
            if re.search(r"\bsleep\b", e["name"]):
                sleeps.append(e["end"] - e["start"])
    steps.sort()
    # each piece of device work whose launch the host recorded is linked to it
    launches = sum(1 for g in gpus.values() for c in g["corr"] if c in host_corr)
    used = [g for g in gpus.values() if g["intervals"]]
    costed_ops = {}
    for g in gpus.values():
        for op, costs, dur in g["costed"]:
            o = costed_ops.setdefault(op, {"count": 0, "flops": 0, "bytes": 0, "gpu_ns": 0})
            o["count"] += 1
            o["flops"] += costs[0] if isinstance(costs[0], (int, float)) and costs[0] >= 0 else 0
            o["bytes"] += costs[1] if isinstance(costs[1], (int, float)) and costs[1] >= 0 else 0
            o["gpu_ns"] += dur
    return {
        "gpus": [
            {
                "device": g["device"],
                "kernels": g["kernels"],
                "memcpy": g["memcpy"],
                "busy_ns": union_total(g["intervals"]),
                "streams": sorted(g["streams"]),
            }
            for g in sorted(used, key=lambda g: g["device"])
        ],
        "linked_launches": launches,
        "steps": [
            {"name": n, "start_ns": s, "dur_ns": e - s, "gpu_idle_ns": (e - s) - overlap(busy_all, s, e)}
            for s, e, n in steps
        ],
        "host_xla_ops": xla_ops,
        "longest_sleep_ns": max(sleeps) if sleeps else None,
        "xla_ops": costed_ops,
    }


def main():
    for f in FILES:
        stem = f[: -len(".xplane.pb")]
        out = os.path.join(HERE, f"{stem}.xspace.json")
        with open(out, "w") as fp:
            json.dump(expect(os.path.join(SAMPLES, f)), fp, indent=1)
            fp.write("\n")
        print(out)


if __name__ == "__main__":
    main()
