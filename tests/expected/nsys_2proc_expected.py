#!/usr/bin/env python3
"""Independent oracle for sample-traces/nsys_ddp_2proc.sqlite: one rank per
process of the report (pid order: both share GPU 0), each rank's NVTX steps `step_N` that lie
inside its own cudaProfilerStart..Stop, and the step anomalies by docs/ranks.md's rule
(modified z = 0.6745 (dur - median) / max(MAD, median // 100, 1) >= 3.5, >= 5 steps; median
of an even count = floor of the mean of the middle two). Stdlib only.

usage: nsys_2proc_expected.py EXPORT.sqlite > nsys_ddp_2proc.json
"""
import json
import re
import sqlite3
import sys


def median(v):
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) // 2


def main(path):
    c = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    s = dict(c.execute("SELECT id, value FROM StringIds"))
    pid = lambda gtid: (gtid >> 24) & 0xFFFFFF
    capture = {}
    for start, end, name, g in c.execute("SELECT start, end, nameId, globalTid FROM CUPTI_ACTIVITY_KIND_RUNTIME"):
        n = s.get(name, "")
        if n.startswith("cudaProfilerStart"):
            capture.setdefault(pid(g), [None, None])[0] = start
        elif n.startswith("cudaProfilerStop"):
            capture.setdefault(pid(g), [None, None])[1] = end
    ranks = []
    for p in sorted({pid(g) for (g,) in c.execute("SELECT DISTINCT globalPid FROM CUPTI_ACTIVITY_KIND_KERNEL")}):
        a, b = capture.get(p, [None, None])
        steps = []
        for st, en, text, tid, g in c.execute("SELECT start, end, text, textId, globalTid FROM NVTX_EVENTS WHERE end IS NOT NULL"):
            name = text if text is not None else s.get(tid)
            if pid(g) == p and name and re.fullmatch(r"step_\d+", name) and (a is None or st >= a) and (b is None or en <= b):
                steps.append({"name": name, "start_ns": st, "dur_ns": en - st})
        steps.sort(key=lambda x: x["start_ns"])
        durs = [x["dur_ns"] for x in steps]
        m = median(durs)
        mad = median([abs(d - m) for d in durs])
        scale = max(mad, m // 100, 1)
        outliers = [x["name"] for x in steps if len(steps) >= 5 and 0.6745 * (x["dur_ns"] - m) / scale >= 3.5]
        ranks.append({"pid": p, "steps": steps, "typical_ns": m, "outliers": outliers})
    json.dump({"ranks": ranks}, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main(sys.argv[1])
