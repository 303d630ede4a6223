"""Records sample-traces/pp4_{gpipe,1f1b}_rank{0..3}.json.gz: a 4-stage pipeline on one GPU.

Four processes share GPU 0 (the lent machine has one) and pass activations and gradients with
gloo point-to-point (`dist.recv` / `dist.isend` of CPU tensors: gloo has no CUDA send). The
model is GPT-like (transformer encoder layers), the stages unequal (1, 2, 3, 1 layers: stage 2
is the slowest), 8 microbatches per step. Each microbatch's work is a `record_function`
named as torch.distributed.pipelining's schedules name it: `Forward {i}` / `Backward {i}`,
the receive inside it and the send issued from it. Steps are `ProfilerStep#N` (prof.step()).
GPipe runs stage s on rank s; 1F1B runs stage s on rank ORDER_1F1B[s], so the stage order is
not the rank order. Sends are asynchronous and waited at the end of the step (as the
pipelining schedules do), receives block.

Run:  python3 record_pp4.py OUTDIR   (then gzip OUTDIR/*.json)
"""

import os
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.profiler import ProfilerActivity, profile, record_function, schedule

P, M, LAYERS = 4, 8, [1, 2, 3, 1]
D, S, B = 512, 128, 4
ORDER_1F1B = [1, 3, 0, 2]


def run(rank, sched, order, out, init):
    dist.init_process_group("gloo", init_method=f"file://{init}", rank=rank, world_size=P)
    dev = torch.device("cuda", 0)
    torch.manual_seed(0)
    st = order.index(rank)
    prev = order[st - 1] if st > 0 else None
    nxt = order[st + 1] if st < P - 1 else None
    layer = lambda: torch.nn.TransformerEncoderLayer(D, 8, 4 * D, batch_first=True)
    net = torch.nn.Sequential(*[layer() for _ in range(LAYERS[st])]).to(dev)
    opt = torch.optim.SGD(net.parameters(), lr=1e-3)
    data = torch.randn(M, B, S, D)
    pending, acts = [], {}

    def fwd(i):
        with record_function(f"Forward {i}"):
            if prev is None:
                x = data[i].to(dev)
            else:
                buf = torch.empty(B, S, D)
                dist.recv(buf, prev)
                x = buf.to(dev).requires_grad_()
            y = net(x)
            if nxt is not None:
                c = y.detach().cpu()
                pending.append((dist.isend(c, nxt), c))
            acts[i] = (x, y)

    def bwd(i):
        with record_function(f"Backward {i}"):
            x, y = acts.pop(i)
            if nxt is None:
                y.square().mean().backward()
            else:
                g = torch.empty(B, S, D)
                dist.recv(g, nxt)
                y.backward(g.to(dev))
            if prev is not None:
                c = x.grad.cpu()
                pending.append((dist.isend(c, prev), c))

    acts_ = [ProfilerActivity.CPU, ProfilerActivity.CUDA]
    with profile(activities=acts_, schedule=schedule(wait=1, warmup=1, active=3), record_shapes=True) as prof:
        for _ in range(5):
            if sched == "gpipe":
                for i in range(M):
                    fwd(i)
                for i in range(M):
                    bwd(i)
            else:
                w = min(P - st - 1, M)
                for i in range(w):
                    fwd(i)
                for i in range(M - w):
                    fwd(i + w)
                    bwd(i)
                for i in range(M - w, M):
                    bwd(i)
            for work, _ in pending:
                work.wait()
            pending.clear()
            opt.step()
            opt.zero_grad()
            torch.cuda.synchronize()
            prof.step()
    prof.export_chrome_trace(f"{out}/pp4_{sched}_rank{rank}.json")
    dist.destroy_process_group()


if __name__ == "__main__":
    out = sys.argv[1]
    for sched, order in (("gpipe", [0, 1, 2, 3]), ("1f1b", ORDER_1F1B)):
        init = f"/tmp/pp4_{sched}_init"
        if os.path.exists(init):
            os.remove(init)
        mp.spawn(run, args=(sched, order, out, init), nprocs=P)
    print("torch", torch.__version__, torch.cuda.get_device_name(0))
