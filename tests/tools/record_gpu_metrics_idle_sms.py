"""Records an Nsight Systems capture whose GPU is kernel-busy while few of its SMs work, to test
Strobe's "busy but not working" answer on real GPU metrics (the H100 recording in
sample-traces/nsys_gpu_metrics_h100.sqlite has none: its GEMMs keep every SM busy and its
small-grid phase is launch-bound, so the GPU idles between its kernels).

Each phase is an NVTX range, run back to back with no host gap on the GPU:

- one_block_spin: `torch.cuda._sleep` launches a single-thread kernel that spins for the given
  cycles: the stream is busy for ~40 ms while one SM of 132 is active (SMs Active ~1 %).
- small_grid_chain: 2 000 reductions of a 2048-wide row launched back to back (`sum` over a
  small tensor: a handful of blocks each), queued behind a spin so the GPU runs them without
  host gaps: kernel-busy with SMs Active far below 50 %.
- full_gemm: bf16 8192² GEMMs for contrast (SMs Active ~100 %, Tensor Active high).
- elementwise_stream: a large tensor add (memory-bound, DRAM near its peak).

    nsys profile --trace=cuda,nvtx --gpu-metrics-devices=0 --gpu-metrics-frequency=10000 \
        --capture-range=cudaProfilerApi --capture-range-end=stop \
        -o gpu_metrics_idle_sms python3 tests/tools/record_gpu_metrics_idle_sms.py
    nsys export --type sqlite -o gpu_metrics_idle_sms.sqlite gpu_metrics_idle_sms.nsys-rep

Then trim it to sample-traces/nsys_gpu_metrics_idle_sms.sqlite, keeping every metric sample of
the phases:

    python3 tests/tools/trim_nsys_gpu_metrics.py gpu_metrics_idle_sms.sqlite \
        --out nsys_gpu_metrics_idle_sms.sqlite \
        --phases one_block_spin small_grid_chain full_gemm elementwise_stream

and regenerate its oracle figures with tests/expected/regen.sh.
"""

import torch

dev = torch.device("cuda", 0)
torch.backends.cuda.matmul.allow_tf32 = True


def phase(name, fn):
    torch.cuda.nvtx.range_push(name)
    fn()
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()
    print(f"phase {name} done", flush=True)


def cycles_for(ms):
    # the SM clock in cycles per ms, from the device's reported clock rate (kHz)
    khz = getattr(torch.cuda.get_device_properties(dev), "clock_rate", 1_755_000)
    return int(khz * ms)


small = torch.randn(64, 2048, device=dev)
a = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)
b = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)
x = torch.randn(1 << 28, device=dev)
y = torch.randn(1 << 28, device=dev)
# warm up every kernel outside the capture
torch.cuda._sleep(1000)
small.sum(dim=1)
a @ b
x + y
torch.cuda.synchronize()

torch.cuda.cudart().cudaProfilerStart()
phase("one_block_spin", lambda: torch.cuda._sleep(cycles_for(40)))


def chain():
    # the spin holds the stream while the host queues the chain: the GPU then runs it
    # back to back, its time set by the kernels, not by the launches
    torch.cuda._sleep(cycles_for(60))
    for _ in range(2000):
        small.sum(dim=1)


phase("small_grid_chain", chain)
phase("full_gemm", lambda: [a @ b for _ in range(20)])
phase("elementwise_stream", lambda: [x + y for _ in range(20)])
torch.cuda.cudart().cudaProfilerStop()
