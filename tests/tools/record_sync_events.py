"""Records a PyTorch profiler (Kineto) trace with CUDA synchronization events
(`enable_cuda_sync_events`: `cuda_sync` events "Context Sync", "Stream Sync", "Event Sync",
"Stream Wait Event" on the GPU's streams), for the critical path's sync edges:

    python3 tests/tools/record_sync_events.py OUT.json.gz

A small MLP trains 4 profiled steps. Each step copies its batch on a side stream that the main
stream waits on (an event: "Stream Wait Event"), reads the loss (`.item()`: a stream sync),
waits on an event from the host (`Event.synchronize()`: "Event Sync") and ends in
`torch.cuda.synchronize()` ("Context Sync"). Needs one CUDA GPU.
"""

import gzip
import os
import shutil
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F


def main():
    out = sys.argv[1]
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(2048, 8192), nn.GELU(), nn.Linear(8192, 2048)).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    host_batch = torch.randn(256, 2048).pin_memory()
    side = torch.cuda.Stream()

    def step():
        with torch.cuda.stream(side):
            x = host_batch.to("cuda", non_blocking=True)
            copied = torch.cuda.Event()
            copied.record(side)
        torch.cuda.current_stream().wait_event(copied)
        x.record_stream(torch.cuda.current_stream())
        loss = F.mse_loss(model(x), x)
        loss.backward()
        done = torch.cuda.Event()
        done.record()
        done.synchronize()
        opt.step()
        opt.zero_grad(set_to_none=True)
        print("loss", loss.item())
        torch.cuda.synchronize()

    for _ in range(2):
        step()
    config = torch._C._profiler._ExperimentalConfig(enable_cuda_sync_events=True)
    acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=acts, record_shapes=True, experimental_config=config) as prof:
        for _ in range(4):
            step()
            prof.step()
    raw = out[:-3] if out.endswith(".gz") else out
    prof.export_chrome_trace(raw)
    if out.endswith(".gz"):
        with open(raw, "rb") as f, gzip.open(out, "wb") as g:
            shutil.copyfileobj(f, g)
        os.remove(raw)
    print("wrote", out, os.path.getsize(out))


if __name__ == "__main__":
    main()
