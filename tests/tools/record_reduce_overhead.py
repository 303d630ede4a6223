"""Records a PyTorch profiler (Kineto) trace of a small transformer trained under
`torch.compile(mode="reduce-overhead")`, so its forward and backward run as CUDA graphs
(`cudaGraphLaunch` on the host, the graphs' kernels on the GPU):

    python3 tests/tools/record_reduce_overhead.py OUT.json.gz

Three warm-up steps compile and record the graphs; three profiled steps follow
(`ProfilerStep#N`, record_shapes on). Needs one CUDA GPU.
"""

import gzip
import os
import shutil
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

D, HEADS, T, B, LAYERS, VOCAB = 512, 8, 256, 16, 2, 8192


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(D), nn.LayerNorm(D)
        self.qkv, self.proj = nn.Linear(D, 3 * D), nn.Linear(D, D)
        self.fc1, self.fc2 = nn.Linear(D, 4 * D), nn.Linear(4 * D, D)

    def forward(self, x):
        q, k, v = self.qkv(self.ln1(x)).view(B, T, 3, HEADS, D // HEADS).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(B, T, D))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, D)
        self.blocks = nn.Sequential(*[Block() for _ in range(LAYERS)])
        self.head = nn.Linear(D, VOCAB)

    def forward(self, idx):
        return self.head(self.blocks(self.tok(idx)))


def main():
    out = sys.argv[1]
    torch.manual_seed(0)
    model = Model().cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    idx = torch.randint(0, VOCAB, (B, T), device="cuda")

    # The loss is compiled with the model, so nothing outside the graphs reads their outputs.
    @torch.compile(mode="reduce-overhead")
    def forward_loss(idx):
        return F.cross_entropy(model(idx).view(-1, VOCAB), idx.view(-1))

    def step():
        torch.compiler.cudagraph_mark_step_begin()
        loss = forward_loss(idx)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss.detach().clone()

    for _ in range(3):
        step()
    torch.cuda.synchronize()
    acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=acts, record_shapes=True) as prof:
        for _ in range(3):
            step()
            prof.step()
        torch.cuda.synchronize()
    raw = out[:-3] if out.endswith(".gz") else out
    prof.export_chrome_trace(raw)
    if out.endswith(".gz"):
        with open(raw, "rb") as f, gzip.open(out, "wb") as g:
            shutil.copyfileobj(f, g)
        os.remove(raw)
    print("wrote", out, os.path.getsize(out))


if __name__ == "__main__":
    main()
