#!/usr/bin/env python3
"""Independent oracle for weighing ncu kernels against a trace's steps (stdlib only): per
kernel name of a Kineto trace, its GPU time and calls per step, and the mean step.

Usage: python3 tests/expected/ncu_gain_expected.py sample-traces/gpt_train.json.gz > tests/expected/gpt_train.kernel_per_step.json

Rules (from the Kineto trace format, not from the Rust code): steps = the `ProfilerStep#N`
ranges (cat user_annotation, ph X); a kernel (cat kernel) counts for a step when its start
(ts) is at or after the step's start and before its end; per name: summed dur of counted
kernels / number of steps, and counted kernels / number of steps; step = mean step dur.
Times in ns (the trace's µs x 1000).
"""
import gzip
import json
import sys


def main(path):
    d = json.load(gzip.open(path) if path.endswith(".gz") else open(path))
    ev = d["traceEvents"] if isinstance(d, dict) else d
    steps = [(e["ts"] * 1e3, (e["ts"] + e["dur"]) * 1e3) for e in ev
             if e.get("cat") == "user_annotation" and str(e.get("name", "")).startswith("ProfilerStep#")]
    n = len(steps)
    per = {}
    for e in ev:
        if e.get("cat") != "kernel" or e.get("ph") != "X":
            continue
        t = e["ts"] * 1e3
        if any(a <= t < b for a, b in steps):
            s = per.setdefault(e["name"], [0.0, 0])
            s[0] += e["dur"] * 1e3
            s[1] += 1
    out = {
        "steps": n,
        "step_ns": sum(b - a for a, b in steps) / n,
        "kernels": {k: {"ns_per_step": v[0] / n, "calls_per_step": v[1] / n} for k, v in sorted(per.items())},
    }
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv[1])
