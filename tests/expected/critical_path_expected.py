#!/usr/bin/env python3
"""Independent oracle for the critical path of each step (stdlib only).

Usage: python3 tests/expected/critical_path_expected.py sample-traces/gpt_train.json.gz \
           > tests/expected/gpt_train.critical_path.json

Written from the definition in docs/critical_path.md (HTA's lightweight critical path), reading
the Kineto JSON directly; it shares no code with the Rust crates.

Rules:
- Time: ts/dur are microsecond decimals; ns = round(d * 1000), ts and dur separately, end = ts + dur.
- Steps: every `ProfilerStep#N` range (cpu_op or user_annotation), sorted by start.
- Step events: CPU events (cat cpu_op, cuda_runtime, cuda_driver) and data-loading ranges
  (cat cpu_op, user_annotation, python_function named `enumerate(DataLoader)...`, or `data`,
  `data_loading`, `dataloader`, `## data ##`, ...) that start in [step start, step end] and
  last > 0; GPU ops (cat kernel, gpu_memcpy, gpu_memset) whose launch call (same
  `correlation`, a cuda_runtime/cuda_driver event) starts in the step and lasts > 0.
- Threads: the single tid with cpu_op/user_annotation names containing "forward" and the
  single tid with names containing "autograd" (in the step) are walked as one thread.
- Per thread, events by (start, -end) nested by time; depth-first walk: on entering an event,
  an edge from the last node to its start (weightless when nothing is open, else timed);
  on leaving, an edge from the last node to its end (weightless for cudaDeviceSynchronize,
  cudaStreamSynchronize, cudaEventQuery, cudaEventSynchronize, cudaMemcpy). Time of an edge is
  the source event's if it leaves a start, the destination's if it reaches an end, else the
  parent's. Edges between two lock calls (cudaLaunchKernel, cudaMemcpyAsync, cudaHostAlloc)
  other than end->start are left to the lock rule: lock calls' nodes in time order (ends
  first at equal times); at an end, each start seen since links to it (its own start with
  the call's duration), and the previous end links to it.
- GPU: per stream (pid, tid) in start order: op start->end timed; stream waits: on one
  thread, cudaEventRecord marks the op launched last before it, cudaStreamWaitEvent arms it,
  and the next launch's op (on another stream, starting after it ends) waits for it. Launch
  edge (launch start -> op start) when the stream was empty (previous op of the stream in the
  whole trace started by the launch, next op launched after this op started), the previous
  step op of the stream ended before the launch, and any waited-for op ended before the
  launch; else a gap edge from the previous op's end when the gap < 1.5 ms and any waited-for
  op ended before the previous op.
- CPU waits: cudaMemcpy/cudaMemcpyAsync whose own copy ends during the call; for
  cudaDeviceSynchronize each stream's last op launched before the call if it ends during the
  call; for cudaStreamSynchronize/cudaEventSynchronize the one of those ending last during
  the call. Edge: op end -> call end, weightless.
- Longest path by weight (Kahn order); bounds: launch edge -> launch overhead, gap edge ->
  kernel gap, timed edge charged to a GPU op -> comm if its name has "nccl"/"rccl" (any case)
  else compute, to a CPU event inside a data range -> data loading, else CPU.
- top op of an edge: a GPU op's launching call's innermost enclosing cpu_op (or the call);
  a CPU event's innermost enclosing cpu_op including itself (or itself).
Output: [{step, length_ns, bounds{...}, top_ops[[name, ns]] (5)}].
"""
import gzip
import json
import sys
from collections import defaultdict
from decimal import Decimal, ROUND_HALF_EVEN

LOCK = {"cudaLaunchKernel", "cudaMemcpyAsync", "cudaHostAlloc"}
BLOCKING = {"cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventQuery", "cudaEventSynchronize", "cudaMemcpy"}
GAP_LIMIT = 1_500_000


def ns(x):
    return int((Decimal(str(x)) * 1000).quantize(Decimal(1), rounding=ROUND_HALF_EVEN))


def is_data(n):
    if n.startswith("enumerate(DataLoader)"):
        return True
    core = n.strip("# \t").lower()
    return core in ("data", "data_loading", "data loading", "dataloader", "data_load", "load_data")


def is_comm(n):
    n = n.lower()
    return "nccl" in n or "rccl" in n


def load(path):
    raw = gzip.open(path).read() if path.endswith(".gz") else open(path, "rb").read()
    d = json.loads(raw, parse_float=Decimal)
    evs = d["traceEvents"] if isinstance(d, dict) else d
    out = []
    for e in evs:
        if e.get("ph") != "X" or "dur" not in e:
            continue
        s = ns(e["ts"])
        out.append(dict(name=e.get("name", ""), cat=e.get("cat", ""), pid=e.get("pid"), tid=e.get("tid"),
                        s=s, e=s + ns(e["dur"]), args=e.get("args") or {}))
    return out


def step_path(evs, t0, t1, gpu_by_stream, launch_of):
    ev = []
    for x in evs:
        if not (t0 <= x["s"] <= t1) or x["e"] <= x["s"]:
            continue
        node = x["cat"] in ("cpu_op", "cuda_runtime", "cuda_driver")
        data = x["cat"] in ("cpu_op", "user_annotation", "python_function") and is_data(x["name"])
        if node or data:
            ev.append(dict(x, gpu=False, data=data, op=None, in_data=False, orig=id(x)))
    marks = defaultdict(set)
    for x in evs:
        if t0 <= x["s"] <= t1 and x["e"] > x["s"] and x["cat"] in ("cpu_op", "user_annotation"):
            if "forward" in x["name"]:
                marks["f"].add(x["tid"])
            if "autograd" in x["name"]:
                marks["b"].add(x["tid"])
    ncpu = len(ev)
    index = {x["orig"]: i for i, x in enumerate(ev)}
    for key, ops in gpu_by_stream.items():
        for k, g in enumerate(ops):
            L = launch_of.get(id(g))
            if L is None or not (t0 <= L["s"] <= t1) or L["e"] <= L["s"]:
                continue
            before = k == 0 or ops[k - 1]["s"] <= L["s"]
            nl = launch_of.get(id(ops[k + 1])) if k + 1 < len(ops) else None
            after = nl is None or nl["s"] > g["s"]
            ev.append(dict(g, gpu=True, stream=key, launch=index.get(id(L)), launch_s=L["s"], qempty=before and after,
                           op=None))
    N = len(ev)
    edges = []  # (u, v, w, kind, charged)

    def ts(n):
        return ev[n // 2]["s"] if n % 2 == 0 else ev[n // 2]["e"]

    def add(u, v, kind, w, at):
        if u == v:
            return
        if kind in ("dep", "sync"):
            w = 0
        edges.append((u, v, max(w, 0), kind, at))

    merged = None
    if len(marks["f"]) == 1 and len(marks["b"]) == 1 and marks["f"] != marks["b"]:
        merged = (next(iter(marks["f"])), next(iter(marks["b"])))
    thr = lambda t: merged[0] if merged and t == merged[1] else t
    lock = lambda n: ev[n // 2]["name"] in LOCK
    shares = lambda a, b: lock(a) and lock(b) and (a % 2 == 0 or b % 2 == 1)

    def charged(u, v, parent):
        if u % 2 == 0:
            return u // 2
        if v % 2 == 1:
            return v // 2
        return parent

    groups = defaultdict(list)
    for i in range(ncpu):
        groups[(ev[i]["pid"], thr(ev[i]["tid"]))].append(i)
    for key in groups:
        order = sorted(groups[key], key=lambda i: (ev[i]["s"], -ev[i]["e"]))
        st = {"last": None, "parent": None, "stack": []}

        def leave():
            i = st["stack"].pop()
            parent = st["stack"][-1] if st["stack"] else None
            end = 2 * i + 1
            last = st["last"]
            if last is not None and not shares(last, end):
                w = 0 if ev[i]["name"] in BLOCKING else ts(end) - ts(last)
                add(last, end, "op", w, charged(last, end, st["parent"]))
            st["last"], st["parent"] = end, parent

        for i in order:
            while st["stack"] and (ev[st["stack"][-1]]["e"] <= ev[i]["s"] or ev[i]["e"] > ev[st["stack"][-1]]["e"]):
                leave()
            parent = st["stack"][-1] if st["stack"] else None
            x = ev[i]
            if parent is None:
                x["op"], x["in_data"] = None, False
                op_from_parent = None
            else:
                op_from_parent = ev[parent]["op"]
                x["in_data"] = ev[parent]["in_data"]
            x["op"] = i if x["cat"] == "cpu_op" else (op_from_parent if op_from_parent is not None else i)
            x["in_data"] = x["in_data"] or x["data"]
            start = 2 * i
            last = st["last"]
            if last is not None and not shares(last, start):
                kind = "dep" if not st["stack"] else "op"
                add(last, start, kind, ts(start) - ts(last), charged(last, start, st["parent"]))
            st["last"], st["parent"] = start, parent
            st["stack"].append(i)
        while st["stack"]:
            leave()

    # the runtime lock
    nodes = [n for i in range(ncpu) if ev[i]["name"] in LOCK for n in (2 * i, 2 * i + 1)]
    nodes.sort(key=lambda n: (ts(n), n % 2 == 0, n))
    starts, last = [], None
    for n in nodes:
        if n % 2 == 0:
            starts.append(n)
        else:
            while starts:
                s = starts.pop()
                if s // 2 == n // 2:
                    add(s, n, "op", ts(n) - ts(s), n // 2)
                else:
                    add(s, n, "dep", 0, None)
            if last is not None and last % 2 == 1:
                add(last, n, "dep", 0, None)
        last = n

    # GPU
    launched = {}
    for j in range(ncpu, N):
        L = ev[j]["launch"]
        if L is not None:
            launched[L] = j
            ev[j]["op"] = ev[L]["op"]
        else:
            ev[j]["op"] = j
    waits = {}
    calls = sorted((i for i in range(ncpu) if ev[i]["name"] in ("cudaEventRecord", "cudaEventRecordWithFlags",
                                                               "cudaStreamWaitEvent") or i in launched),
                   key=lambda i: (ev[i]["pid"], ev[i]["tid"], ev[i]["s"], i))
    cur = None
    for c in calls:
        key = (ev[c]["pid"], ev[c]["tid"])
        if key != cur:
            cur, last_l, rec, pend = key, None, None, None
        if ev[c]["name"] in ("cudaEventRecord", "cudaEventRecordWithFlags"):
            rec = last_l
        if ev[c]["name"] == "cudaStreamWaitEvent":
            pend = rec
        if c in launched:
            d = launched[c]
            if pend is not None:
                if ev[pend]["stream"] != ev[d]["stream"] and ev[pend]["e"] <= ev[d]["s"]:
                    waits[d] = pend
                pend = None
            last_l = d
    streams = defaultdict(list)
    for j in range(ncpu, N):
        streams[ev[j]["stream"]].append(j)
    for key in streams:
        streams[key].sort(key=lambda j: (ev[j]["s"], ev[j]["span_order"]))
        prev = None
        for j in streams[key]:
            g = ev[j]
            add(2 * j, 2 * j + 1, "op", g["e"] - g["s"], j)
            src = waits.get(j)
            if src is not None:
                add(2 * src + 1, 2 * j, "sync", 0, None)
            ok = (g["launch"] is not None and g["qempty"] and (prev is None or ev[prev]["e"] < g["launch_s"])
                  and (src is None or ev[src]["e"] < g["launch_s"]))
            if ok:
                add(2 * g["launch"], 2 * j, "launch", g["s"] - g["launch_s"], j)
            elif prev is not None and g["s"] - ev[prev]["e"] < GAP_LIMIT and (src is None or ev[src]["e"] < ev[prev]["e"]):
                add(2 * prev + 1, 2 * j, "gap", g["s"] - ev[prev]["e"], prev)
            prev = j
    for c in range(ncpu):
        x = ev[c]
        during = lambda j: x["s"] <= ev[j]["e"] <= x["e"]
        if x["name"] in ("cudaMemcpy", "cudaMemcpyAsync") and c in launched and during(launched[c]):
            add(2 * launched[c] + 1, 2 * c + 1, "sync", 0, None)
        if x["name"] not in ("cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize"):
            continue
        cands = []
        for key, js in streams.items():
            before = [j for j in js if ev[j]["launch_s"] < x["s"]]
            if before and during(before[-1]):
                cands.append(before[-1])
        if x["name"] == "cudaDeviceSynchronize":
            for j in cands:
                add(2 * j + 1, 2 * c + 1, "sync", 0, None)
        elif cands:
            j = max(cands, key=lambda j: (ev[j]["e"], j))
            add(2 * j + 1, 2 * c + 1, "sync", 0, None)

    if ncpu == N:
        return None
    # longest path
    out_e = defaultdict(list)
    indeg = [0] * (2 * N)
    for k, (u, v, w, kind, at) in enumerate(edges):
        out_e[u].append(k)
        indeg[v] += 1
    dist, via = [0] * (2 * N), [None] * (2 * N)
    ready = [n for n in range(2 * N) if indeg[n] == 0]
    seen = 0
    while ready:
        u = ready.pop()
        seen += 1
        for k in out_e[u]:
            v, w = edges[k][1], edges[k][2]
            if via[v] is None or dist[u] + w > dist[v]:
                dist[v], via[v] = dist[u] + w, k
            indeg[v] -= 1
            if indeg[v] == 0:
                ready.append(v)
    if seen < 2 * N:
        return "cycle"
    v = max(range(2 * N), key=lambda n: (dist[n], -n))
    path = []
    while via[v] is not None:
        path.append(edges[via[v]])
        v = edges[via[v]][0]
    b = dict(cpu_ns=0, gpu_compute_ns=0, gpu_comm_ns=0, launch_overhead_ns=0, kernel_gap_ns=0, data_loading_ns=0)
    ops = defaultdict(int)
    for (u, v, w, kind, at) in path:
        if kind == "launch":
            b["launch_overhead_ns"] += w
        elif kind == "gap":
            b["kernel_gap_ns"] += w
        elif kind == "op":
            x = ev[at] if at is not None else None
            if x is not None and x["gpu"]:
                b["gpu_comm_ns" if is_comm(x["name"]) else "gpu_compute_ns"] += w
            elif x is not None and x["in_data"]:
                b["data_loading_ns"] += w
            else:
                b["cpu_ns"] += w
        if w > 0 and at is not None:
            ops[ev[ev[at]["op"]]["name"]] += w
    top = sorted(ops.items(), key=lambda kv: (-kv[1], kv[0]))[:5]
    return dict(length_ns=sum(e[2] for e in path), bounds=b, top_ops=[[n, w] for n, w in top])


def main(path):
    evs = load(path)
    for k, x in enumerate(evs):
        x["span_order"] = k
    launch_of, by_corr = {}, {}
    for x in evs:
        if x["cat"] in ("cuda_runtime", "cuda_driver") and "correlation" in x["args"]:
            by_corr.setdefault(x["args"]["correlation"], x)
    gpu_by_stream = defaultdict(list)
    for x in evs:
        if x["cat"] in ("kernel", "gpu_memcpy", "gpu_memset"):
            L = by_corr.get(x["args"].get("correlation"))
            if L is not None:
                launch_of[id(x)] = L
            gpu_by_stream[(x["pid"], x["tid"])].append(x)
    for ops in gpu_by_stream.values():
        ops.sort(key=lambda x: (x["s"], x["span_order"]))
    steps = sorted((x for x in evs if x["name"].startswith("ProfilerStep#")), key=lambda x: x["s"])
    out = []
    for s in steps:
        r = step_path(evs, s["s"], s["e"], gpu_by_stream, launch_of)
        if isinstance(r, dict):
            out.append(dict(step=s["name"], **r))
        else:
            out.append(dict(step=s["name"], note=r or "no GPU work"))
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main(sys.argv[1])
