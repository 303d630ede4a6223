"""Records NCCL collectives under Nsight Systems, for reading their sizes from the export:
NCCL's own NVTX ranges (`ncclAllReduce`, … in the NCCL domain, with its payload where this NCCL
writes one) and its kernels' names. Each rank also logs every collective it issued (kind,
element count, dtype, bytes by nccl-tests' convention) to OUTDIR/nccl_nsys_rank<r>.log.json:
the oracle's truth, never read back from the export.

Run (one GPU per rank; one GPU gives a one-rank job, whose NCCL still launches its kernels):
  nsys profile --trace=cuda,nvtx --force-overwrite=true -o OUTDIR/nccl_nsys \\
      torchrun --nproc-per-node=NGPU tests/tools/record_nccl_nsys.py OUTDIR
  nsys export --type sqlite --force-overwrite=true -o OUTDIR/nccl_nsys.sqlite OUTDIR/nccl_nsys.nsys-rep
Then check what NVTX_EVENTS holds for the NCCL domain (text, jsonText, binaryData and any
payload-schema tables) before reading sizes from it.
"""

import json
import os
import sys

import torch
import torch.distributed as dist

# (collective, elements per rank, dtype): sizes that differ, so each is told apart by size
PLAN = [
    ("all_reduce", 1 << 20, torch.float32),
    ("all_reduce", 3 << 18, torch.bfloat16),
    ("all_gather", 1 << 18, torch.float32),
    ("reduce_scatter", 1 << 19, torch.float16),
    ("broadcast", 5 << 16, torch.float32),
]
ROUNDS = 3


def main(out):
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.cuda.set_device(rank % torch.cuda.device_count())
    log = []
    for r in range(ROUNDS):
        for kind, n, dt in PLAN:
            x = torch.ones(n, dtype=dt, device="cuda")
            es = x.element_size()
            if kind == "all_reduce":
                dist.all_reduce(x)
                nbytes = n * es
            elif kind == "all_gather":
                y = torch.empty(n * world, dtype=dt, device="cuda")
                dist.all_gather_into_tensor(y, x)
                nbytes = n * world * es
            elif kind == "reduce_scatter":
                y = torch.empty(n // world, dtype=dt, device="cuda")
                dist.reduce_scatter_tensor(y, x)
                nbytes = n * es
            else:
                dist.broadcast(x, src=0)
                nbytes = n * es
            torch.cuda.synchronize()
            log.append({"round": r, "kind": kind, "nelems": n, "dtype": str(dt), "bytes": nbytes, "world": world})
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, f"nccl_nsys_rank{rank}.log.json"), "w") as f:
        json.dump({"rank": rank, "world": world, "nccl": ".".join(map(str, torch.cuda.nccl.version())),
                   "torch": torch.__version__, "collectives": log}, f)
    dist.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1])
