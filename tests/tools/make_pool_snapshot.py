#!/usr/bin/env python3
"""Makes sample-traces/mem_pools_synthetic.pickle: a torch 2.1+ layout snapshot (stdlib only) whose
reserved-but-inactive memory sits mostly in pools ordinary allocations cannot reuse, beside a
default pool with a little of its own.

The state mimics tests/tools/record_pools_and_ops.py on one GPU, key for key as
THCPModule_memorySnapshot writes segments (`segment_pool_id` a 2-tuple, `stream` an int):

- default pool (0, 0), stream 0: weights and a few live tensors, some freed blocks;
- default pool (0, 0), a side stream: a 20 MiB segment the warm-up left all free (blocks of one
  stream are not handed to another, so this is stream separation, not fragmentation);
- a CUDA graph pool (1, 0) (made by `torch.cuda.graph` when no pool is given: the id's first half
  counts captures), on the capture stream: the captured output live, the intermediates freed
  inside the pool and kept for replays;
- a user pool (0, 1) (`torch.cuda.MemPool()` or `graph_pool_handle()`: the second half counts
  user pools): four blocks of which two were freed.

The trace makes each segment and block in order, so a replay from nothing ends at the final state,
then records a failed 200 MiB request on the default stream (`oom`, 10 MiB free on the device): the
MemPool's free blocks on that stream are not the default pool's, so the verdict is `cache_held`.

Usage: make_pool_snapshot.py   (from anywhere; writes into sample-traces/)
"""
import os, pickle

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "..", "sample-traces", "mem_pools_synthetic.pickle")
KiB, MiB = 1 << 10, 1 << 20

SIDE, CAPTURE = 0x5D1E2A40, 0x5D1E3B80


def frame(name, line, filename="/home/user/graph_train.py"):
    return {"filename": filename, "name": name, "line": line}


WEIGHTS = [frame("__init__", 31), frame("<module>", 70)]
WARMUP = [frame("forward", 44), frame("warm_up", 52), frame("<module>", 75)]
CAPTURED = [frame("forward", 44), frame("capture", 60, "/usr/lib/python3.11/site-packages/torch/cuda/graphs.py"),
            frame("<module>", 80)]
POOLED = [frame("<listcomp>", 90), frame("<module>", 90)]
KEEP = [frame("<listcomp>", 96), frame("<module>", 96)]

# (pool id, stream, segment_type, total, [(size, requested, state, stack)]) in address order
LAYOUT = [
    ((0, 0), 0, "large", 20 * MiB, [(8 * MiB, 8 * MiB - 96, "active_allocated", WEIGHTS),
                                    (4 * MiB, 4 * MiB - 512, "inactive", KEEP),
                                    (6 * MiB, 6 * MiB, "active_allocated", KEEP),
                                    (2 * MiB, 2 * MiB, "inactive", KEEP)]),
    ((0, 0), 0, "small", 2 * MiB, [(512 * KiB, 500 * KiB, "active_allocated", KEEP),
                                   (1536 * KiB, 1536 * KiB, "inactive", KEEP)]),
    ((0, 0), 0, "large", 40 * MiB, [(40 * MiB, 40 * MiB, "active_allocated", WEIGHTS)]),
    ((0, 0), SIDE, "large", 20 * MiB, [(20 * MiB, 16 * MiB, "inactive", WARMUP)]),
    ((1, 0), CAPTURE, "large", 256 * MiB, [(64 * MiB, 64 * MiB - 2048, "active_allocated", CAPTURED),
                                           (192 * MiB, 192 * MiB, "inactive", CAPTURED)]),
    ((1, 0), CAPTURE, "large", 128 * MiB, [(128 * MiB, 128 * MiB, "inactive", CAPTURED)]),
    ((1, 0), CAPTURE, "small", 2 * MiB, [(2 * MiB, 2 * MiB, "inactive", CAPTURED)]),
    ((0, 1), 0, "large", 64 * MiB, [(64 * MiB, 64 * MiB, "active_allocated", POOLED)]),
    ((0, 1), 0, "large", 96 * MiB, [(96 * MiB, 96 * MiB, "inactive", POOLED)]),
    ((0, 1), 0, "large", 128 * MiB, [(128 * MiB, 128 * MiB, "inactive", POOLED)]),
    ((0, 1), 0, "large", 32 * MiB, [(32 * MiB, 32 * MiB, "active_allocated", POOLED)]),
]


def build():
    segs, trace = [], []
    addr = 0x7F2A00000000
    t = 1_733_500_000_000_000

    def entry(action, a, size, stream, stack):
        nonlocal t
        t += 40
        trace.append({"action": action, "addr": a, "size": size, "stream": stream, "time_us": t,
                      "frames": stack, "compile_context": "N/A", "user_metadata": ""})

    for pool, stream, kind, total, blocks in LAYOUT:
        assert sum(b[0] for b in blocks) == total
        entry("segment_alloc", addr, total, stream, blocks[0][3])
        bl, a = [], addr
        for size, req, state, stack in blocks:
            entry("alloc", a, req, stream, stack)
            if state == "inactive":
                entry("free_requested", a, req, stream, stack)
                entry("free_completed", a, req, stream, stack)
            bl.append({"address": a, "size": size, "requested_size": req if state != "inactive" else 0,
                       "state": state, "frames": stack})
            a += size
        segs.append({"device": 0, "address": addr, "total_size": total,
                     "allocated_size": sum(b["size"] for b in bl if b["state"] == "active_allocated"),
                     "active_size": sum(b["size"] for b in bl if b["state"] != "inactive"),
                     "requested_size": sum(b["requested_size"] for b in bl),
                     "stream": stream, "segment_type": kind, "segment_pool_id": pool, "is_expandable": False,
                     "frames": blocks[0][3], "blocks": bl})
        # segments of one device sit apart in the address space, as cudaMalloc hands them out
        addr += total + 2 * MiB
    # an ordinary 200 MiB request on the default stream fails: the MemPool's free 224 MiB on
    # that stream could hold it, but only allocations inside the pool are given its blocks
    entry("oom", 0, 200 * MiB, 0, KEEP)
    trace[-1]["device_free"] = 10 * MiB
    return {"segments": segs, "device_traces": [trace],
            "allocator_settings": {"expandable_segments": False, "max_split_size": -1},
            "external_annotations": []}


def main():
    with open(OUT, "wb") as f:
        pickle.dump(build(), f, protocol=4)
    print(OUT, os.path.getsize(OUT), "bytes")


if __name__ == "__main__":
    main()
