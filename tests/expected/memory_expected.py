#!/usr/bin/env python3
"""Independent oracle for `strobe report <snapshot.pickle> --json`.

Reads a torch.cuda.memory._dump_snapshot pickle with the standard library's pickle module and an
Unpickler that refuses every global (snapshots are plain data), and computes the figures by the
definitions of docs/memory.md, written out here from scratch:

  reserved = sum(segment.total_size); allocated = sum(size of active_allocated blocks);
  awaiting free = sum(size of active_awaiting_free / active_pending_free blocks);
  inactive = sum(size of inactive blocks); fragmentation = 1 - largest_inactive / inactive over
  the blocks of the default pool only (segment_pool_id (0, 0), or absent in older layouts): the
  caching allocator hands an ordinary allocation only blocks of that pool, so inactive bytes of a
  CUDA graph pool or a MemPool are held by that pool, not fragmentation.
  Pools: per (segment_pool_id, stream), in the order default pool first, then by id and stream:
  segments, reserved, allocated, awaiting free, inactive, largest inactive block;
  pool_held_inactive_bytes = inactive bytes of segments outside the default pool.
  rounding waste = sum(size - requested_size) over active_allocated blocks.
  Replay (docs/architecture.md units): allocated in requested bytes (alloc +, free_completed -),
  anchored so it ends at sum(requested_size or size) of non-inactive blocks; reserved
  (segment_alloc/map +, segment_free/unmap -) anchored at sum(total_size). Peaks include the
  state before entry 0.
  Allocator state at entry k (the state after k entries; an OOM entry's state is the one before
  it): start from the final segments and blocks and undo entries n-1 .. k: alloc removes the block
  at addr; free_completed puts back a block of the entry's size at addr; segment_alloc removes the
  segment at addr; segment_free puts back one of the entry's size and stream; segment_map removes
  the mapped range, segment_unmap puts it back (expandable: adjacent mapped ranges of one stream
  form one region). Free memory = each region minus the occupied (not inactive) blocks in it; the
  largest free block and the free bytes per stream count the default pool's regions only (free
  bytes of other pools' regions are held for them: pool_held_free_bytes). Trace entries carry no
  pool: a segment put back from the trace is the default pool's.
  OOM verdicts: process_limit if device_free >= request; real_shortage if allocated + request >
  reserved + device_free; fragmentation if the free memory in regions of the OOM's stream plus
  device_free could hold the request (it is there, in pieces); else cache_held (what is missing
  is held free by other streams' segments).
  Older layouts, read as memory_viz reads them (torch/cuda/_memory_viz.py `_read` and
  `_block_extra_legacy`, torch/utils/viz/MemoryViz.js `annotate_snapshot`): a bare list is the
  segments alone (no trace); a block's address is its segment's address plus the sizes of the
  blocks before it; a block without `frames` takes its requested size from `requested_size` if
  non-zero, else from history[0].real_size, else its size; a segment without `total_size` gives
  `size`, else the sum of its blocks.
  History window (a wrapped `max_entries` ring buffer, or recording begun mid-run): walking the
  trace, an address is open from its `alloc` to its `free_completed`; a `free_requested` of an
  address not open, or a `free_completed` of one neither open nor already counted by such a
  free_requested, frees a block the trace never allocated; a `segment_free` of an address no
  earlier `segment_alloc` of the trace opened frees an untraced segment. Any of them: the window
  is reported with the trace's length, last minus first time_us, the counts, the first such
  entry, and whether the length is 1, a power of two >= 1024, or d * 10**k >= 1000 (d < 10).

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
        data = PlainData(f).load()
    if isinstance(data, list):  # torch.cuda.memory_snapshot(): the segments alone
        data = {"segments": data}
    return data


def seg_size(s):
    if "total_size" in s:
        return s["total_size"]
    if "size" in s:
        return s["size"]
    return sum(b["size"] for b in s.get("blocks", []))


def requested(b):
    if "frames" in b:
        return b["requested_size"] if "requested_size" in b else b["size"]
    if b.get("requested_size"):
        return b["requested_size"]
    if b.get("history"):
        return b["history"][0]["real_size"]
    return b["size"]


def pool_of(seg):
    return tuple(seg.get("segment_pool_id", (0, 0)))


def pool_figures(segs):
    out = {}
    for s in segs:
        key = (pool_of(s), s.get("stream", 0))
        p = out.setdefault(key, {"pool": list(key[0]), "stream": key[1], "segments": 0, "reserved_bytes": 0,
                                 "allocated_bytes": 0, "active_awaiting_free_bytes": 0, "inactive_bytes": 0,
                                 "largest_inactive_block": 0})
        p["segments"] += 1
        p["reserved_bytes"] += seg_size(s)
        for b in s.get("blocks", []):
            if b["state"] == "active_allocated":
                p["allocated_bytes"] += b["size"]
            elif b["state"] in ("active_awaiting_free", "active_pending_free"):
                p["active_awaiting_free_bytes"] += b["size"]
            elif b["state"] == "inactive":
                p["inactive_bytes"] += b["size"]
                p["largest_inactive_block"] = max(p["largest_inactive_block"], b["size"])
    return [out[k] for k in sorted(out, key=lambda k: (k[0] != (0, 0), k[0], k[1]))]


def round_length(n):
    if n == 1 or (n >= 1024 and n & (n - 1) == 0):
        return True
    m = n
    while m >= 10 and m % 10 == 0:
        m //= 10
    return n >= 1000 and m < 10


def history_window(trace):
    open_blocks, pending, segs = set(), set(), set()
    blocks = seg_frees = 0
    first = None
    for i, e in enumerate(trace):
        act, addr = e["action"], e.get("addr", 0)
        untraced = False
        if act == "alloc":
            open_blocks.add(addr)
        elif act == "free_requested":
            if addr not in open_blocks and addr not in pending:
                pending.add(addr)
                untraced = True
        elif act == "free_completed":
            if addr in open_blocks:
                open_blocks.discard(addr)
            elif addr in pending:
                pending.discard(addr)
            else:
                untraced = True
        elif act == "segment_alloc":
            segs.add(addr)
        elif act == "segment_free":
            if addr in segs:
                segs.discard(addr)
            else:
                seg_frees += 1
                first = i if first is None else first
        if untraced:
            blocks += 1
            first = i if first is None else first
    if first is None:
        return None
    times = [e["time_us"] for e in trace if e.get("time_us") is not None]
    return {"entries": len(trace), "duration_us": times[-1] - times[0] if times else None,
            "untraced_block_frees": blocks, "untraced_segment_frees": seg_frees,
            "first_untraced_entry": first, "full_ring_buffer": round_length(len(trace))}




def state_at(snap, dev, k):
    """Segments and occupied blocks after k entries of dev's trace (see the docstring)."""
    traces = snap.get("device_traces") or []
    trace = traces[dev] if dev < len(traces) else []
    segs = {}  # start -> [end, stream, expandable, pool]
    occupied = {}  # addr -> size
    for s in snap["segments"]:
        if s.get("device", 0) != dev:
            continue
        segs[s["address"]] = [s["address"] + seg_size(s), s.get("stream", 0), bool(s.get("is_expandable", False)),
                              pool_of(s)]
        a = s["address"]
        for b in s.get("blocks", []):
            if b["state"] != "inactive":
                occupied[a] = b["size"]
            a += b["size"]

    def cut(lo, hi):
        for start in [x for x in segs if x < hi and segs[x][0] > lo]:
            end, stream, exp, pool = segs.pop(start)
            if start < lo:
                segs[start] = [lo, stream, exp, pool]
            if end > hi:
                segs[hi] = [end, stream, exp, pool]

    for e in reversed(trace[k:]):
        act, addr, size = e["action"], e.get("addr", 0), e.get("size", 0)
        if act == "alloc":
            occupied.pop(addr, None)
        elif act == "free_completed":
            occupied[addr] = size
        elif act == "segment_alloc":
            segs.pop(addr, None)
        elif act == "segment_free":
            segs[addr] = [addr + size, e["stream"], False, (0, 0)]
        elif act == "segment_map":
            cut(addr, addr + size)
        elif act == "segment_unmap":
            segs[addr] = [addr + size, e["stream"], True, (0, 0)]
    # regions: adjacent expandable ranges of one stream and pool join
    regions = []
    for start in sorted(segs):
        end, stream, exp, pool = segs[start]
        if (regions and exp and regions[-1][3] and regions[-1][1] == start and regions[-1][2] == stream
                and regions[-1][4] == pool):
            regions[-1][1] = end
        else:
            regions.append([start, end, stream, exp, pool])
    addrs = sorted(occupied)
    import bisect
    largest, by_stream, held = 0, {}, 0
    for start, end, stream, _, pool in regions:
        i = bisect.bisect_left(addrs, start)
        cur = start
        gaps = []
        while i < len(addrs) and addrs[i] < end:
            if addrs[i] > cur:
                gaps.append(addrs[i] - cur)
            cur = max(cur, addrs[i] + occupied[addrs[i]])
            i += 1
        if end > cur:
            gaps.append(end - cur)
        if pool != (0, 0):
            held += sum(gaps)
            continue
        for gap in gaps:
            largest = max(largest, gap)
            by_stream[stream] = by_stream.get(stream, 0) + gap
    return {
        "regions": len(regions),
        "reserved_bytes": sum(r[1] - r[0] for r in regions),
        "occupied_blocks": len(occupied),
        "occupied_bytes": sum(occupied.values()),
        "largest_free_block": largest,
        "free_by_stream": by_stream,
        "pool_held_free_bytes": held,
    }


def device_figures(snap, dev):
    segs = [s for s in snap["segments"] if s.get("device", 0) == dev]
    traces = snap.get("device_traces") or []
    trace = traces[dev] if dev < len(traces) else []
    blocks = [(s, b) for s in segs for b in s.get("blocks", [])]
    req = requested
    allocated = sum(b["size"] for _, b in blocks if b["state"] == "active_allocated")
    awaiting = sum(b["size"] for _, b in blocks if b["state"] in ("active_awaiting_free", "active_pending_free"))
    inactive_sizes = [b["size"] for _, b in blocks if b["state"] == "inactive"]
    inactive = sum(inactive_sizes)
    largest = max(inactive_sizes, default=0)
    default_free = [b["size"] for s, b in blocks if b["state"] == "inactive" and pool_of(s) == (0, 0)]
    pools = pool_figures(segs)
    waste = sum(b["size"] - req(b) for _, b in blocks if b["state"] == "active_allocated")
    reserved = sum(seg_size(s) for s in segs)

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
        st = state_at(snap, dev, i)
        lf, ss = st["largest_free_block"], st["free_by_stream"].get(e["stream"], 0)
        if free >= request:
            v = "process_limit"
        elif a + request > r + free:
            v = "real_shortage"
        elif ss + free >= request:
            v = "fragmentation"
        else:
            v = "cache_held"
        ooms.append({"entry": i, "requested_bytes": request, "device_free_bytes": free, "verdict": v,
                     "allocated_bytes": a, "reserved_bytes": r, "largest_free_block": lf,
                     "same_stream_free_bytes": ss, "pool_held_free_bytes": st["pool_held_free_bytes"]})
    history = {str(k): state_at(snap, dev, k) for k in sorted({0, len(trace) // 2, len(trace)})}
    # Allocations as the active-memory timeline has them: every alloc entry, every free of an
    # address the trace never allocated (made before its first entry), and every final
    # allocated or awaiting-free block the trace leaves without an open allocation.
    open_addrs, before = set(), 0
    for e in trace:
        if e["action"] == "alloc":
            open_addrs.add(e.get("addr", 0))
        elif e["action"] == "free_completed":
            if e.get("addr", 0) in open_addrs:
                open_addrs.discard(e.get("addr", 0))
            else:
                before += 1
    forever = 0
    for s in segs:
        a = s["address"]
        for b in s.get("blocks", []):
            if b["state"] != "inactive" and a not in open_addrs:
                forever += 1
            a += b["size"]
    allocations = sum(1 for e in trace if e["action"] == "alloc") + before + forever
    return {
        "history_window": history_window(trace),
        "history": history, "allocations": allocations, "device": dev, "segments": len(segs), "blocks": len(blocks), "reserved_bytes": reserved,
        "allocated_bytes": allocated, "active_awaiting_free_bytes": awaiting, "inactive_bytes": inactive,
        "largest_inactive_block": largest,
        "fragmentation": (1 - max(default_free) / sum(default_free)) if sum(default_free) else 0.0,
        "pools": pools,
        "pool_held_inactive_bytes": sum(p["inactive_bytes"] for p in pools if p["pool"] != [0, 0]),
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
