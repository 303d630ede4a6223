#!/usr/bin/env python3
"""Records a real PyTorch `.pftrace` (Perfetto protobuf) on a CUDA GPU, for Strobe's
Perfetto reader: a small transformer training loop under `torch.profiler`, exported to a
path ending in `.pftrace`, which PyTorch's CUPTI-in-Python profiler backend
(`torch/profiler/_cuspy`, on PyPI's current torch) writes as a gzipped Perfetto trace: GPU
stream lanes as render stages, "GPU / Counters / <gpu>" tracks (with PM sampling: SM
active and DRAM throughput), CUDA-graph node dependencies. The same run is also exported
as Kineto JSON, to compare the two.

The backend needs CUDA and `cupti-python` (`pip install cupti-python`); it cannot run on a
CPU-only machine. Run on the GPU machine:

    python3 tests/tools/record_torch_pftrace.py OUT_DIR [--steps 6] [--graphs]

It says what each file turned out to be (Perfetto protobuf, gzipped or not, or JSON), so a
torch whose export still writes JSON under a `.pftrace` name is caught, not kept.
"""
import argparse
import gzip
import os
import sys


def what_is(path):
    with open(path, "rb") as f:
        head = f.read(64)
    gz = head[:2] == b"\x1f\x8b"
    if gz:
        with gzip.open(path, "rb") as g:
            head = g.read(64)
    # Kineto writes its JSON starting with "\n  {": the newline is also a protobuf packet
    # tag (0x0a), so JSON is recognised first, by its first non-blank byte
    if head.lstrip()[:1] in (b"{", b"["):
        inner = "JSON (the .pftrace backend was not used)"
    elif head[:1] == b"\x0a":
        inner = "Perfetto protobuf"
    else:
        inner = f"unknown (starts {head[:4]!r})"
    return f"gzipped, {inner}" if gz else inner


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out_dir")
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--graphs", action="store_true", help="also replay a captured CUDA graph each step")
    a = ap.parse_args()
    import torch

    if not torch.cuda.is_available():
        sys.exit("needs a CUDA GPU: the .pftrace backend records through CUPTI")
    print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.get_device_name(0))
    try:
        import torch.profiler._cuspy.trace  # noqa: F401  (needs cupti-python)
    except Exception as e:  # noqa: BLE001
        print(f"torch.profiler._cuspy is not importable here ({e}); the export may write JSON")
    os.makedirs(a.out_dir, exist_ok=True)
    dev = torch.device("cuda")
    layer = torch.nn.TransformerEncoderLayer(d_model=256, nhead=4, dim_feedforward=1024, batch_first=True)
    model = torch.nn.TransformerEncoder(layer, num_layers=2).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randn(16, 128, 256, device=dev)
    graph, static_in, static_out = None, None, None
    if a.graphs:
        static_in = torch.randn(16, 128, 256, device=dev)
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s), torch.no_grad():
            for _ in range(3):
                model(static_in)
        torch.cuda.current_stream().wait_stream(s)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph), torch.no_grad():
            static_out = model(static_in)
    acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]

    def profiled_run(path):
        with torch.profiler.profile(activities=acts, record_shapes=True) as prof:
            for step in range(a.steps):
                with torch.profiler.record_function(f"ProfilerStep#{step}"):
                    loss = model(x).float().pow(2).mean()
                    loss.backward()
                    opt.step()
                    opt.zero_grad(set_to_none=True)
                    if graph is not None:
                        graph.replay()
                torch.cuda.synchronize()
        prof.export_chrome_trace(path)
        kind = what_is(path)
        print(f"{path}: {os.path.getsize(path)} bytes, {kind}")
        return kind

    pf_kind = profiled_run(os.path.join(a.out_dir, "torch_train.pftrace"))
    profiled_run(os.path.join(a.out_dir, "torch_train.json"))
    del static_out
    if "Perfetto protobuf" not in pf_kind:
        sys.exit("torch_train.pftrace is not a Perfetto protobuf: this torch has no .pftrace backend")


if __name__ == "__main__":
    main()
