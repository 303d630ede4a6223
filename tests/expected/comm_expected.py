#!/usr/bin/env python3
"""Independent figures of process groups, peers, pipelines and collective bandwidth, stdlib only.

Usage: comm_expected.py OUT.json

Two sources, sharing no code with Strobe:
1. The recordings of tests/tools/record_comm_groups.py (sample-traces/{pairs,ppdp,pp_gpipe,
   pp_1f1b,pp_interleaved}_rankR.json.gz): the truth is each rank's own schedule log
   (tests/expected/comm/NAME_rankR.log.json), written by the script as it ran, never read back
   from a trace. Per scenario:
   - pipelines: the ranks of each pipeline in stage order (the log's `stage_ranks`; for the
     pipelining schedules, rank r holds stages r, r + p, …, so the order is the rank order);
     the data-parallel peers of each stage: the same stage's ranks in the other pipelines;
   - schedule: `gpipe` for the hand-run GPipe, else the log's schedule class
     (ScheduleGPipe → gpipe, Schedule1F1B → 1f1b, ScheduleInterleaved1F1B → interleaved);
     microbatches per step: the log's count (forwards per step of the hand-run ones);
     virtual stages: stages per rank;
   - peers: per rank and direction, how many transfers went to / came from each global rank
     in the profiled steps (the log's `peer`); for the pipelining schedules the log records
     no transfer, so their peers come from the stage layout: stage s's rank exchanges with
     the ranks of stages s ± 1 (counted per direction in `links`: the set of (from, to));
   - collectives (hand-run scenarios): per group description, kind and bytes, how many
     instances the profiled steps ran (each rank of the group logs each instance once).
2. The DDP pair (sample-traces/ddp_rank{0,1}.json.gz), from the raw events: every NCCL kernel
   whose args name a collective, per rank in start order; the k-th of each rank matched;
   bytes = `In msg nelems` × 4 (dtype Float); times in ns (ts, dur in µs as exact decimals,
   × 1000, rounded half-to-even), rank 1 shifted by the collective_end alignment offset of
   ddp.ranks.json (computed by ranks_expected.py); transfer = latest end − latest start;
   algbw = bytes / transfer (GB/s = bytes per ns); busbw = algbw × 2(n−1)/n.
"""
import gzip
import json
import os
import sys
from collections import Counter
from decimal import Decimal

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
LOGS = os.path.join(ROOT, "tests", "expected", "comm")
TRACES = os.path.join(ROOT, "sample-traces")
KIND = {"allreduce": "all_reduce", "allgather": "all_gather", "broadcast": "broadcast"}
SCHED = {"ScheduleGPipe": "gpipe", "Schedule1F1B": "1f1b", "ScheduleInterleaved1F1B": "interleaved"}


def ns(d):
    return int((d * 1000).to_integral_value())


def logs(name):
    out = []
    r = 0
    while os.path.exists(os.path.join(LOGS, f"{name}_rank{r}.log.json")):
        with open(os.path.join(LOGS, f"{name}_rank{r}.log.json")) as f:
            out.append(json.load(f))
        r += 1
    return out


def hand_run(name):
    L = logs(name)
    world = L[0]["world"]
    pp = len(L[0]["stage_ranks"])
    lines = sorted({tuple(l["stage_ranks"]) for l in L})
    pipelines = []
    for line in lines:
        dp = [[o[s] for o in lines if o != line] for s in range(pp)]
        pipelines.append({"stage_order": list(line), "dp_peers": dp})
    peers = Counter()
    coll = Counter()
    steps = set(L[0]["profiled_steps"])
    fwd = Counter()
    for l in L:
        for e in l["events"]:
            if e["step"] not in steps:
                continue
            if e["op"] in ("send", "recv"):
                peers[(l["rank"], e["op"], e["peer"])] += 1
            elif e["op"] in KIND:
                coll[(e["group"], KIND[e["op"]], e["bytes"], tuple(e["group_ranks"]))] += 1
            elif e["op"] == "forward":
                fwd[e["step"]] += 1
    # each rank of a group logs each instance once
    colls = [{"group": g, "kind": k, "bytes": b, "ranks": list(r), "instances": n // len(r)}
             for (g, k, b, r), n in sorted(coll.items())]
    mbs = sorted(fwd.values())[len(fwd) // 2] // world
    return {"world": world, "pipelines": pipelines, "schedule": "gpipe", "microbatches": mbs,
            "virtual_stages": 1,
            "peers": [{"rank": r, "dir": d, "peer": p, "ops": n} for (r, d, p), n in sorted(peers.items())],
            "collectives": colls}


def pipelining(name):
    L = logs(name)
    world = L[0]["world"]
    v = len(L[0]["stage_ids"])
    n_stages = L[0]["n_stages"]
    owner = {s: l["rank"] for l in L for s in l["stage_ids"]}
    links = sorted({(owner[s], owner[s + 1]) for s in range(n_stages - 1)} |
                   {(owner[s + 1], owner[s]) for s in range(n_stages - 1)})
    return {"world": world, "pipelines": [{"stage_order": list(range(world)), "dp_peers": [[] for _ in range(world)]}],
            "schedule": SCHED[L[0]["schedule"]], "microbatches": L[0]["microbatches"], "virtual_stages": v,
            "links": [list(x) for x in links]}


def ddp():
    with open(os.path.join(ROOT, "tests", "expected", "ddp.ranks.json")) as f:
        off = json.load(f)["offsets"]["collective_end"]
    per = []
    for r in (0, 1):
        with gzip.open(os.path.join(TRACES, f"ddp_rank{r}.json.gz"), "rt") as f:
            d = json.load(f, parse_float=Decimal)
        ks = [e for e in d["traceEvents"] if e.get("cat") == "kernel" and "Collective name" in e.get("args", {})]
        ks = [(ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), e["args"]) for e in ks]
        ks.sort(key=lambda k: (k[0], k[1]))
        per.append([(s + off[r], e + off[r], a) for s, e, a in ks])
    n = min(len(p) for p in per)
    out = []
    for k in range(n):
        a = per[0][k][2]
        size = int(a["In msg nelems"]) * 4
        last_start = max(p[k][0] for p in per)
        last_end = max(p[k][1] for p in per)
        t = last_end - last_start
        alg = size / t
        out.append({"k": k, "bytes": size, "group_size": int(a["Group size"]), "transfer_ns": t,
                    "algbw_gbps": alg, "busbw_gbps": alg * 2 * (2 - 1) / 2})
    return out


def main():
    res = {name: hand_run(name) for name in ("pairs", "ppdp")}
    res.update({f"pp_{s}": pipelining(f"pp_{s}") for s in ("gpipe", "1f1b", "interleaved")})
    res["ddp"] = ddp()
    with open(sys.argv[1], "w") as f:
        json.dump(res, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
