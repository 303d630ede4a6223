#!/usr/bin/env python3
"""Independent oracle for the trace efficiency figures (stdlib only).

Usage: python3 tests/expected/efficiency_expected.py sample-traces/gpt_train.json.gz > tests/expected/gpt_train.efficiency.json

Rules (from docs/efficiency.md's definitions and PyTorch's op schemas, not from the Rust code):
- An op's GPU work: kernels, memsets and device-to-device copies (host and peer copies run at
  the link's speed and are left out). Kineto gives each kernel the "External id" of the innermost CPU op around its
  launch; for the ops below that op is the one that launched it (they call no other op that
  launches). GPU time of one op = the union of its kernels' [ts, ts + dur) in ns (Kineto's
  microsecond decimals times 1000, exactly).
- Only ops that launched at least one kernel are counted.
- aten::mm(a[M,K], b[K,N]): 2MNK FLOPs; bytes = (MK + KN + MN) x element size.
- aten::addmm(bias, a, b): 2MNK; bytes add the bias.
- attention (_cudnn_attention_forward(q, k, v, ..., is_causal at 10, ...) and
  _cudnn_attention_backward(grad_out, q, k, v, out, lse, ..., is_causal at 14, ...)), q/k/v
  [B, H, L, D]: kept pairs = L(L+1)/2 when causal (top-left), else L*L; forward FLOPs =
  2*B*H*pairs*(D + Dv); backward = 2.5 x forward. Forward bytes = q + k + v + out; backward =
  2 x (q + k + v) + 2 x out.
- aten::native_layer_norm(x, shape, w, b, eps): 8 FLOP/element; bytes = 2 x x + w + b + 8 per row.
Output: per op name {count, flops, bytes, gpu_ns}.
"""
import gzip
import json
import sys
from decimal import Decimal

SIZE = {"float": 4, "c10::BFloat16": 2, "c10::Half": 2, "double": 8}


def ns(x):
    return int(Decimal(str(x)) * 1000)


def numel(s):
    n = 1
    for d in s:
        n *= d
    return n


def work(name, a):
    dims, types, conc = a["Input Dims"], a["Input type"], a.get("Concrete Inputs", [])
    if name in ("aten::mm", "aten::addmm"):
        i = 1 if name == "aten::addmm" else 0
        (m, k), (k2, n) = dims[i], dims[i + 1]
        e = SIZE[types[i]]
        b = (m * k + k * n + m * n) * e + (numel(dims[0]) * SIZE[types[0]] if i else 0)
        return 2 * m * n * k, b
    if name in ("aten::_cudnn_attention_forward", "aten::_cudnn_attention_backward"):
        bwd = name.endswith("backward")
        q = 1 if bwd else 0
        causal = conc[14 if bwd else 10] == "True"
        bb, h, l, d = dims[q]
        dv = dims[q + 2][3]
        lk = dims[q + 1][2]
        pairs = l * (l + 1) // 2 if causal else l * lk
        fwd = 2 * bb * h * pairs * (d + dv)
        e = SIZE[types[q]]
        qkv = sum(numel(dims[q + j]) for j in range(3)) * e
        out = bb * h * l * dv * e
        return (fwd * 5 // 2, 2 * qkv + 2 * out) if bwd else (fwd, qkv + out)
    if name == "aten::native_layer_norm":
        x = dims[0]
        e = SIZE[types[0]]
        rows = numel(x[:-len(json.loads(conc[1]))])
        return 8 * numel(x), 2 * numel(x) * e + numel(dims[2]) * SIZE[types[2]] + numel(dims[3]) * SIZE[types[3]] + 8 * rows
    return None


def main(path):
    d = json.load(gzip.open(path) if path.endswith(".gz") else open(path))
    ev = d["traceEvents"]
    ops = {}
    for e in ev:
        if e.get("cat") == "cpu_op" and e.get("ph") == "X":
            ops.setdefault(e["args"].get("External id"), []).append(e)
    kernels = {}
    for e in ev:
        if e.get("cat") in ("kernel", "gpu_memset") or (e.get("cat") == "gpu_memcpy" and "DtoD" in e["name"]):
            kernels.setdefault(e["args"].get("External id"), []).append((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])))
    out = {}
    for xid, ks in kernels.items():
        cands = ops.get(xid, [])
        if not cands:
            continue
        # The innermost op of this External id: the latest start, then the shortest.
        op = max(cands, key=lambda o: (ns(o["ts"]), -ns(o["dur"])))
        w = work(op["name"], op["args"]) if "Input Dims" in op["args"] else None
        if w is None:
            continue
        ks.sort()
        union, cur = 0, None
        for s, t in ks:
            if cur and s <= cur[1]:
                cur[1] = max(cur[1], t)
            else:
                if cur:
                    union += cur[1] - cur[0]
                cur = [s, t]
        union += cur[1] - cur[0]
        r = out.setdefault(op["name"], {"count": 0, "flops": 0, "bytes": 0, "gpu_ns": 0})
        r["count"] += 1
        r["flops"] += w[0]
        r["bytes"] += w[1]
        r["gpu_ns"] += union
    print(json.dumps(dict(sorted(out.items())), indent=1))


if __name__ == "__main__":
    main(sys.argv[1])
