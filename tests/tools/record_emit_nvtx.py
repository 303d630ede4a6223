"""Records a real Nsight Systems capture of PyTorch's NVTX op ranges with shapes, the way
Megatron-LM's `--profile` does (`cudaProfilerStart` then
`torch.autograd.profiler.emit_nvtx(record_shapes=True).__enter__()`), for
sample-traces/nsys_emit_nvtx_gpt.sqlite (tests/tools/record_gpu_session.sh emit runs it).

A small GPT-like model (bf16 autocast, causal attention through scaled_dot_product_attention,
AdamW) trains 6 steps; steps 2..5 are captured, each an NVTX range `step_N`. Needs one CUDA
GPU, torch and nsys:

    nsys profile --trace=cuda,nvtx --capture-range=cudaProfilerApi --capture-range-end=stop \
        -o emit_nvtx_gpt python3 tests/tools/record_emit_nvtx.py
    nsys export --type sqlite -o emit_nvtx_gpt.sqlite emit_nvtx_gpt.nsys-rep

(nsys's own `--pytorch=autograd-shapes-nvtx` turns the same ranges on without a code change.)
Keep the export under 2 MB for sample-traces/ (fewer layers or steps if it is larger), then
regenerate the oracle: python3 tests/expected/nsys_emit_nvtx_expected.py FILE.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

STEPS, CAPTURE_FROM = 6, 2
LAYERS, D, HEADS, T, B, VOCAB = 2, 1024, 16, 1024, 8, 32768


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(D), nn.LayerNorm(D)
        self.qkv, self.proj = nn.Linear(D, 3 * D, bias=False), nn.Linear(D, D, bias=False)
        self.fc1, self.fc2 = nn.Linear(D, 4 * D), nn.Linear(4 * D, D)

    def forward(self, x):
        q, k, v = self.qkv(self.ln1(x)).view(B, T, 3, HEADS, D // HEADS).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(B, T, D))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok, self.pos = nn.Embedding(VOCAB, D), nn.Embedding(T, D)
        self.blocks = nn.ModuleList(Block() for _ in range(LAYERS))
        self.ln, self.head = nn.LayerNorm(D), nn.Linear(D, VOCAB, bias=False)

    def forward(self, idx):
        x = self.tok(idx) + self.pos(torch.arange(T, device=idx.device))
        for b in self.blocks:
            x = b(x)
        return self.head(self.ln(x))


def main():
    torch.manual_seed(0)
    model = GPT().cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    nvtx = None
    for i in range(STEPS):
        if i == CAPTURE_FROM:
            torch.cuda.synchronize()
            torch.cuda.cudart().cudaProfilerStart()
            nvtx = torch.autograd.profiler.emit_nvtx(record_shapes=True)
            nvtx.__enter__()
        torch.cuda.nvtx.range_push(f"step_{i}")
        idx = torch.randint(0, VOCAB, (B, T), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(idx)
        loss = F.cross_entropy(logits.float().view(-1, VOCAB), idx.view(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        loss.item()
        torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()
    if nvtx is not None:
        nvtx.__exit__(None, None, None)
    torch.cuda.cudart().cudaProfilerStop()


if __name__ == "__main__":
    main()
