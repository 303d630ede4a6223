#!/usr/bin/env python3
"""Makes small memory snapshots in the layouts older torch releases wrote, and a wrapped ring
buffer cut from a real snapshot, into sample-traces/ (stdlib only: plain dicts, lists and ints).

Each layout mimics what torch's THCPModule_memorySnapshot (torch/csrc/cuda/Module.cpp) built in
that release, key for key, and how users saved it:

- mem_legacy_list.pickle (protocol 2): torch 1.8-1.12, `pickle.dump(torch.cuda.memory_snapshot())`.
  A bare list of segments {device, address, total_size, allocated_size, active_size, stream,
  segment_type, blocks}; blocks {size, state} with state active_allocated / active_pending_free /
  inactive. No block address, no requested_size, no frames, no trace.
- mem_legacy_history.pickle (protocol 4): torch 1.13 with `_record_memory_history(True)`, the same
  list whose blocks carry `history`: [{addr, real_size, frames: [{filename, name, line}]}], newest
  first (memory_viz reads history[0]: torch/cuda/_memory_viz.py `_block_extra_legacy`,
  torch/utils/viz/MemoryViz.js `annotate_snapshot`).
- mem_legacy_traces.pickle (protocol 2): torch 2.0 (`torch.cuda.memory._snapshot()` before blocks
  got address/requested_size/frames): {segments, device_traces}; trace entries {action, addr,
  size, stream, frames}, an `oom` entry with `device_free` instead of `addr`; no time_us, no
  allocator_settings.
- mem_cpp_line.pickle (protocol 4): the torch 2.1+ layout (blocks with address, requested_size
  and frames; segments with requested_size, is_expandable, segment_pool_id and frames; entries
  with time_us) of the same state, where a block's stack holds a C++ frame whose `line` is
  2**64 - 1 (size_t(-1), a 9-byte LONG1), as `context="all"` stacks of CUDA-graph and
  torch.compile programs carry.
- mem_train_wrapped.pickle (protocol 4, as `_dump_snapshot` writes): sample-traces/mem_train.pickle
  as `_record_memory_history(max_entries=2000)` would have left it: the ring buffer (c10
  CUDACachingAllocator alloc_trace, overwritten from the oldest once full, returned oldest first)
  holds the last 2000 entries; segments, blocks and annotations are the same final state.

Sizes follow the caching allocator: requests rounded up to 512 B, blocks carved from 2 MiB (small
pool, requests <= 1 MiB) or 20 MiB (large) segments, so every block tiles its segment.

Usage: make_legacy_snapshots.py   (from anywhere; writes into sample-traces/)
"""
import os, pickle

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "..", "sample-traces")
MiB = 1 << 20


class PlainData(pickle.Unpickler):
    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"refusing global {module}.{name}")


def frame(name, line, filename="/home/user/train.py"):
    return {"filename": filename, "name": name, "line": line}


# Shared stacks (torch caches one frames list per stack, so the pickle memoises them).
FWD = [frame("forward", 41), frame("train_step", 88), frame("<module>", 120)]
BWD = [frame("backward", 77, "/usr/lib/python3.10/site-packages/torch/_tensor.py"), frame("train_step", 91),
       frame("<module>", 120)]
OPT = [frame("step", 140, "/usr/lib/python3.10/site-packages/torch/optim/adam.py"), frame("train_step", 95),
       frame("<module>", 120)]
GRAPH = [frame("at::native::empty_cuda", 2 ** 64 - 1, "aten/src/ATen/native/cuda/EmptyTensor.cpp"),
         frame("replay", 230, "/usr/lib/python3.10/site-packages/torch/cuda/graphs.py")]

SEG_A, SEG_B, SEG_C = 0x7F3A40000000, 0x7F3A42000000, 0x7F3B00000000


def layout():
    """Final state: per segment, its blocks as (size, state, requested, stack) in address order."""
    return [
        # device 0, large segment of 20 MiB on the default stream
        (0, SEG_A, 20 * MiB, 0, "large", [
            (4 * MiB, "active_allocated", 4 * MiB - 1000, FWD),
            (2 * MiB, "active_pending_free", 2 * MiB, BWD),
            (6 * MiB, "inactive", 6 * MiB - 512, OPT),
            (8 * MiB, "active_allocated", 8 * MiB - 4096, BWD),
        ]),
        # device 0, small segment of 2 MiB on a side stream
        (0, SEG_B, 2 * MiB, 94251, "small", [
            (512, "active_allocated", 4, OPT),
            (1024, "active_allocated", 1000, FWD),
            (2 * MiB - 1536, "inactive", None, None),
        ]),
        # device 1
        (1, SEG_C, 20 * MiB, 0, "large", [
            (12 * MiB, "active_allocated", 12 * MiB, FWD),
            (8 * MiB, "inactive", None, None),
        ]),
    ]


def segments(history):
    out = []
    for dev, addr, total, stream, kind, blocks in layout():
        allocated = sum(s for s, st, _, _ in blocks if st == "active_allocated")
        active = sum(s for s, st, _, _ in blocks if st != "inactive")
        bl, a = [], addr
        for size, state, req, stack in blocks:
            b = {"size": size, "state": state}
            if history and req is not None:
                # newest first; the older entry is a previous tenant of the same block
                b["history"] = [{"addr": a, "real_size": req, "frames": stack},
                                {"addr": a, "real_size": size // 2, "frames": FWD}]
            bl.append(b)
            a += size
        out.append({"device": dev, "address": addr, "total_size": total, "allocated_size": allocated,
                    "active_size": active, "stream": stream, "segment_type": kind, "blocks": bl})
    return out


def traces():
    """torch 2.0 device traces that end at the final state of layout()."""
    devs = {0: [], 1: []}
    for dev, addr, total, stream, kind, blocks in layout():
        t = devs[dev]
        t.append({"action": "segment_alloc", "addr": addr, "size": total, "stream": stream, "frames": FWD})
        a = addr
        for size, state, req, stack in blocks:
            if state == "inactive" and req is not None:
                # allocated and freed within the trace
                t.append({"action": "alloc", "addr": a, "size": req, "stream": stream, "frames": stack})
                t.append({"action": "free_requested", "addr": a, "size": req, "stream": stream, "frames": stack})
                t.append({"action": "free_completed", "addr": a, "size": req, "stream": stream, "frames": stack})
            elif state != "inactive":
                t.append({"action": "alloc", "addr": a, "size": req, "stream": stream, "frames": stack})
                if state == "active_pending_free":
                    t.append({"action": "free_requested", "addr": a, "size": req, "stream": stream,
                              "frames": stack})
            a += size
    # a failed 64 MiB request on device 1, with the driver's free bytes
    devs[1].append({"action": "oom", "device_free": 40 * MiB, "size": 64 * MiB, "stream": 0, "frames": FWD})
    return [devs[0], devs[1]]


def modern():
    """The same state as torch 2.1+ writes it, one block's stack with a C++ frame of line 2**64 - 1."""
    segs = []
    for dev, addr, total, stream, kind, blocks in layout():
        bl, a = [], addr
        for i, (size, state, req, stack) in enumerate(blocks):
            frames = GRAPH if (addr, i) == (SEG_A, 3) else (stack or [])
            bl.append({"address": a, "size": size, "requested_size": req or 0, "state": state, "frames": frames})
            a += size
        segs.append({"device": dev, "address": addr, "total_size": total,
                     "allocated_size": sum(b["size"] for b in bl if b["state"] == "active_allocated"),
                     "active_size": sum(b["size"] for b in bl if b["state"] != "inactive"),
                     "requested_size": sum(b["requested_size"] for b in bl if b["state"] != "inactive"),
                     "stream": stream, "segment_type": kind, "segment_pool_id": (0, 0), "is_expandable": False,
                     "frames": FWD, "blocks": bl})
    dt = traces()
    for t in dt:
        for k, e in enumerate(t):
            e["time_us"] = 1_700_000_000_000_000 + 250 * k
            if e["action"] == "oom":
                e["addr"] = 0
    return {"segments": segs, "device_traces": dt, "allocator_settings": {"expandable_segments": False},
            "external_annotations": []}


def dump(name, obj, protocol):
    path = os.path.join(OUT, name)
    with open(path, "wb") as f:
        pickle.dump(obj, f, protocol=protocol)
    print(path, os.path.getsize(path), "bytes")


def main():
    dump("mem_legacy_list.pickle", segments(history=False), 2)
    dump("mem_legacy_history.pickle", segments(history=True), 4)
    dump("mem_legacy_traces.pickle", {"segments": segments(history=True), "device_traces": traces()}, 2)
    dump("mem_cpp_line.pickle", modern(), 4)
    with open(os.path.join(OUT, "mem_train.pickle"), "rb") as f:
        snap = PlainData(f).load()
    max_entries = 2000
    snap["device_traces"] = [t[-max_entries:] for t in snap["device_traces"]]
    dump("mem_train_wrapped.pickle", snap, 4)


if __name__ == "__main__":
    main()
