#!/usr/bin/env python3
"""Records two real CUDA OOM snapshots that the bundled samples lack (OOM verdicts):

  frag_oom     the cached free memory on the failing stream could hold the request, but only in
               5 MiB pieces (every other block of each 20 MiB segment freed): `fragmentation`.
  cache_held   the same pieces sit in segments of a side stream; the request comes on the
               default stream, whose pool has nothing free: `cache_held`.

A ballast tensor takes all but ~12 GiB of the device first, so that the device really runs out
(device_free < request) and the snapshot stays small. Run on a CUDA machine:
  python3 make_oom_snapshots.py OUTDIR   (writes OUTDIR/mem_frag_oom.pickle, mem_cache_held_oom.pickle)
"""
import os, subprocess, sys

import torch

MiB, GiB = 2**20, 2**30


def fill(n_chunks):
    return [torch.empty(5 * MiB, dtype=torch.uint8, device="cuda") for _ in range(n_chunks)]


def one(kind, out):
    torch.cuda.init()
    free, _ = torch.cuda.mem_get_info()
    torch.cuda.memory._record_memory_history(max_entries=100000, context="alloc", stacks="python")
    ballast = torch.empty(free - 12 * GiB, dtype=torch.uint8, device="cuda")
    side = torch.cuda.Stream()
    if kind == "cache_held":
        with torch.cuda.stream(side):
            chunks = fill(2048)
            del chunks[::2]
    else:
        chunks = fill(2048)
        del chunks[::2]
    torch.cuda.synchronize()
    try:
        big = torch.empty(4 * GiB, dtype=torch.uint8, device="cuda")
        print(kind, "no OOM: nothing written", file=sys.stderr)
        sys.exit(1)
    except torch.OutOfMemoryError as e:
        print(kind, "OOM:", str(e).splitlines()[0])
    torch.cuda.memory._dump_snapshot(out)
    torch.cuda.memory._record_memory_history(enabled=None)
    del ballast


if __name__ == "__main__":
    if len(sys.argv) == 3:
        one(sys.argv[1], sys.argv[2])
    else:
        d = sys.argv[1]
        for kind, name in [("frag", "mem_frag_oom.pickle"), ("cache_held", "mem_cache_held_oom.pickle")]:
            # a fresh process each, so one run's cache cannot leak into the other
            subprocess.run([sys.executable, __file__, kind, os.path.join(d, name)], check=True)
