#!/usr/bin/env python3
"""Scales a real memory snapshot N times for benchmarks: every device trace is repeated N times,
like a long run of the same steps.

Copies reuse the original addresses. Each copy but the last is closed after itself: what it
allocated and never freed is freed (free_requested + free_completed), so the next copy's
allocations find their addresses free. Segments stay reserved, as a caching allocator keeps them
in steady state: copies after the first leave out the segment entries. So the last copy ends at
the snapshot's own final segments and blocks and the replay stays consistent (allocated never
goes below zero, the stack of allocations equals the replayed bytes, reserved stays flat after
the first copy). Frames stay shared, so the memo structure stays realistic.

Usage: scale_snapshot.py IN.pickle OUT.pickle N
"""
import pickle, sys


class PlainData(pickle.Unpickler):
    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"refusing global {module}.{name}")


def closing_entries(copy):
    """free_requested + free_completed for what `copy` allocated and never freed."""
    blocks = {}
    for e in copy:
        a, act = e.get("addr", 0), e["action"]
        if act == "alloc":
            blocks[a] = e
        elif act == "free_completed":
            blocks.pop(a, None)
    out = []
    for e in blocks.values():
        for act in ("free_requested", "free_completed"):
            x = dict(e)
            x["action"] = act
            out.append(x)
    return out


SEGMENT_ACTIONS = {"segment_alloc", "segment_free", "segment_map", "segment_unmap"}


def main(src, dst, n):
    with open(src, "rb") as f:
        snap = PlainData(f).load()
    traces = []
    for t in snap.get("device_traces") or []:
        out = []
        for k in range(n):
            copy = []
            for e in t:
                e = dict(e)
                if e["action"] == "oom" and k < n - 1:
                    continue
                if e["action"] in SEGMENT_ACTIONS and k > 0:
                    continue
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
