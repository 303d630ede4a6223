"""Records CUDA memory snapshots whose allocations have known categories, for the memory
categories' oracle, and a profile_memory Kineto trace of the same model:

    python3 tests/tools/record_memory_categories.py OUT_PREFIX --batch 8 --opt adamw
    python3 tests/tools/record_memory_categories.py OUT_PREFIX --kineto

History recording starts before the model is built (so the parameters' allocations are in it),
with Python and C++ frames. Each step runs inside `record_function` ranges named `data`,
`forward`, `backward` (the optimizer's own `Optimizer.step#…` and `Optimizer.zero_grad#…` ranges
come from torch). Three steps, then `OUT_PREFIX.pickle` and `OUT_PREFIX.model.json`: the facts an
oracle needs that the snapshot cannot tell (the parameters' bytes = Σ numel × element size, the
optimizer state's bytes as the optimizer holds them on the GPU, the batch's bytes, the phase
names). With --kineto: `OUT_PREFIX.json.gz` of torch.profiler(profile_memory, record_shapes,
with_stack) over the same three steps instead. Needs one CUDA GPU.
"""

import argparse
import gzip
import json
import os
import shutil

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd.profiler import record_function

D, HEADS, T, LAYERS, VOCAB = 256, 4, 128, 2, 4096


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(D), nn.LayerNorm(D)
        self.qkv, self.proj = nn.Linear(D, 3 * D), nn.Linear(D, D)
        self.fc1, self.fc2 = nn.Linear(D, 4 * D), nn.Linear(4 * D, D)

    def forward(self, x):
        b = x.shape[0]
        q, k, v = self.qkv(self.ln1(x)).view(b, T, 3, HEADS, D // HEADS).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, T, D))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, D)
        self.blocks = nn.Sequential(*[Block() for _ in range(LAYERS)])
        self.ln, self.head = nn.LayerNorm(D), nn.Linear(D, VOCAB, bias=False)

    def forward(self, idx):
        return self.head(self.ln(self.blocks(self.tok(idx))))


def train(model, opt, batch, steps, on_step=None):
    for _ in range(steps):
        with record_function("data"):
            idx = torch.randint(0, VOCAB, (batch, T), device="cuda")
            tgt = torch.randint(0, VOCAB, (batch, T), device="cuda")
        with record_function("forward"):
            loss = F.cross_entropy(model(idx).view(-1, VOCAB), tgt.view(-1))
        with record_function("backward"):
            loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        loss.item()
        if on_step:
            on_step()
    return idx, tgt


def make_optimizer(kind, params):
    if kind == "adamw":
        return torch.optim.AdamW(params, lr=1e-4)
    return torch.optim.SGD(params, lr=1e-3, momentum=0.9)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("prefix")
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--opt", choices=["adamw", "sgd"], default="adamw")
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--kineto", action="store_true")
    args = ap.parse_args()
    torch.manual_seed(0)
    if args.kineto:
        model = GPT().cuda()
        opt = make_optimizer(args.opt, model.parameters())
        acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
        with torch.profiler.profile(
            activities=acts, profile_memory=True, record_shapes=True, with_stack=True
        ) as prof:
            train(model, opt, args.batch, args.steps, on_step=prof.step)
        raw = args.prefix + ".json"
        prof.export_chrome_trace(raw)
        with open(raw, "rb") as f, gzip.open(raw + ".gz", "wb") as g:
            shutil.copyfileobj(f, g)
        os.remove(raw)
        print("wrote", raw + ".gz")
        return

    torch.cuda.memory._record_memory_history(max_entries=200000, context="all", stacks="all")
    model = GPT().cuda()
    opt = make_optimizer(args.opt, model.parameters())
    idx, tgt = train(model, opt, args.batch, args.steps)
    torch.cuda.synchronize()
    snap_path = args.prefix + ".pickle"
    torch.cuda.memory._dump_snapshot(snap_path)
    torch.cuda.memory._record_memory_history(enabled=None)

    params = list(model.parameters())
    state_bytes = sum(
        t.numel() * t.element_size()
        for st in opt.state.values()
        for t in st.values()
        if torch.is_tensor(t) and t.is_cuda
    )
    facts = {
        "optimizer": args.opt,
        "batch": args.batch,
        "steps": args.steps,
        "parameter_count": sum(p.numel() for p in params),
        "parameter_tensors": len(params),
        "parameter_bytes": sum(p.numel() * p.element_size() for p in params),
        "gradient_bytes_when_alive": sum(p.numel() * p.element_size() for p in params),
        "optimizer_state_bytes": state_bytes,
        "optimizer_state_per_parameter": {"adamw": 2, "sgd": 1}[args.opt],
        "batch_bytes": idx.numel() * idx.element_size() + tgt.numel() * tgt.element_size(),
        "phases": ["data", "forward", "backward", f"Optimizer.step#{type(opt).__name__}.step",
                   f"Optimizer.zero_grad#{type(opt).__name__}.zero_grad"],
        "torch": torch.__version__,
        "device": torch.cuda.get_device_name(),
    }
    with open(args.prefix + ".model.json", "w") as f:
        json.dump(facts, f, indent=1)
    import pickle

    with open(snap_path, "rb") as f:
        snap = pickle.load(f)
    print("snapshot keys:", sorted(snap.keys()), "size", os.path.getsize(snap_path))
    print("external_annotations:", len(snap.get("external_annotations", [])))
    print(json.dumps(facts))


if __name__ == "__main__":
    main()
