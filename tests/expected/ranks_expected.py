#!/usr/bin/env python3
"""Independent oracle for Strobe's multi-rank analyses, from raw Kineto events.

Plain Python (stdlib only), sharing no code with the Rust crates.  Definitions:

- Times: `ts`/`dur` µs as exact decimals -> integer ns (as kineto_expected.py).
- Rank: `distributedInfo.rank`.  Ranks are processed in rank order; the lowest is the reference.
- GPU activity: `X` events of cat kernel / gpu_memcpy / gpu_memset; comm = kernels whose name
  contains nccl/rccl (any case); compute = other kernels.  A rank's unions merge all its devices.
- Steps: `X` named ProfilerStep#N, not cat gpu_user_annotation; a name seen twice keeps the
  earliest.  A step's window is [ts, ts + dur).
- Launch of a GPU op: the cuda_runtime / cuda_driver event with the same args.correlation.
- Collectives: the k-th comm kernel of a name (per rank, ordered by start then end) matches the
  k-th of that name on every rank (k < the smallest count).
- Offsets (ns added to a rank's times): recorded = baseTimeNanoseconds(rank) - base(ref) (0
  when absent); step_start = ref start - rank start of the first step (in the reference's time
  order) every rank has; collective_end = median over matched collectives of (ref end - rank
  end), the median of an even count being floor((a + b) / 2).
- Per collective: arrival = aligned start - earliest aligned start; skew = max arrival; last
  ranks = those with the max.  Its step: for ranks in order, the first whose launch start (else
  kernel start) lies in one of its steps.
- Per step and rank, clipped to the step window: compute, comm, exposed comm = comm - |comm ∩
  compute|, idle = dur - busy, wait = Σ over the step's collectives of (skew - own arrival).
- Exposed wait of rank j at a collective: wait = skew - arrival_j over [raw start_j, raw start_j
  + wait) in its own clock, less the part of that interval under its compute union.  It is
  spent on the lowest of the collective's last ranks.  Per step and rank: exposed_wait = Σ over
  the step's collectives; score = min over the step's ranks of (dur - exposed_wait) / its own.
- Straggler of a step (needs >= 2 ranks and >= 1 collective): for each rank r, blamed = median
  over the other ranks j of the exposed wait j spent on r in the step; net = blamed - r's own
  exposed wait; the rank of the largest net (ties: lower rank), flagged when net > 0 and net >=
  0.1 * median of all step durations (all steps, all ranks).  Kind: persistent when the rank is
  flagged in >= 2 steps and in more than half of the steps with collectives, else one_off;
  usual = median of its blamed over the steps with collectives.  last_at, the others' median
  total wait and its own total wait are reported beside.
- Residual of an alignment: median over matched collectives of (max - min) of aligned ends.
- Evidence "before": the first of the step's collectives where the straggler is last; window =
  [max(step start, latest end <= arrival of its other comm kernels), arrival) in its own clock;
  compute kernels overlapping it grouped by name (count, clipped total, max), top 3 by total
  then name; compute = |compute ∩ window|, gpu idle = window - |busy ∩ window|.
- Distributions: median as above; p90 = nearest rank (ceil(0.9 n)-th smallest); max.
- HTA parity, per rank.  Launch pairs: every GPU op with a cuda_runtime / cuda_driver event of
  the same correlation; delay = op start - (call ts + call dur).  short = kernels < 10 µs;
  shorter_than_launch = call dur <= 50 µs and op dur < call dur; runtime outliers = call dur >
  50 µs; delay outliers = delay > 100 µs; mean delay truncated toward zero.  Queue length per
  (device, stream): +1 at each paired call's ts, -1 at the op's ts, a +1 counted before a -1 at
  the same instant; its maximum.  Memcpy/memset per (device, name): ops and Σ args.bytes.
- Diff (second mode): per name, kernels (cat kernel) and cpu ops (cat cpu_op): count, total;
  delta = B - A; sorted by |delta| descending, then name.

usage: ranks_expected.py ranks RANK_A.json.gz RANK_B.json.gz ... > X.ranks.json
       ranks_expected.py diff A.json.gz B.json.gz > X.diff.json
"""
import gzip
import json
import math
import os
import re
import sys
from collections import defaultdict
from decimal import ROUND_HALF_EVEN, Decimal

STEP_RE = re.compile(r"^ProfilerStep#\d+$")


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return json.loads(f.read(), parse_float=Decimal)


def ns(v):
    return int((Decimal(v) * 1000).to_integral_value(rounding=ROUND_HALF_EVEN))


def union(iv):
    out = []
    for s, e in sorted(x for x in iv if x[1] > x[0]):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def inter(a, b):
    i = j = 0
    out = []
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if hi > lo:
            out.append([lo, hi])
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return out


def length(u):
    return sum(e - s for s, e in u)


def clip(u, s, e):
    return length(inter(u, [[s, e]])) if e > s else 0


def median(v):
    if not v:
        return None
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) // 2


def p90(v):
    v = sorted(v)
    return v[max(1, math.ceil(0.9 * len(v))) - 1] if v else 0


def dist(v):
    return {"count": len(v), "median_ns": median(v) or 0, "p90_ns": p90(v), "max_ns": max(v) if v else 0}


def read_rank(path):
    doc = load(path)
    ev = doc["traceEvents"]
    rank = doc["distributedInfo"]["rank"]
    gpu, steps, launch, calls, ops = [], {}, {}, {}, []
    for e in ev:
        if e.get("ph") != "X":
            continue
        cat = str(e.get("cat", "")).lower()
        name = str(e.get("name", ""))
        s = ns(e["ts"])
        t = s + ns(e.get("dur", 0))
        args = e.get("args") or {}
        if STEP_RE.match(name) and cat != "gpu_user_annotation":
            if name not in steps or s < steps[name][0]:
                steps[name] = (s, t)
        if cat in ("cuda_runtime", "cuda_driver") and "correlation" in args:
            launch[args["correlation"]] = s
            calls[args["correlation"]] = (s, t)
        if cat in ("kernel", "gpu_memcpy", "gpu_memset"):
            if cat != "kernel":
                kind = "memory"
            elif "nccl" in name.lower() or "rccl" in name.lower():
                kind = "comm"
            else:
                kind = "compute"
            gpu.append((s, t, kind, name, args.get("correlation")))
            ops.append((s, t, cat, name, args.get("correlation"), args.get("device", e.get("pid")),
                        args.get("stream", e.get("tid")), args.get("bytes")))
    u = {k: union([[g[0], g[1]] for g in gpu if g[2] == k]) for k in ("compute", "comm")}
    u["busy"] = union([[g[0], g[1]] for g in gpu])
    u["overlap"] = inter(u["comm"], u["compute"])
    comm = sorted(((g[0], g[1], g[3], launch.get(g[4])) for g in gpu if g[2] == "comm"), key=lambda c: (c[0], c[1]))
    return {"rank": rank, "source": os.path.basename(path), "base": doc.get("baseTimeNanoseconds"),
            "steps": sorted(steps.items(), key=lambda kv: kv[1][0]), "u": u, "gpu": gpu, "comm": comm,
            "hta": hta(ops, calls)}


def hta(ops, calls):
    pairs = [(o, calls[o[4]]) for o in ops if o[4] in calls]
    delays = [o[0] - c[1] for o, c in pairs]
    mean = (abs(sum(delays)) // len(delays)) * (1 if sum(delays) >= 0 else -1) if delays else 0
    launch = {"paired": len(pairs), "launch_delay": dist(delays), "mean_launch_delay_ns": mean,
              "cpu_duration": dist([c[1] - c[0] for _, c in pairs]),
              "gpu_duration": dist([o[1] - o[0] for o, _ in pairs]),
              "short_kernels": sum(1 for o, _ in pairs if o[2] == "kernel" and o[1] - o[0] < 10000),
              "shorter_than_launch": sum(1 for o, c in pairs if c[1] - c[0] <= 50000 and o[1] - o[0] < c[1] - c[0]),
              "runtime_outliers": sum(1 for _, c in pairs if c[1] - c[0] > 50000),
              "launch_delay_outliers": sum(1 for d in delays if d > 100000)}
    events = defaultdict(list)
    for o, c in pairs:
        events[(o[5], o[6])] += [(c[0], 1), (o[0], -1)]
    queue = []
    for key in sorted(events):
        n = peak = 0
        for _, d in sorted(events[key], key=lambda x: (x[0], -x[1])):
            n += d
            peak = max(peak, n)
        queue.append({"device": key[0], "stream": key[1], "max_len": peak})
    mem = defaultdict(lambda: [0, 0])
    for o in ops:
        if o[2] != "kernel":
            m = mem[(o[5], o[3])]
            m[0] += 1
            m[1] += int(o[7] or 0)
    memcpy = [{"device": k[0], "name": k[1], "ops": v[0], "bytes": v[1]} for k, v in sorted(mem.items())]
    return {"launch": launch, "queue": queue, "memcpy": memcpy}


def exposed(c, i, r):
    wait = c["skew_ns"] - c["arrival_ns"][i]
    if wait <= 0:
        return 0
    s = c["raw_start"][i]
    return wait - clip(r["u"]["compute"], s, s + wait)


def step_of(r, t):
    for name, (s, e) in r["steps"]:
        if s <= t < e:
            return name
    return None


def ranks_mode(paths):
    R = sorted((read_rank(p) for p in paths), key=lambda r: r["rank"])
    ref = R[0]
    # matched collectives: (name, k, [index per rank])
    occ = defaultdict(lambda: [[] for _ in R])
    for i, r in enumerate(R):
        for j, c in enumerate(r["comm"]):
            occ[c[2]][i].append(j)
    matched = []
    for name, lists in occ.items():
        for k in range(min(len(x) for x in lists)):
            matched.append((name, k, [x[k] for x in lists]))
    matched.sort(key=lambda m: (ref["comm"][m[2][0]][0], m[0], m[1]))

    offsets = {"recorded": [(r["base"] - ref["base"]) if (r["base"] is not None and ref["base"] is not None) else 0 for r in R]}
    common = [n for n, _ in ref["steps"] if all(n in dict(r["steps"]) for r in R)]
    offsets["step_start"] = [dict(ref["steps"])[common[0]][0] - dict(r["steps"])[common[0]][0] for r in R] if common else None
    offsets["collective_end"] = ([median([ref["comm"][m[2][0]][1] - r["comm"][m[2][i]][1] for m in matched])
                                  for i, r in enumerate(R)] if matched and len(R) > 1 else None)
    used = "collective_end" if offsets["collective_end"] is not None else "recorded"
    off = offsets[used]
    residual = {}
    for key, o in offsets.items():
        if o is None or len(R) < 2 or not matched:
            residual[key] = None
            continue
        ends = [[R[i]["comm"][m[2][i]][1] + o[i] for i in range(len(R))] for m in matched]
        residual[key] = median([max(e) - min(e) for e in ends])

    colls = []
    for name, k, idx in matched:
        ks = [R[i]["comm"][j] for i, j in enumerate(idx)]
        starts = [c[0] + off[i] for i, c in enumerate(ks)]
        first, last = min(starts), max(starts)
        step = None
        for i, c in enumerate(ks):
            step = step_of(R[i], c[3] if c[3] is not None else c[0])
            if step:
                break
        colls.append({"name": name, "occurrence": k, "step": step,
                      "arrival_ns": [s - first for s in starts], "skew_ns": last - first,
                      "last_ranks": [R[i]["rank"] for i, s in enumerate(starts) if s == last],
                      "raw_start": [c[0] for c in ks], "min_start": first})
    colls.sort(key=lambda c: (c["min_start"], c["name"], c["occurrence"]))

    names = sorted({n for r in R for n, _ in r["steps"]}, key=lambda n: (int(n.split("#")[1]), n))
    table = []
    for name in names:
        mine = [c for c in colls if c["step"] == name]
        per = []
        for i, r in enumerate(R):
            st = dict(r["steps"]).get(name)
            if st is None:
                continue
            s, e = st
            comm = clip(r["u"]["comm"], s, e)
            per.append({"rank": r["rank"], "start_ns": s, "dur_ns": e - s,
                        "compute_ns": clip(r["u"]["compute"], s, e), "comm_ns": comm,
                        "exposed_comm_ns": comm - clip(r["u"]["overlap"], s, e),
                        "idle_ns": (e - s) - clip(r["u"]["busy"], s, e),
                        "wait_ns": sum(c["skew_ns"] - c["arrival_ns"][i] for c in mine),
                        "exposed_wait_ns": sum(exposed(c, i, r) for c in mine)})
        own = [p["dur_ns"] - p["exposed_wait_ns"] for p in per]
        for p, t in zip(per, own):
            p["score"] = min(own) / t if t > 0 else 1.0
        table.append({"name": name, "per_rank": per, "collective_skew_ns": [c["skew_ns"] for c in mine],
                      "straggler": None, "straggler_kind": None})

    med_step = median([p["dur_ns"] for row in table for p in row["per_rank"]]) or 0
    threshold = 0.1 * med_step
    found = []
    blamed_by = defaultdict(list)
    with_colls = 0
    for row in table:
        mine = [c for c in colls if c["step"] == row["name"]]
        if not mine or len(R) < 2:
            continue
        with_colls += 1
        spent = defaultdict(int)
        for c in mine:
            t = next(k for k, r in enumerate(R) if r["rank"] == min(c["last_ranks"]))
            for j, r in enumerate(R):
                if j != t:
                    spent[(j, t)] += exposed(c, j, r)
        present = {p["rank"] for p in row["per_rank"]}
        best = None
        for idx, r in enumerate(R):
            if r["rank"] not in present:
                continue
            blamed = median([spent[(j, idx)] for j, q in enumerate(R) if j != idx and q["rank"] in present]) or 0
            blamed_by[idx].append(blamed)
            own_x = next(p["exposed_wait_ns"] for p in row["per_rank"] if p["rank"] == r["rank"])
            if best is None or blamed - own_x > best[0]:
                best = (blamed - own_x, idx, blamed, own_x)
        if best and best[0] > 0 and best[0] >= threshold:
            found.append((row, best))
    flags = defaultdict(int)
    for _, b in found:
        flags[b[1]] += 1
    by_step = []
    for row, (net, i, blamed, own_x) in found:
        mine = [c for c in colls if c["step"] == row["name"]]
        rank = R[i]["rank"]
        n = sum(1 for c in mine if rank in c["last_ranks"])
        mw = median([p["wait_ns"] for p in row["per_rank"] if p["rank"] != rank])
        own = next((p["wait_ns"] for p in row["per_rank"] if p["rank"] == rank), 0)
        kind = "persistent" if flags[i] >= 2 and 2 * flags[i] > with_colls else "one_off"
        row["straggler_kind"] = kind
        row["straggler"] = rank
        r = R[i]
        c = next(c for c in mine if rank in c["last_ranks"])
        arrival = c["raw_start"][i]
        prev = [k[1] for k in r["comm"] if k[1] <= arrival and k[0] != arrival]
        step_start = dict(r["steps"]).get(row["name"], (None,))[0]
        cands = [x for x in (max(prev) if prev else None, step_start) if x is not None]
        w0 = min(max(cands), arrival) if cands else arrival
        agg = defaultdict(lambda: [0, 0, 0])
        for g in r["gpu"]:
            if g[2] != "compute":
                continue
            d = min(g[1], arrival) - max(g[0], w0)
            if d > 0 and g[0] < arrival and g[1] > w0:
                a = agg[g[3]]
                a[0] += 1
                a[1] += d
                a[2] = max(a[2], d)
        top = sorted(({"name": k, "count": v[0], "total_ns": v[1], "max_ns": v[2]} for k, v in agg.items()),
                     key=lambda x: (-x["total_ns"], x["name"]))[:3]
        by_step.append({"step": row["name"], "rank": rank, "kind": kind, "blamed_exposed_wait_ns": blamed,
                        "own_exposed_wait_ns": own_x, "usual_blamed_ns": median(blamed_by[i]) or 0,
                        "last_at": n, "collectives": len(mine),
                        "median_others_wait_ns": mw, "own_wait_ns": own,
                        "before": {"collective": c["name"], "occurrence": c["occurrence"],
                                   "window_start_ns": w0, "window_end_ns": arrival,
                                   "compute_ns": clip(r["u"]["compute"], w0, arrival),
                                   "gpu_idle_ns": (arrival - w0) - clip(r["u"]["busy"], w0, arrival),
                                   "top_kernels": top}})
    summary = []
    for r in R:
        mine = [p for row in table for p in row["per_rank"] if p["rank"] == r["rank"]]
        summary.append({"rank": r["rank"], "step_time": dist([p["dur_ns"] for p in mine]),
                        "wait": dist([p["wait_ns"] for p in mine])})
    for c in colls:
        del c["raw_start"], c["min_start"]
    return {"ranks": [{"rank": r["rank"], "source": r["source"], "hta": r["hta"]} for r in R], "offsets": offsets, "residual": residual,
            "alignment_used": used, "collectives": colls, "steps": table, "median_step_ns": med_step,
            "straggler_steps": by_step, "rank_summary": summary}


def diff_mode(a, b):
    def totals(path, cat):
        t = defaultdict(lambda: [0, 0])
        for e in load(path)["traceEvents"]:
            if e.get("ph") == "X" and str(e.get("cat", "")).lower() == cat:
                x = t[str(e.get("name", ""))]
                x[0] += 1
                x[1] += ns(e.get("dur", 0))
        return t

    out = {}
    for key, cat in (("kernels", "kernel"), ("cpu_ops", "cpu_op")):
        ta, tb = totals(a, cat), totals(b, cat)
        rows = []
        for n in set(ta) | set(tb):
            ca, sa = ta.get(n, [0, 0])
            cb, sb = tb.get(n, [0, 0])
            rows.append({"name": n, "count_a": ca, "count_b": cb, "total_a_ns": sa, "total_b_ns": sb,
                         "delta_ns": sb - sa,
                         "status": "added" if ca == 0 else "removed" if cb == 0 else "both"})
        rows.sort(key=lambda r: (-abs(r["delta_ns"]), r["name"]))
        out[key] = rows
    return out


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] not in ("ranks", "diff"):
        sys.exit(__doc__)
    res = ranks_mode(sys.argv[2:]) if sys.argv[1] == "ranks" else diff_mode(sys.argv[2], sys.argv[3])
    json.dump(res, sys.stdout, indent=1, ensure_ascii=False)
    sys.stdout.write("\n")
