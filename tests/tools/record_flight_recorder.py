#!/usr/bin/env python3
"""Records PyTorch flight-recorder dumps of small multi-process jobs that hang, one fault each.

    python3 tests/tools/record_flight_recorder.py OUT_DIR [--fault NAME ...] [--backend gloo|nccl]
        [--world 4] [--json]

Each fault runs WORLD processes (gloo on the CPU by default; `--backend nccl` puts every rank on
the one GPU it finds, or one GPU each where there are enough). Every rank records with
`TORCH_FR_BUFFER_SIZE` set, runs a few steps of collectives on the whole world and on two
data-parallel subgroups, and then the fault:

- `missing`: the last rank never calls the step's all-reduce (it sleeps), the others wait.
- `desync`: rank 1 calls reduce_scatter where the others call all_gather (another code path).
- `size`: rank 2 all-reduces 3 elements more than the others at the same sequence number.
- `p2p`: a pipeline hop hangs: rank 1 waits on a recv from rank 0, which never sends it.
- `p2p_size`: rank 0 sends 32 floats to rank 1, which receives 24 (with `--backend nccl` on a
  GPU per rank: NCCL records both ends, `nccl:send 0->1` / `nccl:recv 1<-0`; gloo records no
  point-to-point entries).
- `none`: no fault; the dump is taken once the steps are done (a one-rank NCCL run on a
  machine with one GPU gives states, discovery times and durations that gloo does not write).

The fault hangs the job. Each rank then dumps the way a watchdog does after its timeout: a thread
that waits `--timeout` seconds past the fault (or wakes at once if the collective raised its
own timeout) calls `torch._C._distributed_c10d._dump_fr_trace()` (pickle; the JSON form where
`--json` and `_dump_fr_trace_json` exist) and writes `OUT_DIR/NAME/rank_<r>` as torchtitan
names its dumps. Only the recorder's own output is written: nothing is edited afterwards.
"""

import argparse
import datetime
import os
import sys
import threading
import time

FAULTS = ["missing", "desync", "size", "p2p", "p2p_size", "none"]


def dump_bytes(as_json, backend):
    import torch

    c10d = torch._C._distributed_c10d
    # NCCL groups record into the recorder of CUDA events (`_dump_nccl_trace`), gloo into the
    # generic one (`_dump_fr_trace`)
    order = ["nccl", "fr"] if backend == "nccl" else ["fr", "nccl"]
    if as_json:
        for name in (f"_dump_{k}_trace_json" for k in order):
            fn = getattr(c10d, name, None)
            if fn is not None:
                out = fn(includeCollectives=True, onlyActive=False)
                return out.encode() if isinstance(out, str) else out
    for name in (f"_dump_{k}_trace" for k in order):
        fn = getattr(c10d, name, None)
        if fn is not None:
            return fn(includeCollectives=True, includeStackTraces=True, onlyActive=False)
    raise SystemExit("this torch has no flight-recorder dump function")


def worker(rank, world, fault, out_dir, backend, timeout_s, as_json, port):
    import torch
    import torch.distributed as dist

    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    device = "cpu"
    if backend == "nccl":
        n = torch.cuda.device_count()
        device = f"cuda:{rank % n}"
        torch.cuda.set_device(device)
    dist.init_process_group(
        backend, rank=rank, world_size=world, timeout=datetime.timedelta(seconds=timeout_s)
    )
    half = max(world // 2, 1)
    if world >= 2:
        dp_groups = [
            dist.new_group(list(range(0, half)), group_desc="dp_replica_0"),
            dist.new_group(list(range(half, world)), group_desc="dp_replica_1"),
        ]
        dp = dp_groups[0] if rank < half else dp_groups[1]
    else:
        dp = dist.new_group([0], group_desc="dp_replica_0")

    dumped = threading.Lock()
    fault_at = threading.Event()
    done = threading.Event()

    def write_dump(why):
        if not dumped.acquire(blocking=False):
            return
        data = dump_bytes(as_json, backend)
        path = os.path.join(out_dir, f"rank_{rank}")
        with open(path + ".tmp", "wb") as f:
            f.write(data)
        os.replace(path + ".tmp", path)
        print(f"rank {rank}: dumped {len(data)} bytes ({why})", flush=True)
        done.set()

    def watchdog():
        fault_at.wait()
        if not done.wait(timeout_s + 2):
            write_dump("watchdog after the timeout")
        # a dump the main thread began takes a while (it symbolizes the stacks); the main
        # thread may also still be blocked inside the hung collective
        done.wait(60)
        time.sleep(0.5)
        os._exit(0)

    threading.Thread(target=watchdog, daemon=True).start()

    def t(n, fill=1.0):
        return torch.full((n,), fill + rank, dtype=torch.float32, device=device)

    # a few healthy steps: a world all-reduce, a data-parallel all-gather, a broadcast
    for _step in range(3):
        dist.all_reduce(t(16))
        x = t(8)
        out = [torch.empty_like(x) for _ in range(half)]
        dist.all_gather(out, x, group=dp)
        dist.broadcast(t(4), src=0)
    if backend == "nccl":
        torch.cuda.synchronize()

    fault_at.set()
    try:
        if fault == "missing":
            if rank == world - 1:
                time.sleep(timeout_s + 60)
            else:
                dist.all_reduce(t(16))
        elif fault == "desync":
            x = t(8 * world)
            if rank == 1:
                dist.reduce_scatter(t(8), list(x.chunk(world)))
            else:
                dist.all_gather(list(x.chunk(world)), t(8))
        elif fault == "size":
            dist.all_reduce(t(19 if rank == 2 else 16))
        elif fault == "none":
            pass
        elif fault == "p2p_size":
            if rank == 0:
                dist.send(t(32), dst=1)
            elif rank == 1:
                dist.recv(t(24), src=0)
            else:
                dist.all_reduce(t(16), group=dp)
        elif fault == "p2p":
            if rank == 1:
                dist.recv(t(32), src=0)
            elif rank == 0:
                time.sleep(timeout_s + 60)
            else:
                dist.all_reduce(t(16), group=dp)
        if backend == "nccl":
            torch.cuda.synchronize()
        # the fault did not hang this rank: it waits at the next world collective, as a
        # training loop would
        dist.all_reduce(t(16))
        if backend == "nccl":
            torch.cuda.synchronize()
        write_dump("finished")
    except Exception as e:  # the collective's own timeout
        print(f"rank {rank}: {type(e).__name__}: {str(e).splitlines()[0][:160]}", flush=True)
        write_dump("after the collective raised")
    time.sleep(timeout_s + 10)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--fault", action="append", choices=FAULTS)
    ap.add_argument("--backend", default="gloo", choices=["gloo", "nccl"])
    ap.add_argument("--world", type=int, default=4)
    ap.add_argument("--timeout", type=float, default=6.0)
    ap.add_argument("--buffer", type=int, default=2000, help="TORCH_FR_BUFFER_SIZE")
    ap.add_argument("--json", action="store_true", help="dump the JSON form")
    ap.add_argument("--port", type=int, default=29611)
    a = ap.parse_args()
    os.environ["TORCH_FR_BUFFER_SIZE"] = str(a.buffer)
    # NCCL's own watchdog must not kill the job before ours dumps
    os.environ.setdefault("TORCH_NCCL_ASYNC_ERROR_HANDLING", "0")
    os.environ.setdefault("TORCH_NCCL_DUMP_ON_TIMEOUT", "0")
    # NCCL entries get a duration only with timing on
    os.environ.setdefault("TORCH_NCCL_ENABLE_TIMING", "1")
    import torch.multiprocessing as mp

    for i, fault in enumerate(a.fault or FAULTS):
        d = os.path.join(a.out, fault + ("_json" if a.json else "") + ("_nccl" if a.backend == "nccl" else ""))
        os.makedirs(d, exist_ok=True)
        print(f"== {fault} -> {d}", flush=True)
        ctx = mp.get_context("spawn")
        procs = [
            ctx.Process(target=worker, args=(r, a.world, fault, d, a.backend, a.timeout, a.json, a.port + i))
            for r in range(a.world)
        ]
        for p in procs:
            p.start()
        for p in procs:
            p.join(a.timeout + 90)
            if p.is_alive():
                p.kill()
        missing = [r for r in range(a.world) if not os.path.exists(os.path.join(d, f"rank_{r}"))]
        if missing:
            print(f"   no dump from ranks {missing}", file=sys.stderr)


if __name__ == "__main__":
    main()
