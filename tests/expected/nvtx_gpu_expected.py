#!/usr/bin/env python3
"""Independent oracle for the NVTX / record_function GPU projection of a Kineto
trace. Stdlib only. A CPU range (cat user_annotation) of process P covers the GPU events
(cat kernel, gpu_memcpy, gpu_memset) whose launching runtime/driver call (same
args.correlation) is on any thread of P and starts inside the range (start <= ts <= end).
Per range and device: first start, last end, the union of those events, their count.
Times in ns as the trace's µs values rounded half-even (kineto_expected.py's rule).

usage: nvtx_gpu_expected.py TRACE.json[.gz] NAME... > out.json (ranges named NAME only)
"""
import gzip
import json
import sys
from decimal import Decimal, ROUND_HALF_EVEN


def ns(v):
    return int((Decimal(str(v)) * 1000).to_integral_value(rounding=ROUND_HALF_EVEN))


def main(path, names):
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt") as f:
        ev = json.load(f, parse_float=Decimal)["traceEvents"]
    gpu = {}
    for e in ev:
        if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"):
            c = (e.get("args") or {}).get("correlation")
            if c is not None:
                gpu.setdefault(c, []).append((ns(e["ts"]), ns(e["ts"]) + ns(e.get("dur", 0)), (e.get("args") or {}).get("device", e.get("pid"))))
    launches = []
    for e in ev:
        if e.get("ph") == "X" and e.get("cat") in ("cuda_runtime", "cuda_driver"):
            c = (e.get("args") or {}).get("correlation")
            if c in gpu:
                launches.append((e["pid"], ns(e["ts"]), c))
    out = []
    for e in ev:
        if e.get("ph") == "X" and e.get("cat") == "user_annotation" and e.get("name") in names:
            s = ns(e["ts"])
            t = s + ns(e.get("dur", 0))
            per = {}
            for pid, ts, c in launches:
                if pid == e["pid"] and s <= ts <= t:
                    for a, b, d in gpu[c]:
                        per.setdefault(d, []).append((a, b))
            for d, ivs in sorted(per.items()):
                ivs.sort()
                busy, cur = 0, None
                for a, b in ivs:
                    if cur is None or a > cur[1]:
                        if cur:
                            busy += cur[1] - cur[0]
                        cur = [a, b]
                    else:
                        cur[1] = max(cur[1], b)
                busy += cur[1] - cur[0]
                out.append({"name": e["name"], "cpu_start_ns": s, "device": d, "start_ns": min(i[0] for i in ivs),
                            "end_ns": max(i[1] for i in ivs), "gpu_ns": busy, "gpu_spans": len(ivs)})
    out.sort(key=lambda r: (r["device"], r["cpu_start_ns"]))
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main(sys.argv[1], set(sys.argv[2:]))
