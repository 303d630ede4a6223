"""A short CUDA workload in named phases, for an Nsight Systems capture with GPU metrics and
CUDA-graph node tracing (tests/tools/record_gpu_session.sh runs it under nsys):

    nsys profile --trace=cuda,nvtx --gpu-metrics-devices=0 --gpu-metrics-frequency=1000 \
        --cuda-graph-trace=node --capture-range=cudaProfilerApi --capture-range-end=stop \
        -o metrics_graphs python3 tests/tools/record_metrics_graphs.py

Only the phases are captured (cudaProfilerStart/Stop around them), which keeps the export small.

Each phase is an NVTX range, and the script prints each phase's launches so an oracle can
check what the GPU metrics say about it:

- `gemm_bf16`: large bf16 matrix products (tensor cores busy, SMs active).
- `copy_bandwidth`: 1 GiB device-to-device copies (DRAM bandwidth high, tensors idle).
- `small_grids`: thousands of one-block kernels (GPU "busy" on the timeline, SMs mostly idle).
- `host_sleep`: the host sleeps with nothing queued (GPU idle).
- `graph_capture`, `graph_replay`: an MLP's forward captured once into a CUDA graph, then
  replayed 20 times (each replay one cudaGraphLaunch fanning out to the graph's kernels).
"""

import time

import torch
import torch.nn as nn

nvtx = torch.cuda.nvtx


def phase(name, fn):
    torch.cuda.synchronize()
    t0 = time.perf_counter_ns()
    nvtx.range_push(name)
    launches = fn()
    nvtx.range_pop()
    torch.cuda.synchronize()
    print(f"phase {name}: {launches} launches, {(time.perf_counter_ns() - t0) / 1e6:.1f} ms host")


def main():
    dev = "cuda"
    a = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)
    src = torch.empty(256 * 1024 * 1024, device=dev, dtype=torch.float32)  # 1 GiB
    dst = torch.empty_like(src)
    tiny = torch.zeros(256, device=dev)
    mlp = nn.Sequential(nn.Linear(1024, 4096), nn.GELU(), nn.Linear(4096, 1024)).to(dev)
    static_in = torch.randn(64, 1024, device=dev)
    torch.cuda.synchronize()

    def gemm():
        for _ in range(100):
            a @ b
        return 100

    def copy():
        for _ in range(60):
            dst.copy_(src)
        return 60

    def small():
        for _ in range(3000):
            tiny.add_(1.0)
        return 3000

    def sleep():
        time.sleep(0.1)
        return 0

    graph = torch.cuda.CUDAGraph()
    graph_outputs = []

    def capture():
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):  # warm-up outside the graph, as the docs ask
            for _ in range(3):
                mlp(static_in)
        torch.cuda.current_stream().wait_stream(side)
        with torch.no_grad(), torch.cuda.graph(graph):
            graph_outputs.append(mlp(static_in))
        return 1

    def replay():
        for _ in range(20):
            graph.replay()
        return 20

    torch.cuda.cudart().cudaProfilerStart()
    for name, fn in [
        ("gemm_bf16", gemm),
        ("copy_bandwidth", copy),
        ("small_grids", small),
        ("host_sleep", sleep),
        ("graph_capture", capture),
        ("graph_replay", replay),
    ]:
        phase(name, fn)
    torch.cuda.cudart().cudaProfilerStop()


if __name__ == "__main__":
    main()
