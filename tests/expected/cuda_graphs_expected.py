#!/usr/bin/env python3
"""Independent oracle for CUDA graphs: each graph launch with the GPU work it ran, replays of
one graph gathered, per graph and node the count and GPU time, the op around the launches and
the op around each node's capture. Stdlib only; shares nothing with the Rust crates.

Rules (what a user of Nsight Systems or a torch.profiler trace would count):
- A graph launch is a CUDA runtime/driver call whose name starts with cudaGraphLaunch,
  cuGraphLaunch or hipGraphLaunch. Its GPU work is every kernel, copy and set with the same
  correlation id (per process in nsys; Kineto's `args.correlation`). A launch with no GPU
  work in the trace is counted apart.
- Which graph: the graph id the work carries (Kineto `graph id`, XLA `cuda_graph_id`, nsys
  `graphId`), else the lowest graph node id among its work (nsys `graphNodeId`), else the
  sequence of its work's names. A node: its node id, else its position in the replay.
- Per replay, GPU time = the sum of its activities' durations; per graph: replays, the most
  activities a replay ran, total, mean (integer division), min, max; its share of all GPU
  activity time (kernels, copies, sets on the streams); the mean of (last end - first start);
  the sum of its launch calls' durations.
- The op around a launch: the latest-starting op (Kineto cpu_op / user_annotation /
  python_function; nsys NVTX range) on the launch's thread that holds the launch's start and
  end; the most common over the graph's replays.
- Capture (nsys with --cuda-graph-trace=node): a node id leads through CUDA_GRAPH_NODE_EVENTS'
  originalGraphNodeId (a node cloned into the executable graph) to the captured node; the op
  that captured it is the latest-starting NVTX range on the creating thread holding the
  creation's time. Where several creation rows name one node, the one with an original wins.

- Node creations: the rows of CUDA_GRAPH_NODE_EVENTS (one `graph node created` span each).

Output: cuda_graphs.expected.json, keyed by sample file name.
"""
import gzip
import json
import os
import sqlite3
from collections import Counter, defaultdict
from decimal import ROUND_HALF_EVEN, Decimal

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLES = os.path.join(HERE, "..", "..", "sample-traces")
LAUNCH_PREFIXES = ("cudaGraphLaunch", "cuGraphLaunch", "hipGraphLaunch")


def to_ns(value):
    return int((Decimal(value) * 1000).to_integral_value(rounding=ROUND_HALF_EVEN))


def summarise(replays, all_gpu_ns, launch_ops, captured=None):
    """replays: {key: [ {launch_dur, work: [(start, end, name, node)]} ]} → graph figures."""
    out = []
    for key, rs in replays.items():
        per = [sum(e - s for s, e, _, _ in r["work"]) for r in rs]
        total = sum(per)
        nodes = {}
        for r in rs:
            for pos, (s, e, name, node) in enumerate(sorted(r["work"])):
                k = (node, 0 if node is not None else pos)
                n = nodes.setdefault(k, {"node_id": node, "name": name, "count": 0, "total_ns": 0})
                n["count"] += 1
                n["total_ns"] += e - s
        node_list = list(nodes.values())
        if all(n["node_id"] is not None for n in node_list):
            node_list.sort(key=lambda n: n["node_id"])
        for n in node_list:
            n["captured_by"] = (captured or {}).get(n["node_id"]) if n["node_id"] is not None else None
        ops = Counter(o for o in launch_ops[key] if o is not None)
        launched_from = None
        if ops:
            best = max(ops.values())
            launched_from = min(o for o, c in ops.items() if c == best)
        out.append(
            {
                "key": list(key),
                "replays": len(rs),
                "kernels_per_replay": max(len(r["work"]) for r in rs),
                "total_ns": total,
                "mean_ns": total // len(rs),
                "min_ns": min(per),
                "max_ns": max(per),
                "pct_gpu_time": round(total * 100.0 / all_gpu_ns, 6) if all_gpu_ns else 0.0,
                "mean_extent_ns": sum(max(e for _, e, _, _ in r["work"]) - min(s for s, _, _, _ in r["work"]) for r in rs)
                // len(rs),
                "launch_cpu_ns": sum(r["launch_dur"] for r in rs),
                "launched_from": launched_from,
                "nodes": node_list,
            }
        )
    out.sort(key=lambda g: (-g["total_ns"], g["key"]))
    return out


def key_of(work, graph_ids):
    ids = [g for g in graph_ids if g]
    if ids:
        return ("id", ids[0])
    nodes = [n for _, _, _, n in work if n]
    if nodes:
        return ("lowest_node", min(nodes))
    return ("kernels", tuple(name for _, _, name, _ in sorted(work)))


def innermost(ranges, ts, te):
    """The latest-starting (start, end, name) with start <= ts and te <= end."""
    best = None
    for s, e, name in ranges:
        if s <= ts and te <= e and (best is None or s > best[0]):
            best = (s, e, name)
    return best[2] if best else None


def kineto(path):
    with gzip.open(path, "rt", encoding="utf-8") as f:
        ev = json.load(f, parse_float=Decimal)["traceEvents"]
    xs = [e for e in ev if e.get("ph") == "X"]
    gpu_cats = {"kernel", "gpu_memcpy", "gpu_memset"}
    work_by_corr = defaultdict(list)
    all_gpu = 0
    for e in xs:
        if e.get("cat") in gpu_cats:
            s = to_ns(e["ts"])
            t = s + to_ns(e.get("dur", 0))
            all_gpu += t - s
            a = e.get("args", {})
            gid = a.get("graph id", a.get("cuda_graph_id"))
            nid = a.get("graph node id", a.get("cuda_graph_node_id"))
            gid = int(gid) if gid not in (None, 0, "0") else None
            nid = int(nid) if nid not in (None, 0, "0") else None
            if "correlation" in a:
                work_by_corr[int(a["correlation"])].append((s, t, e["name"], nid, gid))
    ops_by_tid = defaultdict(list)
    for e in xs:
        if e.get("cat") in ("cpu_op", "user_annotation", "python_function"):
            s = to_ns(e["ts"])
            ops_by_tid[(e["pid"], e["tid"])].append((s, s + to_ns(e.get("dur", 0)), e["name"]))
    replays, launch_ops, without = defaultdict(list), defaultdict(list), 0
    launches = [e for e in xs if e.get("cat") in ("cuda_runtime", "cuda_driver") and e["name"].startswith(LAUNCH_PREFIXES)]
    launches.sort(key=lambda e: to_ns(e["ts"]))
    for l in launches:
        w = work_by_corr.get(int(l["args"]["correlation"]), [])
        if not w:
            without += 1
            continue
        work = [(s, t, n, nid) for s, t, n, nid, _ in w]
        key = key_of(work, [g for *_, g in w])
        ls = to_ns(l["ts"])
        le = ls + to_ns(l.get("dur", 0))
        replays[key].append({"launch_dur": le - ls, "work": work})
        launch_ops[key].append(innermost(ops_by_tid[(l["pid"], l["tid"])], ls, le))
    return summarise(replays, all_gpu, launch_ops), without, 0


def nsys(path):
    c = sqlite3.connect(path)
    names = dict(c.execute("SELECT id, value FROM StringIds"))
    pid = lambda g: (g >> 24) & 0xFFFFFF
    work_by_corr = defaultdict(list)
    all_gpu = 0
    for table, name_sql in [
        ("CUPTI_ACTIVITY_KIND_KERNEL", "demangledName"),
        ("CUPTI_ACTIVITY_KIND_MEMSET", None),
        ("CUPTI_ACTIVITY_KIND_MEMCPY", None),
    ]:
        rows = c.execute(
            f"SELECT start, end, globalPid, correlationId, graphNodeId, {name_sql or 'NULL'} FROM {table}"
        ).fetchall()
        # a kernel by its demangled name; copies and sets are named by the viewer, not the
        # export: None (their names are not compared)
        for s, e, g, corr, node, nm in rows:
            all_gpu += e - s
            name = names.get(nm) if nm is not None else None
            work_by_corr[(pid(g), corr)].append((s, e, name, node or None))
    nvtx_by_tid = defaultdict(list)
    for s, e, text, g in c.execute("SELECT start, end, text, globalTid FROM NVTX_EVENTS WHERE end IS NOT NULL"):
        nvtx_by_tid[g].append((s, e, text))
    created = {}
    for s, g, node, orig in c.execute(
        "SELECT start, globalTid, graphNodeId, originalGraphNodeId FROM CUDA_GRAPH_NODE_EVENTS ORDER BY start"
    ):
        if node not in created or orig is not None:
            created[node] = (s, g, orig)

    def captured_by(node):
        for _ in range(16):
            if node not in created:
                return None
            s, g, orig = created[node]
            if orig is not None and orig != node and orig in created:
                node = orig
                continue
            return innermost(nvtx_by_tid[g], s, s)
        return None

    replays, launch_ops, without = defaultdict(list), defaultdict(list), 0
    q = (
        "SELECT r.start, r.end, r.globalTid, r.correlationId, s.value FROM CUPTI_ACTIVITY_KIND_RUNTIME r "
        "JOIN StringIds s ON s.id = r.nameId ORDER BY r.start"
    )
    for ls, le, g, corr, name in c.execute(q).fetchall():
        if not name.startswith(LAUNCH_PREFIXES):
            continue
        w = work_by_corr.get((pid(g), corr), [])
        if not w:
            without += 1
            continue
        key = key_of(w, [])
        replays[key].append({"launch_dur": le - ls, "work": w})
        launch_ops[key].append(innermost(nvtx_by_tid[g], ls, le))
    nodes = {n for rs in replays.values() for r in rs for *_, n in r["work"] if n is not None}
    captured = {n: captured_by(n) for n in nodes}
    (events,) = c.execute("SELECT COUNT(*) FROM CUDA_GRAPH_NODE_EVENTS").fetchone()
    return summarise(replays, all_gpu, launch_ops, captured), without, events


def main():
    out = {}
    for name, fn in [("kineto_reduce_overhead.json.gz", kineto), ("nsys_cuda_graphs.sqlite", nsys)]:
        graphs, without, node_events = fn(os.path.join(SAMPLES, name))
        for g in graphs:
            if g["key"][0] == "kernels":
                g["key"] = ["kernels", len(g["key"][1])]
        out[name] = {"graphs": graphs, "launches_without_gpu_work": without, "node_creations": node_events}
    with open(os.path.join(HERE, "cuda_graphs.expected.json"), "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
