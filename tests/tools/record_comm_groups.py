"""Records the process-group fixtures: pipelines whose P2P runs on per-stage-pair groups, a
pipeline × data-parallel job, and torch.distributed.pipelining's schedules. Each rank also
writes the schedule it ran (`NAME_rankR.log.json`): every transfer with its *global* peer,
group and size, and every collective with its group and size, in the order issued. The oracle
(tests/expected/comm_expected.py) reads those logs, never Strobe's output.

Scenarios (gloo on CPU by default; `--backend nccl` puts the tensors on GPU rank % ngpu):
- `pairs`: 4 ranks, 4 stages in the order STAGE_RANKS (not the rank order), each neighbouring
  pair on its own group (`pp_A_to_B`), GPipe by hand with no per-microbatch annotations;
  then an all-reduce on the default group.
- `ppdp`: 8 ranks, two such pipelines side by side (ranks 0-3 and 4-7), each stage's two
  replicas on a data-parallel group (`dp_stageS`) that all-reduces, all-gathers and
  broadcasts; rank 5 arrives late at the data-parallel all-reduce of one step (a one-off
  straggler).
- `gpipe`, `1f1b`, `interleaved`: torch.distributed.pipelining (ScheduleGPipe, Schedule1F1B,
  ScheduleInterleaved1F1B with two stages a rank) on 4 ranks, the stages on a pipeline group.

Run:  python3 record_comm_groups.py OUTDIR [SCENARIO ...] [--backend nccl]  (then gzip OUTDIR/*.json)
"""

import json
import os
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.profiler import ProfilerActivity, profile, schedule

PP = 4
STAGE_RANKS = [2, 0, 3, 1]  # stage s runs on rank STAGE_RANKS[s] (in each pipeline)
M = 4  # microbatches per step
D, B = 256, 8
STEPS = 3  # profiled: wait 0, warm-up 1, active STEPS - 1
LATE_RANK, LATE_STEP, LATE_S = 5, 1, 0.03
# steps 1 and 2 are kept (step 0 warms up); written once, when the last active step ends
SCHEDULE = schedule(wait=0, warmup=1, active=STEPS - 1, repeat=1)


def saver(path):
    return lambda prof: prof.export_chrome_trace(path)


class Log:
    """The schedule a rank ran, in order: what the oracle reads."""

    def __init__(self, rank):
        self.rank = rank
        self.step = -1
        self.events = []

    def add(self, **kw):
        kw["step"] = self.step
        self.events.append(kw)


def group_of(groups, a, b):
    return groups[tuple(sorted((a, b)))]


def dev_of(backend, rank):
    if backend == "nccl":
        return torch.device("cuda", rank % torch.cuda.device_count())
    return torch.device("cpu")


def run_pairs(rank, world, out, init, name, backend):
    """GPipe by hand over per-pair groups (and data-parallel groups when world > PP)."""
    dist.init_process_group(backend, init_method=f"file://{init}", rank=rank, world_size=world)
    dev = dev_of(backend, rank)
    dp = world // PP
    # every rank creates every group, in the same order (new_group's rule)
    pair_groups, pair_names = {}, {}
    for d in range(dp):
        order = [d * PP + r for r in STAGE_RANKS]
        for s in range(PP - 1):
            a, b = order[s], order[s + 1]
            key = tuple(sorted((a, b)))
            nm = f"pp_{a}_to_{b}"
            pair_groups[key] = dist.new_group(list(key), group_desc=nm)
            pair_names[key] = nm
    dp_groups = {}
    if dp > 1:
        for s in range(PP):
            members = [d * PP + STAGE_RANKS[s] for d in range(dp)]
            dp_groups[s] = (dist.new_group(members, group_desc=f"dp_stage{s}"), members, f"dp_stage{s}")
    d = rank // PP
    order = [d * PP + r for r in STAGE_RANKS]
    st = order.index(rank)
    prev = order[st - 1] if st > 0 else None
    nxt = order[st + 1] if st < PP - 1 else None
    torch.manual_seed(st)
    net = torch.nn.Sequential(torch.nn.Linear(D, D), torch.nn.ReLU(), torch.nn.Linear(D, D)).to(dev)
    log = Log(rank)
    acts = {}

    def xfer(kind, t, peer):
        g = group_of(pair_groups, rank, peer)
        t0 = time.time_ns()
        if kind == "send":
            dist.send(t, peer, group=g)
        else:
            dist.recv(t, peer, group=g)
        log.add(
            op=kind,
            peer=peer,
            group=pair_names[tuple(sorted((rank, peer)))],
            group_ranks=sorted((rank, peer)),
            nelems=t.numel(),
            bytes=t.numel() * t.element_size(),
            t0=t0,
            t1=time.time_ns(),
        )

    def fwd(i):
        if prev is None:
            x = torch.randn(B, D, device=dev)
        else:
            x = torch.empty(B, D, device=dev)
            xfer("recv", x, prev)
            x.requires_grad_()
        log.add(op="forward", mb=i)
        y = net(x)
        if nxt is not None:
            xfer("send", y.detach().contiguous(), nxt)
        acts[i] = (x, y)

    def bwd(i):
        x, y = acts.pop(i)
        log.add(op="backward", mb=i)
        if nxt is None:
            y.square().mean().backward()
        else:
            g = torch.empty(B, D, device=dev)
            xfer("recv", g, nxt)
            y.backward(g)
        if prev is not None:
            xfer("send", x.grad.contiguous(), prev)

    def coll(kind, fn, t_bytes, group_name, members):
        t0 = time.time_ns()
        fn()
        log.add(op=kind, group=group_name, group_ranks=members, bytes=t_bytes, t0=t0, t1=time.time_ns())

    flat = torch.zeros(sum(p.numel() for p in net.parameters()), device=dev)
    acts_ = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if backend == "nccl" else [])
    path = f"{out}/{name}_rank{rank}.json"
    with profile(activities=acts_, schedule=SCHEDULE, record_shapes=True, on_trace_ready=saver(path)) as prof:
        for step in range(STEPS):
            log.step = step
            for i in range(M):
                fwd(i)
            for i in range(M):
                bwd(i)
            if dp > 1:
                g, members, gname = dp_groups[st]
                if rank == LATE_RANK and step == LATE_STEP:
                    log.add(op="late", seconds=LATE_S)
                    time.sleep(LATE_S)
                coll("allreduce", lambda: dist.all_reduce(flat, group=g), flat.numel() * 4, gname, members)
                part = torch.ones(4096, device=dev)
                outs = [torch.empty_like(part) for _ in members]
                coll("allgather", lambda: dist.all_gather(outs, part, group=g), 4096 * 4 * len(members), gname, members)
                coll("broadcast", lambda: dist.broadcast(part, members[0], group=g), 4096 * 4, gname, members)
            loss = torch.ones(1024, device=dev)
            coll("allreduce", lambda: dist.all_reduce(loss), 1024 * 4, "default_pg", list(range(world)))
            prof.step()
    with open(f"{out}/{name}_rank{rank}.log.json", "w") as f:
        json.dump({"rank": rank, "world": world, "stage_ranks": order, "profiled_steps": list(range(1, STEPS)),
                   "events": log.events}, f)
    dist.destroy_process_group()


def run_pipelining(rank, world, out, init, name, backend):
    """torch.distributed.pipelining's schedules on a pipeline group (the default one's ranks)."""
    from torch.distributed.pipelining import PipelineStage, Schedule1F1B, ScheduleGPipe, ScheduleInterleaved1F1B

    dist.init_process_group(backend, init_method=f"file://{init}", rank=rank, world_size=world)
    dev = dev_of(backend, rank)
    pp_group = dist.new_group(list(range(world)), group_desc="pp")
    n_local = 2 if name == "interleaved" else 1
    n_stages = world * n_local
    stage_ids = [rank + k * world for k in range(n_local)]
    mbs = 8
    stages = []
    for sid in stage_ids:
        torch.manual_seed(sid)
        mod = torch.nn.Sequential(torch.nn.Linear(D, D), torch.nn.ReLU()).to(dev)
        stages.append(PipelineStage(mod, sid, n_stages, dev, group=pp_group))
    loss_fn = torch.nn.MSELoss()
    if name == "gpipe":
        sched = ScheduleGPipe(stages[0], mbs, loss_fn=loss_fn)
    elif name == "1f1b":
        sched = Schedule1F1B(stages[0], mbs, loss_fn=loss_fn)
    else:
        sched = ScheduleInterleaved1F1B(stages, mbs, loss_fn=loss_fn)
    x = torch.randn(mbs * B, D, device=dev)
    y = torch.randn(mbs * B, D, device=dev)
    acts_ = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if backend == "nccl" else [])
    path = f"{out}/pp_{name}_rank{rank}.json"
    with profile(activities=acts_, schedule=SCHEDULE, record_shapes=True, on_trace_ready=saver(path)) as prof:
        for step in range(STEPS):
            kw = {}
            if 0 in stage_ids:
                kw_args = (x,)
            else:
                kw_args = ()
            if n_stages - 1 in stage_ids:
                kw["target"] = y
                kw["losses"] = []
            sched.step(*kw_args, **kw)
            prof.step()
    order = getattr(sched, "pipeline_order", None)
    mine = None
    if isinstance(order, dict):
        mine = [None if a is None else str(a) for a in order.get(rank, [])]
    with open(f"{out}/pp_{name}_rank{rank}.log.json", "w") as f:
        json.dump({"rank": rank, "world": world, "schedule": type(sched).__name__, "stage_ids": stage_ids,
                   "n_stages": n_stages, "microbatches": mbs, "profiled_steps": list(range(1, STEPS)),
                   "pipeline_order": mine, "torch": torch.__version__}, f)
    dist.destroy_process_group()


def main():
    args = sys.argv[1:]
    backend = "gloo"
    if "--backend" in args:
        i = args.index("--backend")
        backend = args[i + 1]
        del args[i : i + 2]
    out = args[0]
    todo = args[1:] or ["pairs", "ppdp", "gpipe", "1f1b", "interleaved"]
    os.makedirs(out, exist_ok=True)
    for name in todo:
        init = f"/tmp/comm_groups_{name}_init"
        if os.path.exists(init):
            os.remove(init)
        if name in ("pairs", "ppdp"):
            world = PP * (2 if name == "ppdp" else 1)
            mp.spawn(run_pairs, args=(world, out, init, name, backend), nprocs=world)
        else:
            mp.spawn(run_pipelining, args=(PP, out, init, name, backend), nprocs=PP)
        print("recorded", name, flush=True)
    print("torch", torch.__version__)


if __name__ == "__main__":
    main()
