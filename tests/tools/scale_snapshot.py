#!/usr/bin/env python3
"""Scales a real memory snapshot N times for benchmarks: every device trace is repeated N times
with addresses shifted per copy (frames stay shared, so the memo structure stays realistic).

Usage: scale_snapshot.py IN.pickle OUT.pickle N
"""
import pickle, sys


class PlainData(pickle.Unpickler):
    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"refusing global {module}.{name}")


def main(src, dst, n):
    with open(src, "rb") as f:
        snap = PlainData(f).load()
    shift = 1 << 44
    traces = []
    for t in snap.get("device_traces") or []:
        out = []
        for k in range(n):
            for e in t:
                e = dict(e)
                if e["action"] == "oom" and k < n - 1:
                    continue
                e["addr"] = e.get("addr", 0) + k * shift
                if "time_us" in e:
                    e["time_us"] += k * 10_000_000
                out.append(e)
        traces.append(out)
    snap["device_traces"] = traces
    with open(dst, "wb") as f:
        pickle.dump(snap, f, protocol=4)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
