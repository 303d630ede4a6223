#!/usr/bin/env python3
"""Scales a real memory snapshot N times for benchmarks: every device trace is repeated N times.

Copy k lives at its own addresses (shifted by (N-1-k) * 2^40, so the last copy keeps the original
addresses and ends at the snapshot's own final segments and blocks), and each copy but the last
is closed after itself: what it allocated and never freed is freed (free_requested +
free_completed), what segments it created and never released are released. So every copy starts
from the state the original started from, the replay stays consistent (allocated never goes
below zero, the stack of allocations equals the replayed bytes) and the scaled trace looks like a
long run of the same steps. Frames stay shared, so the memo structure stays realistic.

Usage: scale_snapshot.py IN.pickle OUT.pickle N
"""
import pickle, sys


class PlainData(pickle.Unpickler):
    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"refusing global {module}.{name}")


def closing_entries(copy):
    """Entries that undo what `copy` left allocated or reserved at its end."""
    blocks, segs = {}, {}
    for e in copy:
        a, act = e.get("addr", 0), e["action"]
        if act == "alloc":
            blocks[a] = e
        elif act == "free_completed":
            blocks.pop(a, None)
        elif act in ("segment_alloc", "segment_map"):
            segs[a] = e
        elif act in ("segment_free", "segment_unmap"):
            segs.pop(a, None)
    out = []
    for e in blocks.values():
        for act in ("free_requested", "free_completed"):
            x = dict(e)
            x["action"] = act
            out.append(x)
    for e in segs.values():
        x = dict(e)
        x["action"] = "segment_free" if e["action"] == "segment_alloc" else "segment_unmap"
        out.append(x)
    return out


def main(src, dst, n):
    with open(src, "rb") as f:
        snap = PlainData(f).load()
    shift = 1 << 40
    traces = []
    for t in snap.get("device_traces") or []:
        out = []
        for k in range(n):
            copy = []
            for e in t:
                e = dict(e)
                if e["action"] == "oom" and k < n - 1:
                    continue
                if "addr" in e or e["action"] != "oom":
                    e["addr"] = e.get("addr", 0) + (n - 1 - k) * shift
                if "time_us" in e:
                    e["time_us"] += (k - (n - 1)) * 10_000_000
                copy.append(e)
            out.extend(copy)
            if k < n - 1:
                out.extend(closing_entries(copy))
        traces.append(out)
    snap["device_traces"] = traces
    with open(dst, "wb") as f:
        pickle.dump(snap, f, protocol=4)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
