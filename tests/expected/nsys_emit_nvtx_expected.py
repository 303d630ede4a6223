#!/usr/bin/env python3
"""Independent oracle for the per-op efficiency figures of an Nsight Systems export of an
`emit_nvtx(record_shapes=True)` capture (stdlib only: sqlite3, re, json).

Usage: python3 tests/expected/nsys_emit_nvtx_expected.py sample-traces/nsys_emit_nvtx_gpt.sqlite \
           > tests/expected/nsys_emit_nvtx_gpt.efficiency.json

Rules (from docs/efficiency.md and PyTorch's getNvtxStr, not from the Rust code):
- An op range: an NVTX push/pop range (eventType 59) whose text is
  `NAME[, seq = N][, op_id = N][, sizes = [[d, …], …]][, input_op_ids = […]]`; the sizes are
  one list per input.
- A kernel (or memset, or device-to-device copy) belongs to the innermost op range that holds
  its launch call (the runtime/driver call with its correlationId in the same process) on the
  call's thread. Only the ops below are counted; none of them holds another op that launches.
  GPU time of an op = the union of its kernels' [start, end).
- dtypes (emit_nvtx records none): the strongest type any of the op's kernels names
  (fp8 > bf16 > fp16 > bare `f16` 16-bit > double > fp32; `bf16`/`bfloat16`, `c10::half`/`fp16`,
  `f16`, `double`, `float`/`sgemm`/`f32` in the lower-cased name), a bare 16-bit resolved to
  the trace's type below; where no kernel names one, the trace's type: bf16 when the distinct
  kernel names launched from op ranges name bf16 at least as often as fp16, else fp16 when
  they name any 16-bit type, else fp32.
- aten::mm(a[M,K], b[K,N]): 2MNK FLOPs, bytes (MK + KN + MN) x element size; aten::addmm(bias,
  a, b) adds the bias.
- _cudnn_attention_forward(q, k, v, …) / _cudnn_attention_backward(grad_out, q, k, v, out, …),
  q/k/v [B, H, L, D]: no causal flag is recorded, so every (query, key) pair counts: forward
  FLOPs 2·B·H·L·Lk·(D + Dv), backward 2.5 x forward; bytes forward q + k + v + out, backward
  2 x (q + k + v) + 2 x out.
- aten::native_layer_norm(x, normalized_shape, w, b, eps): 8 FLOP per element of x; bytes
  2 x x + w + b + 8 per row, the rows being x's elements over the weight's elements.
- Per step (NVTX ranges named step_N): the FLOPs of the GEMM and attention ops above whose
  range starts in the step.
Output: {"ops": {name: {count, flops, bytes, gpu_ns}}, "steps": {name: matrix_flops}}.
"""
import json
import re
import sqlite3
import sys

SIZE = {"fp32": 4, "bf16": 2, "fp16": 2, "double": 8, "fp8": 1}
OP = re.compile(
    r"^(?P<name>.+?)(?:, seq = -?\d+)?(?:, op_id = \d+)?(?:, sizes = (?P<sizes>\[(?:\[[-\d, ]*\](?:, )?)*\]))?"
    r"(?:, input_op_ids = \[[^\]]*\])?$"
)
RANK = ["fp8", "bf16", "fp16", "16", "double", "fp32"]


def named(n):
    n = n.lower()
    if any(s in n for s in ("e4m3", "e5m2", "fp8", "float8")):
        return "fp8"
    if "bf16" in n or "bfloat16" in n:
        return "bf16"
    if any(s in n for s in ("c10::half", "__half", "fp16", "<half", "_h884", "_h1688", "_h16816")):
        return "fp16"
    if "f16" in n:
        return "16"
    if "double" in n or "dgemm" in n:
        return "double"
    if any(s in n for s in ("float", "sgemm", "tf32", "f32")):
        return "fp32"
    return None


def numel(s):
    n = 1
    for d in s:
        n *= d
    return n


def work(name, dims, e):
    if name in ("aten::mm", "aten::addmm"):
        i = 1 if name == "aten::addmm" else 0
        (m, k), (_, n) = dims[i], dims[i + 1]
        b = (m * k + k * n + m * n) * e + (numel(dims[0]) * e if i else 0)
        return 2 * m * n * k, b
    if name in ("aten::_cudnn_attention_forward", "aten::_cudnn_attention_backward"):
        bwd = name.endswith("backward")
        q = 1 if bwd else 0
        bb, h, l, d = dims[q]
        lk, dv = dims[q + 1][2], dims[q + 2][3]
        fwd = 2 * bb * h * l * lk * (d + dv)
        qkv = sum(numel(dims[q + j]) for j in range(3)) * e
        out = bb * h * l * dv * e
        return (fwd * 5 // 2, 2 * qkv + 2 * out) if bwd else (fwd, qkv + out)
    if name == "aten::native_layer_norm":
        x = dims[0]
        rows = numel(x) // numel(dims[2])
        return 8 * numel(x), 2 * numel(x) * e + (numel(dims[2]) + numel(dims[3])) * e + 8 * rows
    return None


def main(path):
    c = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    ranges = {}
    steps = []
    for s, e, text, tid in c.execute(
        "SELECT start, end, text, globalTid FROM NVTX_EVENTS WHERE eventType = 59 AND end IS NOT NULL AND text IS NOT NULL"
    ):
        if re.fullmatch(r"step_\d+", text):
            steps.append((s, e, text))
        if ", op_id = " not in text and ", sizes = " not in text:
            continue
        m = OP.match(text)
        if not m:
            continue
        sizes = json.loads(m.group("sizes")) if m.group("sizes") else None
        ranges.setdefault(tid, []).append((s, e, m.group("name"), json.dumps(sizes)))
    calls = {}
    for s, e, tid, corr in c.execute("SELECT start, end, globalTid, correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME"):
        calls[(tid >> 24, corr)] = (s, e, tid)
    gpu = list(c.execute(
        "SELECT k.start, k.end, k.globalPid, k.correlationId, s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.demangledName"
    ))
    gpu += [(s, e, g, corr, "Memset") for s, e, g, corr in c.execute(
        "SELECT start, end, globalPid, correlationId FROM CUPTI_ACTIVITY_KIND_MEMSET")]
    gpu += [(s, e, g, corr, "Memcpy DtoD") for s, e, g, corr in c.execute(
        "SELECT start, end, globalPid, correlationId FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind = 8")]
    owned = {}
    for ks, ke, gpid, corr, kname in gpu:
        call = calls.get((gpid >> 24, corr))
        if call is None:
            continue
        cs, ce, tid = call
        around = [r for r in ranges.get(tid, []) if r[0] <= cs and ce <= r[1]]
        if not around:
            continue
        op = max(around, key=lambda r: (r[0], -r[1]))
        owned.setdefault(op, []).append((ks, ke, kname))
    named_counts = {"bf16": 0, "fp16": 0, "16": 0}
    for kname in {k[2] for ks in owned.values() for k in ks}:
        t = named(kname)
        if t in named_counts:
            named_counts[t] += 1
    if named_counts["bf16"] > 0 and named_counts["bf16"] >= named_counts["fp16"]:
        trace_type = "bf16"
    elif named_counts["fp16"] or named_counts["16"]:
        trace_type = "fp16"
    else:
        trace_type = "fp32"
    ops, per_step = {}, {name: 0 for _, _, name in steps}
    for op, ks in owned.items():
        start, _, name, sizes = op
        sizes = json.loads(sizes)
        if sizes is None:
            continue
        types = [t for t in (named(k[2]) for k in ks) if t]
        t = min(types, key=RANK.index) if types else trace_type
        if t == "16":
            t = "bf16" if trace_type == "bf16" else "fp16"
        w = work(name, sizes, SIZE[t])
        if w is None:
            continue
        ks = sorted((s, e) for s, e, _ in ks)
        union, cur = 0, None
        for s, e in ks:
            if cur and s <= cur[1]:
                cur[1] = max(cur[1], e)
            else:
                if cur:
                    union += cur[1] - cur[0]
                cur = [s, e]
        union += cur[1] - cur[0]
        r = ops.setdefault(name, {"count": 0, "flops": 0, "bytes": 0, "gpu_ns": 0})
        r["count"] += 1
        r["flops"] += w[0]
        r["bytes"] += w[1]
        r["gpu_ns"] += union
        if name != "aten::native_layer_norm":
            for s, e, sname in steps:
                if s <= start < e:
                    per_step[sname] += w[0]
    print(json.dumps({"ops": dict(sorted(ops.items())), "steps": per_step}, indent=1))


if __name__ == "__main__":
    main(sys.argv[1])
