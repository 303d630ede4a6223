#!/usr/bin/env python3
"""Independent oracle for the step-time attribution (docs/attribution.md), stdlib only.

Usage: attribution_expected.py OUT.json TRACE.json.gz [TRACE.json.gz ...]
(several traces: the ranks of one job, DDP or pipeline).

Rules, from the definition (docs/attribution.md, docs/efficiency.md's formula table,
docs/ranks.md's collective matching, docs/pipeline.md's bubbles), reading the Kineto events:
- Time: ts/dur µs as exact decimals, ns = round(d * 1000) half-to-even; end = ts + dur.
- Steps: `X` events named ProfilerStep#N (not gpu_user_annotation), the first of a name.
- GPU activity: `X` events of cat kernel / gpu_memcpy / gpu_memset (any case); device =
  args.device; comm = kernels whose name contains nccl/rccl; work = the others.
- A step is attributed on the device with the most busy time inside [start, end).
- Per instant of the step on that device: k work spans running → each gets 1/k of it; else
  comm running → exposed comm; else idle.
- A work span's owner: the cpu_op with the span's External id (the innermost op around its
  launch). Model op: its name has FLOPs > 0 in docs/efficiency.md's table (below, `flops`) and
  it encloses no op with FLOPs on its thread (else its FLOPs are that child's);
  the rest (no formula, 0 FLOPs: copy_, fill_, cat, the fused optimizer without shapes…) and
  spans with no owner are other GPU work, named by the op (else the span's name).
- Model FLOPs of a step: Σ FLOPs of the model ops that own GPU work and whose CPU call starts
  in the step. Peak: the published dense peak of the unit with most of those FLOPs (H200:
  989 TFLOP/s BF16 tensor, 67 TFLOP/s FP32). model_at_peak = round(FLOPs / peak · 1e9);
  inefficiency = model ops' GPU time − model_at_peak; per class: class time − class
  FLOPs/peak (below 0 → 0), scaled to the part.
- Idle: a stretch lies in a gap of the device's busy union (all GPU activity). No busy
  interval before or after it → other. Gap < 10 µs → launch overhead. Else the launch of
  the span opening the next busy interval (the cuda_runtime / cuda_driver event of the same
  correlation) started after the gap opened → host, else other; per instant, host or other
  time where a range of the launching thread covering it is a synchronisation (name contains
  Synchronize / StreamWaitEvent / EventQuery, or aten::item / aten::_local_scalar_dense) →
  sync. Host time is named per instant by the innermost user_annotation of that thread
  covering it (not a step range), else the innermost cpu_op / python_function / runtime call.
- Several ranks (DDP): collectives matched by (name, k-th occurrence per rank); clocks
  aligned by collective ends (offset = median over matched of ref end − rank end, even count
  floor of the mean of the middle two); wait of rank i = [its start, its start + skew −
  arrival_i) in its own clock. comm_wait = exposed comm ∩ the union of its waits; the rest of
  exposed comm is transfer.
- Pipeline: the bubble of a stage in a step = its warm-up ∪ P2P wait ∪ cool-down (docs/
  pipeline.md, as pipeline_expected.py computes them); idle and exposed comm inside it are
  pipeline bubble.
Activation-checkpointing replays are not handled (no sample used here has one).
Output: per trace and step: dur_ns, parts, model_flops, held_by (host idle by name).
"""
import gzip
import json
import os
import re
import sys
from decimal import ROUND_HALF_EVEN, Decimal

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pipeline_expected  # noqa: E402  (the pipeline oracle's own reading of transfers and microbatches)

PEAK = {"tensor_bf16": 989e12, "tensor_fp16": 989e12, "fp32": 67e12}
THRESHOLD = 10_000
SIZE = {"float": 4, "c10::BFloat16": 2, "c10::Half": 2, "double": 8}
ELEMENTWISE = {"add", "add_", "mul", "mul_", "sub", "div", "gelu", "gelu_backward", "silu", "where",
               "clamp_min", "pow", "threshold_backward", "native_dropout", "native_dropout_backward", "relu", "relu_"}
SYNC = ("Synchronize", "StreamWaitEvent", "EventQuery")
STEP = re.compile(r"^ProfilerStep#\d+$")


def ns(x):
    return int((Decimal(str(x)) * 1000).quantize(Decimal(1), rounding=ROUND_HALF_EVEN))


def load(path):
    with (gzip.open(path) if path.endswith(".gz") else open(path, "rb")) as f:
        return json.loads(f.read(), parse_float=Decimal)


def numel(s):
    n = 1
    for d in s:
        n *= d
    return n


def broadcast(shapes):
    n = max(len(s) for s in shapes)
    out = []
    for i in range(n):
        dims = [s[len(s) - n + i] for s in shapes if len(s) - n + i >= 0]
        out.append(max(dims))
    return out


def flops(name, a):
    """(FLOPs, class, unit) of docs/efficiency.md's table, or None without FLOPs."""
    op = name[len("aten::"):] if name.startswith("aten::") else name
    dims, types = a.get("Input Dims"), a.get("Input type")
    conc = a.get("Concrete Inputs", [])
    if not dims:
        return None
    if op.startswith("_foreach_") and isinstance(dims[0], list) and dims[0] and isinstance(dims[0][0], list):
        # a tensor list: 1 FLOP per element of the list written
        return sum(numel(t) for t in dims[0]), "optimizer", "fp32"
    tens = [d for d in dims if isinstance(d, list) and d and all(isinstance(x, int) for x in d)]
    unit = lambda t: {"c10::BFloat16": "tensor_bf16", "c10::Half": "tensor_fp16"}.get(t, "fp32")
    if op in ("mm", "addmm"):
        i = 1 if op == "addmm" else 0
        (m, k), (_, n) = dims[i], dims[i + 1]
        return 2 * m * n * k, "GEMM", unit(types[i])
    if op in ("_cudnn_attention_forward", "_cudnn_attention_backward",
              "_efficient_attention_forward", "_efficient_attention_backward"):
        bwd = op.endswith("backward")
        q = 1 if bwd else 0
        if op.startswith("_cudnn"):
            b, h, l, d = dims[q]
            lk, dv = dims[q + 1][2], dims[q + 2][3]
            causal = conc[14 if bwd else 10] == "True"
        else:
            # memory-efficient attention: [B, L, H, D]; custom_mask_type 1 = causal (top-left)
            b, l, h, d = dims[q]
            lk, dv = dims[q + 1][1], dims[q + 2][3]
            causal = conc[(11 if bwd else 9)] == "1"
        pairs = l * (l + 1) // 2 if causal and l == lk else l * lk
        f = 2 * b * h * pairs * (d + dv)
        return (f * 5 // 2 if bwd else f), "attention", "fp32" if types[q] == "float" else unit(types[q])
    if op == "native_layer_norm":
        return 8 * numel(dims[0]), "norm", "fp32"
    if op == "native_layer_norm_backward":
        return 16 * numel(dims[0]), "norm", "fp32"
    if op in ("_softmax", "_log_softmax"):
        return 5 * numel(dims[0]), "softmax", "fp32"
    if op in ("_softmax_backward_data", "_log_softmax_backward_data"):
        return 4 * numel(dims[0]), "softmax", "fp32"
    if op in ELEMENTWISE and tens:
        return numel(broadcast(tens)), "elementwise", "fp32"
    if op in ("sum", "mean", "amax", "norm") and tens:
        return numel(tens[0]), "reduction", "fp32"
    if op == "embedding_dense_backward":
        return numel(dims[0]), "gather", "fp32"
    return None


def union(iv):
    out = []
    for s, e in sorted(x for x in iv if x[1] > x[0]):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return [tuple(x) for x in out]


def intersect(a, b):
    out, i, j = [], 0, 0
    while i < len(a) and j < len(b):
        s, e = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if s < e:
            out.append((s, e))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return out


def total(iv):
    return sum(e - s for s, e in iv)


def median(v):
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) // 2


class Trace:
    def __init__(self, path):
        d = load(path)
        self.rank = (d.get("distributedInfo") or {}).get("rank", 0) if isinstance(d, dict) else 0
        ev = d["traceEvents"]
        self.gpu, self.ops, self.launch, self.cpu, self.steps = [], {}, {}, {}, []
        self.op_iv = []
        seen = set()
        for e in ev:
            if e.get("ph") != "X" or "dur" not in e:
                continue
            cat, name, a = (e.get("cat") or ""), e.get("name", ""), e.get("args", {})
            s = ns(e["ts"])
            t = s + ns(e["dur"])
            if cat.lower() in ("kernel", "gpu_memcpy", "gpu_memset", "memcpy", "memset"):
                comm = cat.lower() == "kernel" and ("nccl" in name.lower() or "rccl" in name.lower())
                self.gpu.append((s, t, a.get("device", e.get("pid")), name, a.get("External id"), a.get("correlation"), comm))
            elif cat == "gpu_user_annotation":
                continue
            else:
                if cat == "cpu_op":
                    self.ops[a.get("External id")] = (name, s, a)
                    self.op_iv.append((e.get("pid"), e.get("tid"), s, t, a.get("External id"), name, a))
                if cat in ("cuda_runtime", "cuda_driver") and "correlation" in a:
                    self.launch[a["correlation"]] = (s, e.get("pid"), e.get("tid"))
                if cat in ("cpu_op", "python_function", "cuda_runtime", "cuda_driver", "user_annotation"):
                    self.cpu.setdefault((e.get("pid"), e.get("tid")), []).append((s, t, cat == "user_annotation", name))
                if STEP.match(name) and name not in seen:
                    seen.add(name)
                    self.steps.append((name, s, t))
        self.steps.sort(key=lambda x: x[1])
        self.busy = {}
        for dev in {g[2] for g in self.gpu}:
            self.busy[dev] = union([(g[0], g[1]) for g in self.gpu if g[2] == dev])
        # model FLOPs per op that owns GPU work
        owners = {g[4] for g in self.gpu}
        # an op with a formula that encloses (on its thread) an op with FLOPs is not a model op:
        # its FLOPs are its child's, and what it launched beside the child is other work
        holds = set()
        by_thread = {}
        for pid, tid, s, t, x, name, a in self.op_iv:
            f = flops(name, a)
            if f is not None:
                by_thread.setdefault((pid, tid), []).append((s, t, x, bool(f[0] > 0)))
        for iv in by_thread.values():
            iv.sort(key=lambda v: (v[0], -v[1]))
            open_ = []
            for s, t, x, has in iv:
                while open_ and open_[-1][1] < t:
                    open_.pop()
                if has:
                    holds.update(o[2] for o in open_)
                open_.append((s, t, x))
        self.model = {}
        for x, (name, s, a) in self.ops.items():
            if x in owners and x not in holds:
                f = flops(name, a)
                if f and f[0] > 0:
                    self.model[x] = (f, s)

    def holder(self, near, a, b):
        """(sync?, name) over [a, b), `near` the thread's ranges around it."""
        cov = [c for c in near if c[0] <= a and c[1] >= b and not STEP.match(c[3])]
        sync = any(any(k in c[3] for k in SYNC) or c[3] in ("aten::item", "aten::_local_scalar_dense") for c in cov)
        if not cov:
            return sync, None
        best = max(cov, key=lambda c: (c[2], c[0], -c[1]))
        return sync, best[3]

    def idle_pieces(self, dev, s, e):
        """[(start, end, kind, name)] of an idle stretch."""
        busy = self.busy[dev]
        nxt = next((i for i, iv in enumerate(busy) if iv[0] >= e), None)
        if nxt is None or nxt == 0:
            return [(s, e, "idle_other_ns", None)]
        gs, ge = busy[nxt - 1][1], busy[nxt][0]
        if ge - gs < THRESHOLD:
            return [(s, e, "idle_launch_ns", None)]
        opening = min((g for g in self.gpu if g[2] == dev and g[0] == ge), key=lambda g: (g[0], g[1]))
        launch = self.launch.get(opening[5])
        if launch is None:
            return [(s, e, "idle_other_ns", None)]
        kind = "idle_host_ns" if launch[0] > gs else "idle_other_ns"
        near = [c for c in self.cpu.get((launch[1], launch[2]), []) if c[0] < e and c[1] > s]
        cuts = sorted({s, e} | {x for c in near for x in c[:2] if s < x < e})
        out = []
        for a, b in zip(cuts, cuts[1:]):
            sync, name = self.holder(near, a, b)
            out.append((a, b, "idle_sync_ns" if sync else kind, name))
        return out

    def step(self, name, a, b):
        devs = sorted(self.busy, key=lambda d: (-total(intersect(self.busy[d], [(a, b)])), d))
        dev = devs[0]
        spans = [g for g in self.gpu if g[2] == dev and g[0] < b and g[1] > a]
        cuts = sorted({a, b} | {max(a, min(b, x)) for g in spans for x in g[:2]})
        parts = dict.fromkeys(["model_at_peak_ns", "model_ops_inefficiency_ns", "other_gpu_work_ns", "comm_wait_ns",
                               "comm_transfer_ns", "pipeline_bubble_ns", "idle_host_ns", "idle_sync_ns",
                               "idle_launch_ns", "idle_other_ns"], 0)
        model_t, other_t, cls_t, other_by = 0.0, 0.0, {}, {}
        stretches = []
        for s, e in zip(cuts, cuts[1:]):
            on = [g for g in spans if g[0] <= s and g[1] >= e]
            work = [g for g in on if not g[6]]
            if work:
                for g in work:
                    share = (e - s) / len(work)
                    if g[4] in self.model:
                        c = self.model[g[4]][0][1]
                        cls_t[c] = cls_t.get(c, 0.0) + share
                        model_t += share
                    else:
                        o = self.ops.get(g[4])
                        n = o[0] if o else g[3]
                        other_by[n] = other_by.get(n, 0.0) + share
                        other_t += share
            elif on:
                stretches.append((s, e, "comm_transfer_ns", None))
            else:
                stretches += self.idle_pieces(dev, s, e)
        work_ns = total(intersect(self.busy[dev], [(a, b)])) - sum(e - s for s, e, k, _ in stretches if k == "comm_transfer_ns")
        fl = [(f, s) for f, s in self.model.values() if a <= s < b]
        by_unit = {}
        for (f, c, u), _ in fl:
            by_unit[u] = by_unit.get(u, 0) + f
        model_flops = sum(f for (f, c, u), _ in fl)
        unit = max(by_unit, key=lambda u: by_unit[u]) if by_unit else None
        peak = PEAK.get(unit)
        at_peak = round(model_flops / peak * 1e9) if peak and fl else 0
        model_ns = round(model_t)
        parts["model_at_peak_ns"] = at_peak
        parts["model_ops_inefficiency_ns"] = model_ns - at_peak
        parts["other_gpu_work_ns"] = work_ns - model_ns
        by_class = {}
        for c, t in cls_t.items():
            by_class[c] = t - sum(f for (f, cc, u), _ in fl if cc == c) / peak * 1e9 if peak else t
        return {"step": name, "dur_ns": b - a, "device": dev, "parts": parts, "stretches": stretches,
                "model_flops": model_flops, "mfu": (model_flops / ((b - a) * 1e-9 * peak)) if peak and fl else None,
                "inefficiency_by_class": {c: round(v) for c, v in sorted(by_class.items(), key=lambda x: -x[1]) if v > 0},
                "other_gpu_work_by_name": {n: round(v) for n, v in sorted(other_by.items(), key=lambda x: -x[1])[:8]}}


def finish(st, waits, bubble):
    """The stretches' parts, with the waits (sorted, disjoint) and the bubble moved out."""
    held = {}
    p = st["parts"]
    for s, e, kind, name in st.pop("stretches"):
        bub = total(intersect([(s, e)], bubble))
        p["pipeline_bubble_ns"] += bub
        rest = subtract([(s, e)], bubble)
        if kind == "comm_transfer_ns":
            w = total(intersect(rest, waits))
            p["comm_wait_ns"] += w
            p["comm_transfer_ns"] += total(rest) - w
        else:
            p[kind] += total(rest)
            if name and kind in ("idle_host_ns", "idle_sync_ns"):
                held[name] = held.get(name, 0) + total(rest)
    st["idle_held_by"] = dict(sorted(((n, v) for n, v in held.items() if v > 0), key=lambda x: -x[1])[:8])
    assert sum(p.values()) == st["dur_ns"], st
    return st


def subtract(a, b):
    out = []
    for s, e in a:
        cur = s
        for x, y in b:
            if y <= cur or x >= e:
                continue
            if x > cur:
                out.append((cur, x))
            cur = max(cur, y)
        if cur < e:
            out.append((cur, e))
    return out


def peer_waits(traces):
    """Per trace (in rank order): the union of its waits for late peers, its own clock."""
    comm = [sorted((g for g in t.gpu if g[6]), key=lambda g: (g[0], g[1])) for t in traces]
    occ = {}
    for i, ks in enumerate(comm):
        for j, k in enumerate(ks):
            occ.setdefault(k[3], [[] for _ in traces])[i].append(j)
    matched = [[ls[i][k] for i in range(len(traces))] for ls in occ.values() for k in range(min(len(x) for x in ls))]
    if not matched:
        return [[] for _ in traces]
    off = [median([comm[0][m[0]][1] - comm[i][m[i]][1] for m in matched]) for i in range(len(traces))]
    waits = [[] for _ in traces]
    for m in matched:
        starts = [comm[i][m[i]][0] + off[i] for i in range(len(traces))]
        last = max(starts)
        for i in range(len(traces)):
            w = last - starts[i]
            if w > 0:
                waits[i].append((comm[i][m[i]][0], comm[i][m[i]][0] + w))
    return [union(w) for w in waits]


def bubbles(paths):
    """{rank: {step: bubble intervals}} of a pipeline (docs/pipeline.md), or {}."""
    ranks = {}
    for p in paths:
        r, ops, waits, steps, mbs = pipeline_expected.rank_figures(p)
        ranks[r] = (ops, waits, steps, mbs)
    edges = set()
    for r, (ops, _, _, _) in ranks.items():
        for peer in {o["peer"] for o in ops}:
            fs = min((o["start"] for o in ops if o["peer"] == peer and o["dir"] == "send"), default=None)
            fr = min((o["start"] for o in ops if o["peer"] == peer and o["dir"] == "recv"), default=None)
            if fs is not None and (fr is None or fs < fr):
                edges.add((r, peer))
    if not edges:
        return {}
    out = {}
    for r, (ops, waits, steps, mbs) in ranks.items():
        ups = [a for a, b in edges if b == r]
        for name, t0, t1 in steps:
            inside = [m for m in mbs if t0 <= m[2] < t1]
            rng = intersect(union([(m[2], m[3]) for m in inside]), [(t0, t1)])
            w = intersect(waits, [(t0, t1)])
            work = subtract(rng, w)
            if not work:
                out.setdefault(r, {})[name] = [(t0, t1)]
                continue
            recvs = [o for o in ops if o["dir"] == "recv" and o["peer"] in ups and t0 <= o["start"] < t1]
            ready = work[0][0]
            if recvs:
                ready = max(ready, min(min(recvs, key=lambda o: o["start"])["flight"][1], t1))
            warm = subtract([(t0, ready)], work)
            cool = [(max(work[-1][1], ready), t1)] if max(work[-1][1], ready) < t1 else []
            p2p = intersect(w, [(ready, work[-1][1])])
            out.setdefault(r, {})[name] = union(warm + p2p + cool)
    return out


def main():
    out_path, paths = sys.argv[1], sys.argv[2:]
    traces = sorted((Trace(p) for p in paths), key=lambda t: t.rank)
    waits = peer_waits(traces) if len(traces) > 1 else [[]]
    bub = bubbles(paths) if len(traces) > 1 else {}
    res = []
    for t, w in zip(traces, waits):
        for name, a, b in t.steps:
            st = finish(t.step(name, a, b), w, bub.get(t.rank, {}).get(name, []))
            st["rank"] = t.rank
            res.append(st)
    with open(out_path, "w") as f:
        json.dump(res, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
