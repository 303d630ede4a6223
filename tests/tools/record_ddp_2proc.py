"""Records the 2-process nsys sample (sample-traces/nsys_ddp_2proc.sqlite) on one GPU.

Two ranks of a tiny data-parallel job share GPU 0 (the lent machine has one): each step is an
NVTX range `step_<i>`, runs a few matmuls forward and backward, and all-reduces its gradients.
NCCL refuses two ranks on one device, so the backend is gloo with CUDA tensors (the gradient
is copied to the host, reduced there, copied back). Rank 1 is slowed in step 3 only (extra
matmuls before its all-reduce). cudaProfilerStart/Stop bracket steps 2..7, so the capture
range is in the report as two runtime calls.

Run under nsys:  nsys profile --trace=cuda,nvtx -o OUT python3 record_ddp_2proc.py
"""

import os
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

STEPS = 8
SLOW_RANK, SLOW_STEP = 1, 3


def worker(rank, world, init_file):
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=world)
    torch.cuda.set_device(0)
    torch.manual_seed(rank)
    w = torch.randn(1024, 1024, device="cuda", requires_grad=True)
    x = torch.randn(512, 1024, device="cuda")
    for i in range(STEPS):
        if i == 2:
            torch.cuda.profiler.start()
        torch.cuda.nvtx.range_push(f"step_{i}")
        torch.cuda.nvtx.range_push("forward")
        y = x
        for _ in range(4):
            y = torch.tanh(y @ w)
        loss = y.square().mean()
        torch.cuda.nvtx.range_pop()
        torch.cuda.nvtx.range_push("backward")
        loss.backward()
        torch.cuda.nvtx.range_pop()
        if rank == SLOW_RANK and i == SLOW_STEP:
            torch.cuda.nvtx.range_push("planted_slowdown")
            z = x
            for _ in range(200):
                z = torch.tanh(z @ w.detach())
            torch.cuda.synchronize()
            torch.cuda.nvtx.range_pop()
        torch.cuda.nvtx.range_push("allreduce")
        dist.all_reduce(w.grad)
        torch.cuda.nvtx.range_pop()
        torch.cuda.nvtx.range_push("optimizer")
        with torch.no_grad():
            w -= 1e-3 * w.grad / world
            w.grad.zero_()
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_pop()
        torch.cuda.nvtx.range_pop()
        if i == STEPS - 1:
            torch.cuda.profiler.stop()
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    init_file = sys.argv[1] if len(sys.argv) > 1 else "/tmp/ddp_2proc_init"
    if os.path.exists(init_file):
        os.remove(init_file)
    mp.spawn(worker, args=(2, init_file), nprocs=2)
