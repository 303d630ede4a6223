#!/usr/bin/env python3
"""Independent oracle for steps and step anomalies of an Nsight Systems export.

Stdlib only (sqlite3), sharing no code with the Rust crates.  Definitions (docs/ranks.md):
- Steps: NVTX ranges (rows of NVTX_EVENTS with an end) whose text reads as an iteration:
  re `^(train(ing)?[ _\\-#:.=]*)?(iteration|iter|step)([ _\\-#:.=]*\\d+)?$` (any case) or
  `ProfilerStep#N`; ranges inside another such range dropped; sorted by start.
- Kernels of a step: kernels whose launching runtime call (same globalPid process and
  correlationId) starts inside the step's range.
- Anomalies: modified z = 0.6745 (dur - median) / max(MAD, median // 100, 1), flagged >= 3.5,
  needs >= 5 steps; median of an even count = floor of the mean of the middle two.

usage: steps_expected.py EXPORT.sqlite > X.steps.json
"""
import json
import re
import sqlite3
import sys

IT = re.compile(r"^(train(ing)?[ _\-#:.=]*)?(iteration|iter|step)([ _\-#:.=]*\d+)?$", re.I)
PS = re.compile(r"^ProfilerStep#\d+$")


def median(v):
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) // 2


def main(path):
    c = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    strings = dict(c.execute("SELECT id, value FROM StringIds"))
    rows = []
    for s, e, text, tid in c.execute("SELECT start, end, text, textId FROM NVTX_EVENTS WHERE end IS NOT NULL"):
        name = text if text is not None else strings.get(tid)
        if name and (IT.match(name.strip()) or PS.match(name)) and e > s:
            rows.append((s, e, name))
    rows.sort(key=lambda r: (r[0], -r[1]))
    steps, reach = [], None
    for s, e, n in rows:
        if reach is not None and e <= reach:
            continue
        reach = e
        steps.append({"name": n, "start_ns": s, "dur_ns": e - s})
    launch = {}
    for gp, corr, s in c.execute("SELECT globalTid >> 24, correlationId, start FROM CUPTI_ACTIVITY_KIND_RUNTIME"):
        launch[(gp, corr)] = s
    per = [0] * len(steps)
    for gp, corr in c.execute("SELECT globalPid >> 24, correlationId FROM CUPTI_ACTIVITY_KIND_KERNEL"):
        t = launch.get((gp, corr))
        for i, st in enumerate(steps):
            if t is not None and st["start_ns"] <= t < st["start_ns"] + st["dur_ns"]:
                per[i] += 1
    for st, k in zip(steps, per):
        st["kernels"] = k
    durs = [s["dur_ns"] for s in steps]
    anomalies = []
    if len(durs) >= 5:
        m = median(durs)
        mad = max(median([abs(d - m) for d in durs]), m // 100, 1)
        for s in steps:
            z = 0.6745 * (s["dur_ns"] - m) / mad
            if z >= 3.5:
                anomalies.append({"step": s["name"], "dur_ns": s["dur_ns"], "typical_ns": m, "score": z})
    return {"steps": steps, "step_anomalies": anomalies}


if __name__ == "__main__":
    json.dump(main(sys.argv[1]), sys.stdout, indent=1)
    sys.stdout.write("\n")
