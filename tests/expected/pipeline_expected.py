#!/usr/bin/env python3
"""Independent figures of a pipeline-parallel set of Kineto traces, stdlib only.

Usage: pipeline_expected.py OUT.json RANK0.json.gz RANK1.json.gz ...

Rules (docs/pipeline.md defines them; this script reads the raw events, sharing no code):
- Time: ts/dur in microseconds as exact decimals, ns = round(d * 1000) (half-to-even),
  end = ts_ns + dur_ns; intervals half-open.
- Rank: `distributedInfo.rank`.
- Transfers: `c10d::send` / `c10d::recv_` cpu_ops; the peer is `Concrete Inputs[2]`. Their
  flight: the `gloo:send` / `gloo:recv` user_annotation of the same thread that starts inside
  the op (else the op itself).
- Stage order: rank a feeds peer b when a's first send to b starts before a's first receive
  from b; the stage is the depth in that graph.
- Steps: `ProfilerStep#N` user_annotations. Microbatches: user_annotations named
  `Forward N` / `Backward N` starting inside the step (outermost per thread).
- Waits (P2P time): each receive's flight minus the cpu_ops (other than c10d::/gloo:/
  record_param_comms) that start inside it on the same thread, plus every c10d op's own span
  (posting a transfer); the union of those.
- work = |union(microbatch ranges) ∩ step − waits|; bubble = step − work; bubble % = 100 ·
  bubble / step; warm-up = the non-work time from the step start to the later of the first
  work start and the completion of the first receive from the upstream stage (the first
  input); cool-down = step end − last work end; P2P wait = |waits ∩ [warm-up end, last work
  end)|.
- Bottleneck: the stage with the largest median work over the steps.
- Schedule: GPipe when every stage runs all its forwards before its backwards; 1F1B when stage
  s runs min(p − s, m) forwards first, then backward/forward alternately, then backwards.
"""
import gzip
import json
import re
import sys
from decimal import Decimal


def ns(d):
    return int((d * 1000).to_integral_value())


def load(path):
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt") as f:
        return json.load(f, parse_float=Decimal)


def union(iv):
    out = []
    for s, e in sorted(x for x in iv if x[1] > x[0]):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return [tuple(x) for x in out]


def intersect(a, b):
    out = []
    for s, e in a:
        for t, u in b:
            lo, hi = max(s, t), min(e, u)
            if hi > lo:
                out.append((lo, hi))
    return union(out)


def subtract(a, b):
    out = []
    for s, e in a:
        cur = [(s, e)]
        for t, u in b:
            nxt = []
            for x, y in cur:
                if u <= x or t >= y:
                    nxt.append((x, y))
                else:
                    if t > x:
                        nxt.append((x, t))
                    if u < y:
                        nxt.append((u, y))
            cur = nxt
        out.extend(cur)
    return union(out)


def total(iv):
    return sum(e - s for s, e in iv)


def median(v):
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) // 2


MB = re.compile(r"^(Forward|Backward) (\d+)$")


def rank_figures(path):
    d = load(path)
    rank = d["distributedInfo"]["rank"]
    evs = []
    for e in d["traceEvents"]:
        if e.get("ph") != "X" or "dur" not in e:
            continue
        s = ns(Decimal(e["ts"]))
        evs.append((s, s + ns(Decimal(e["dur"])), e.get("cat"), e.get("name", ""), e.get("tid"), e.get("args", {})))
    evs.sort(key=lambda x: (x[0], -x[1]))
    ops = []
    for s, t, cat, name, tid, a in evs:
        if cat == "cpu_op" and name in ("c10d::send", "c10d::recv_"):
            peer = int(a["Concrete Inputs"][2])
            ops.append({"dir": "send" if name == "c10d::send" else "recv", "peer": peer, "tid": tid,
                        "start": s, "end": t, "flight": (s, t), "own": False})
    for s, t, cat, name, tid, a in evs:
        if cat == "user_annotation" and name in ("gloo:send", "gloo:recv"):
            dr = name.split(":")[1]
            for o in ops:
                if o["tid"] == tid and o["dir"] == dr and o["start"] <= s <= o["end"] and not o["own"]:
                    o["flight"], o["own"] = (s, t), True
                    break
    waits = []
    for o in ops:
        if o["dir"] != "recv":
            continue
        fs, fe = o["flight"]
        busy = [(s, min(t, fe)) for s, t, cat, name, tid, a in evs
                if cat == "cpu_op" and tid == o["tid"] and fs <= s < fe
                and not (name.startswith("c10d::") or name.startswith("gloo:") or name == "record_param_comms")]
        waits += subtract([(fs, fe)], union(busy))
    waits = union(waits + [(o["start"], o["end"]) for o in ops])
    steps = [(name, s, t) for s, t, cat, name, tid, a in evs
             if cat == "user_annotation" and re.match(r"^ProfilerStep#\d+$", name)]
    mbs = []
    reach = {}
    for s, t, cat, name, tid, a in evs:
        m = MB.match(name) if cat == "user_annotation" else None
        if m and s >= reach.get(tid, -1):
            reach[tid] = t
            mbs.append((m.group(1)[0], int(m.group(2)), s, t))
    return rank, ops, waits, steps, mbs


def main():
    out_path, paths = sys.argv[1], sys.argv[2:]
    ranks = {}
    for p in paths:
        r, ops, waits, steps, mbs = rank_figures(p)
        ranks[r] = (ops, waits, steps, mbs)
    edges = set()
    for r, (ops, _, _, _) in ranks.items():
        for peer in {o["peer"] for o in ops}:
            fs = min((o["start"] for o in ops if o["peer"] == peer and o["dir"] == "send"), default=None)
            fr = min((o["start"] for o in ops if o["peer"] == peer and o["dir"] == "recv"), default=None)
            if fs is not None and (fr is None or fs < fr):
                edges.add((r, peer))
    depth = {}

    def dep(n):
        if n not in depth:
            ins = [a for a, b in edges if b == n]
            depth[n] = 0 if not ins else 1 + max(dep(a) for a in ins)
        return depth[n]

    nodes = {x for e in edges for x in e}
    for n in nodes:
        dep(n)
    order = sorted(nodes, key=lambda n: (depth[n], n))
    p = max(depth.values()) + 1
    first = ranks[order[0]][2]
    out_steps = []
    for name, _, _ in first:
        rows = []
        for r in order:
            ops, waits, steps, mbs = ranks[r]
            st = [x for x in steps if x[0] == name][0]
            t0, t1 = st[1], st[2]
            inside = [m for m in mbs if t0 <= m[2] < t1]
            rng = intersect(union([(m[2], m[3]) for m in inside]), [(t0, t1)])
            w = intersect(waits, [(t0, t1)])
            work = subtract(rng, w)
            wk = total(work)
            row = {"stage": depth[r], "rank": r, "step_ns": t1 - t0, "work_ns": wk, "bubble_ns": t1 - t0 - wk,
                   "forward": sum(1 for m in inside if m[0] == "F"),
                   "backward": sum(1 for m in inside if m[0] == "B"),
                   "sequence": "".join(m[0] for m in sorted(inside, key=lambda m: m[2]))}
            row["bubble_pct"] = 100.0 * row["bubble_ns"] / row["step_ns"]
            ups = [a for a, b in edges if b == r]
            recvs = [o for o in ops if o["dir"] == "recv" and o["peer"] in ups and t0 <= o["start"] < t1]
            wend = work[0][0]
            if recvs:
                wend = max(wend, min(min(recvs, key=lambda o: o["start"])["flight"][1], t1))
            row["warmup_ns"] = (wend - t0) - total(intersect(work, [(t0, wend)]))
            row["cooldown_ns"] = t1 - work[-1][1]
            row["p2p_wait_ns"] = total(intersect(w, [(wend, work[-1][1])]))
            rows.append(row)
        out_steps.append({"name": name, "stages": rows})
    m = median([r["forward"] for s in out_steps for r in s["stages"]])

    def is_gpipe(q):
        f = len(q) - len(q.lstrip("F"))
        return f > 0 and set(q[f:]) <= {"B"} and len(q) == 2 * f

    def is_1f1b(q, s):
        mm = q.count("F")
        w = min(p - s, mm)
        steady = mm - w
        want = "F" * w + "BF" * steady + "B" * (mm - steady)
        return q == want

    seqs = [[r["sequence"] for r in s["stages"]] for s in out_steps]
    if all(all(is_gpipe(q) for q in qs) for qs in seqs):
        sched = "gpipe"
    elif all(all(is_1f1b(q, k) for k, q in enumerate(qs)) for qs in seqs):
        sched = "1f1b"
    else:
        sched = "unknown"
    med_work = {r: median([row["work_ns"] for s in out_steps for row in s["stages"] if row["rank"] == r]) for r in order}
    bottleneck_rank = max(order, key=lambda r: (med_work[r], -depth[r]))
    res = {"stage_order": order, "stages": p, "schedule": sched, "microbatches": m,
           "theoretical_bubble_pct": 100.0 * (p - 1) / (m + p - 1),
           "bottleneck_stage": depth[bottleneck_rank], "bottleneck_rank": bottleneck_rank, "steps": out_steps}
    with open(out_path, "w") as f:
        json.dump(res, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
