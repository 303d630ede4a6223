#!/usr/bin/env python3
"""Independent oracle for `strobe report <snapshot.pickle> --json` (issue #5).

Reads a torch.cuda.memory._dump_snapshot pickle with the standard library's pickle module and an
Unpickler that refuses every global (snapshots are plain data), and computes the figures by the
issue's definitions, written out here from scratch:

  reserved = sum(segment.total_size); allocated = sum(size of active_allocated blocks);
  awaiting free = sum(size of active_awaiting_free / active_pending_free blocks);
  inactive = sum(size of inactive blocks); fragmentation = 1 - largest_inactive / inactive;
  rounding waste = sum(size - requested_size) over active_allocated blocks.
  Replay (DESIGN.md units): allocated in requested bytes (alloc +, free_completed -), anchored so
  it ends at sum(requested_size or size) of non-inactive blocks; reserved (segment_alloc/map +,
  segment_free/unmap -) anchored at sum(total_size). Peaks include the state before entry 0.
  OOM verdicts: process_limit if device_free >= request; real_shortage if allocated + request >
  reserved + device_free; else from the final blocks when nothing changes the allocator after the
  OOM (largest free block >= request -> cache_held; free on the OOM's stream >= request ->
  fragmentation; cached free >= request -> cache_held; else fragmentation), else fragmentation.

Usage: memory_expected.py SNAPSHOT.pickle > STEM.memory.json
"""
import gzip, json, pickle, sys


class PlainData(pickle.Unpickler):
    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"refusing global {module}.{name}")


def load(path):
    with open(path, "rb") as f:
        head = f.read(2)
    opener = gzip.open if head == b"\x1f\x8b" else open
    with opener(path, "rb") as f:
        return PlainData(f).load()


CHANGES = {"alloc", "free_completed", "segment_alloc", "segment_free", "segment_map", "segment_unmap"}


def device_figures(snap, dev):
    segs = [s for s in snap["segments"] if s.get("device", 0) == dev]
    traces = snap.get("device_traces") or []
    trace = traces[dev] if dev < len(traces) else []
    blocks = [(s, b) for s in segs for b in s.get("blocks", [])]
    req = lambda b: b["requested_size"] if "requested_size" in b else b["size"]
    allocated = sum(b["size"] for _, b in blocks if b["state"] == "active_allocated")
    awaiting = sum(b["size"] for _, b in blocks if b["state"] in ("active_awaiting_free", "active_pending_free"))
    inactive_sizes = [b["size"] for _, b in blocks if b["state"] == "inactive"]
    inactive = sum(inactive_sizes)
    largest = max(inactive_sizes, default=0)
    waste = sum(b["size"] - req(b) for _, b in blocks if b["state"] == "active_allocated")
    reserved = sum(s["total_size"] for s in segs)

    final_alloc = sum(req(b) for _, b in blocks if b["state"] != "inactive")
    a_delta = {"alloc": 1, "free_completed": -1}
    r_delta = {"segment_alloc": 1, "segment_map": 1, "segment_free": -1, "segment_unmap": -1}
    a = final_alloc - sum(a_delta.get(e["action"], 0) * e["size"] for e in trace)
    r = reserved - sum(r_delta.get(e["action"], 0) * e["size"] for e in trace)
    peak_a, peak_r = a, r
    ooms = []
    for i, e in enumerate(trace):
        a += a_delta.get(e["action"], 0) * e["size"]
        r += r_delta.get(e["action"], 0) * e["size"]
        peak_a, peak_r = max(peak_a, a), max(peak_r, r)
        if e["action"] != "oom":
            continue
        request, free = e["size"], e.get("device_free", 0)
        known = not any(x["action"] in CHANGES for x in trace[i + 1:])
        cached = r - a
        if known:
            free_blocks = [(s["stream"], b["size"]) for s, b in blocks if b["state"] == "inactive"]
            lf = max((sz for _, sz in free_blocks), default=0)
            ss = sum(sz for st, sz in free_blocks if st == e["stream"])
        else:
            lf = ss = None
        if free >= request:
            v = "process_limit"
        elif a + request > r + free:
            v = "real_shortage"
        elif known and lf >= request:
            v = "cache_held"
        elif known and ss >= request:
            v = "fragmentation"
        elif known and cached >= request:
            v = "cache_held"
        else:
            v = "fragmentation"
        ooms.append({"entry": i, "requested_bytes": request, "device_free_bytes": free, "verdict": v,
                     "allocated_bytes": a, "reserved_bytes": r, "largest_free_block": lf,
                     "same_stream_free_bytes": ss})
    return {
        "device": dev, "segments": len(segs), "blocks": len(blocks), "reserved_bytes": reserved,
        "allocated_bytes": allocated, "active_awaiting_free_bytes": awaiting, "inactive_bytes": inactive,
        "largest_inactive_block": largest, "fragmentation": (1 - largest / inactive) if inactive else 0.0,
        "rounding_waste_bytes": waste, "trace_entries": len(trace), "peak_allocated_bytes": peak_a,
        "peak_reserved_bytes": peak_r, "ooms": ooms,
    }


def main(path):
    snap = load(path)
    traces = snap.get("device_traces") or []
    devs = sorted({s.get("device", 0) for s in snap["segments"]} | {i for i, t in enumerate(traces) if t})
    out = {"format": "memory_snapshot", "devices": [device_figures(snap, d) for d in devs]}
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    print()


if __name__ == "__main__":
    main(sys.argv[1])
