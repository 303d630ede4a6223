"""Records two small fixtures on one GPU.

1. `mem_graph_pool.pickle` (+ `.memory_stats.json`): a CUDA caching-allocator snapshot in which a
   CUDA graph's private pool and a `torch.cuda.MemPool` hold reserved memory that is inactive but
   not reusable by ordinary allocations, beside the default pool.
2. `ops_train.json.gz` (+ `ops_train.key_averages.json`): a Kineto trace of a few training steps of
   a small MLP/attention model recorded with `record_shapes=True`, and the profiler's own
   `key_averages()` figures for the same events (per op and per op and input shape), taken while
   the profiler object is still alive, so the Ops table can be checked against PyTorch.

usage: python record_pools_and_ops.py OUT_DIR          (on a GPU: both fixtures)
       python record_pools_and_ops.py OUT_DIR --cpu    (no GPU: only the op trace, CPU ops only,
                                                       as ops_train_cpu.*; device times are 0)
"""

import gzip
import json
import os
import shutil
import sys

import torch
import torch.nn as nn


def record_graph_pool(out):
    torch.cuda.memory._record_memory_history(max_entries=100000)
    dev = "cuda"
    model = nn.Sequential(
        nn.Linear(2048, 8192), nn.GELU(), nn.Linear(8192, 8192), nn.GELU(), nn.Linear(8192, 2048)
    ).to(dev)
    static_x = torch.randn(2048, 2048, device=dev)

    # Warm up on a side stream, as the CUDA graphs documentation asks before capture.
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(2):
            model(static_x)
    torch.cuda.current_stream().wait_stream(side)

    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_y = model(static_x)
    for _ in range(3):
        graph.replay()
    torch.cuda.synchronize()

    # A user MemPool: allocate a few blocks, free half; the freed ones stay reserved by the pool.
    pool = torch.cuda.MemPool()
    with torch.cuda.use_mem_pool(pool):
        held = [torch.empty(n * 1024 * 1024, dtype=torch.uint8, device=dev) for n in (64, 96, 128, 32)]
    del held[1]
    del held[2]

    # Ordinary allocations in the default pool, some freed (ordinary cached memory).
    keep = [torch.empty(n * 1024 * 1024, dtype=torch.uint8, device=dev) for n in (40, 8, 24, 3)]
    del keep[0]
    torch.cuda.synchronize()

    torch.cuda.memory._dump_snapshot(os.path.join(out, "mem_graph_pool.pickle"))
    with open(os.path.join(out, "mem_graph_pool.memory_stats.json"), "w") as f:
        json.dump(torch.cuda.memory_stats(), f, indent=1)
    torch.cuda.memory._record_memory_history(enabled=None)
    # Keep the graph, pool and tensors alive until after the dump.
    del graph, static_y, held, keep, pool


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


def record_ops(out, dev="cuda", stem="ops_train"):
    from torch.profiler import ProfilerActivity, profile, record_function

    torch.manual_seed(0)
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if dev == "cuda" else [])
    sync = torch.cuda.synchronize if dev == "cuda" else (lambda: None)
    model = nn.Sequential(*[Block(512, 8) for _ in range(2)], nn.Linear(512, 1000)).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x = torch.randn(16, 128, 512, device=dev)
    y = torch.randint(0, 1000, (16, 128), device=dev)
    loss_fn = nn.CrossEntropyLoss()

    def step():
        with record_function("forward"):
            logits = model(x)
            loss = loss_fn(logits.reshape(-1, 1000), y.reshape(-1))
        with record_function("backward"):
            loss.backward()
        with record_function("optimizer"):
            opt.step()
            opt.zero_grad(set_to_none=True)
        return loss

    for _ in range(2):  # warm-up outside the profiler
        step()
    sync()

    with profile(activities=activities, record_shapes=True) as prof:
        for i in range(3):
            with record_function(f"ProfilerStep#{i}"):
                step()
            sync()

    raw = os.path.join(out, stem + ".json")
    prof.export_chrome_trace(raw)
    with open(raw, "rb") as src, gzip.open(raw + ".gz", "wb") as dst:
        shutil.copyfileobj(src, dst)
    os.remove(raw)

    def rows(avgs, with_shapes):
        result = []
        for e in avgs:
            row = {
                "key": e.key,
                "count": e.count,
                "cpu_time_total_us": e.cpu_time_total,
                "self_cpu_time_total_us": e.self_cpu_time_total,
                "device_time_total_us": e.device_time_total,
                "self_device_time_total_us": e.self_device_time_total,
            }
            if with_shapes:
                row["input_shapes"] = str(e.input_shapes)
            result.append(row)
        return result

    figures = {
        "torch": torch.__version__,
        "by_op": rows(prof.key_averages(), False),
        "by_op_and_shape": rows(prof.key_averages(group_by_input_shape=True), True),
        "table": prof.key_averages().table(sort_by="device_time_total", row_limit=30),
    }
    with open(os.path.join(out, stem + ".key_averages.json"), "w") as f:
        json.dump(figures, f, indent=1)


if __name__ == "__main__":
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    if "--cpu" in sys.argv[2:]:
        torch.set_num_threads(2)
        record_ops(out, "cpu", "ops_train_cpu")
        sys.exit(0)
    record_graph_pool(out)
    torch.cuda.empty_cache()
    record_ops(out)
    print(open(os.path.join(out, "ops_train.key_averages.json")).read()[-4000:])
