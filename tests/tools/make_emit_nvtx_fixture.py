#!/usr/bin/env python3
"""Builds sample-traces/nsys_emit_nvtx_gpt.sqlite: a CONSTRUCTED fixture standing for an
Nsight Systems capture of `torch.autograd.profiler.emit_nvtx(record_shapes=True)` until a
real recording replaces it (tests/tools/record_emit_nvtx.py records one on a GPU machine).

What is real and what is written here:
- real: every kernel, runtime call, correlation id, thread, step range and time of
  sample-traces/nsys_gpt_single.sqlite (nsys 2025.3, H200), which this copies;
- real: the ops, their nesting and their input shapes, taken from sample-traces/gpt_train.json.gz,
  a torch.profiler (Kineto) trace of the same training script (the same 348 kernels per step,
  in the same launch order, checked kernel by kernel below);
- written here: one NVTX push/pop range per op instance that launched kernels, on the thread
  of its launches, from 2 ns per nesting level before its first launch call to 2 ns per level
  after its last (a real capture's ranges open earlier and hold kernel-less ops too), with
  op ids numbered here (Kineto's `Record function id` is 0 in that trace).

The range text follows PyTorch's getNvtxStr (torch/csrc/profiler/util.cpp):

    if (sequence_nr >= 0) { str = fmt::format("{}, seq = {}", name, sequence_nr); }
    else if (sequence_nr == -1) { str = name; }
    if (op_id > 0) { str = fmt::format("{}, op_id = {}", str, op_id); }
    if (!shapes.empty()) { str = fmt::format("{}, sizes = {}", str, shapesToStr(shapes)); }
    if (!input_op_ids.empty()) { str = fmt::format("{}, input_op_ids = {}", str, inputOpIdsToStr(input_op_ids)); }

and shapesToStr writes "[" + "[d, d]" per input joined by ", " + "]"; inputSizes writes `[]`
for a non-tensor input, an undefined tensor and a tensor list (lists are not flattened by
default). The Kineto trace records no producers, so no `input_op_ids` are written.

Run from anywhere:  python3 tests/tools/make_emit_nvtx_fixture.py
"""
import bisect
import gzip
import json
import os
import shutil
import sqlite3
from decimal import Decimal
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample-traces"
SRC = SAMPLES / "nsys_gpt_single.sqlite"
KINETO = SAMPLES / "gpt_train.json.gz"
DST = SAMPLES / "nsys_emit_nvtx_gpt.sqlite"

READ = {
    "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET",
    "CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "NVTX_EVENTS",
    "CUDA_GPU_MEMORY_USAGE_EVENTS", "StringIds", "ThreadNames", "PROCESSES", "TARGET_INFO_GPU",
    "TARGET_INFO_CUDA_DEVICE", "TARGET_INFO_SESSION_START_TIME", "META_DATA_EXPORT",
    "ENUM_CUDA_MEMCPY_OPER", "ENUM_CUDA_MEM_KIND", "ENUM_CUPTI_SYNC_TYPE",
}


def ns(x):
    return int(Decimal(str(x)) * 1000)


def nvtx_text(name, seq, op_id, dims):
    s = f"{name}, seq = {seq}" if seq is not None and seq >= 0 else name
    if op_id > 0:
        s = f"{s}, op_id = {op_id}"
    if dims is not None:
        shapes = []
        for d in dims:
            # a tensor list, or anything not a list of ints, is written `[]`
            ok = isinstance(d, list) and all(isinstance(x, int) for x in d)
            shapes.append("[" + ", ".join(str(x) for x in d) + "]" if ok else "[]")
        s = f"{s}, sizes = [{', '.join(shapes)}]"
    return s


def kineto_steps():
    """Per Kineto step: its kernels in launch order, each with the stack of CPU ops (outer
    first) around its launch call."""
    ev = json.load(gzip.open(KINETO))["traceEvents"]
    xs = [e for e in ev if e.get("ph") == "X"]
    launches = {e["args"]["correlation"]: e for e in xs if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {})}
    ops_by_tid = {}
    for e in xs:
        if e.get("cat") == "cpu_op":
            ops_by_tid.setdefault(e["tid"], []).append((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), e))
    for v in ops_by_tid.values():
        v.sort(key=lambda x: (x[0], -x[1]))
    starts_by_tid = {t: [x[0] for x in v] for t, v in ops_by_tid.items()}
    steps = sorted((e for e in xs if e["name"].startswith("ProfilerStep#")), key=lambda e: e["ts"])
    out = []
    for st in steps:
        a, b = ns(st["ts"]), ns(st["ts"]) + ns(st["dur"])
        ks = []
        for k in xs:
            if k.get("cat") != "kernel":
                continue
            r = launches.get(k["args"].get("correlation"))
            if r is None or not (a <= ns(r["ts"]) <= b):
                continue
            rs, re_ = ns(r["ts"]), ns(r["ts"]) + ns(r["dur"])
            ops = ops_by_tid.get(r["tid"], [])
            n = bisect.bisect_right(starts_by_tid.get(r["tid"], []), rs)
            stack = [o for o in ops[:n] if o[1] >= re_]
            ks.append((rs, k["name"], [o[2] for o in stack]))
        ks.sort(key=lambda x: x[0])
        out.append(ks)
    return out


def main():
    if DST.exists():
        DST.unlink()
    shutil.copyfile(SRC, DST)
    os.chmod(DST, 0o644)
    c = sqlite3.connect(DST)
    for (v,) in c.execute("SELECT name FROM sqlite_master WHERE type='view'").fetchall():
        c.execute(f'DROP VIEW "{v}"')
    for (t,) in c.execute("SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'").fetchall():
        if t not in READ:
            c.execute(f'DROP TABLE "{t}"')

    kin = kineto_steps()
    nv_steps = c.execute(
        "SELECT start, end, text FROM NVTX_EVENTS WHERE eventType = 59 AND text LIKE 'step_%' ORDER BY start"
    ).fetchall()
    rows = c.execute(
        """SELECT r.start, r.end, r.globalTid, s.value, r.correlationId
           FROM CUPTI_ACTIVITY_KIND_KERNEL k
           JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = k.correlationId
           JOIN StringIds s ON s.id = k.shortName
           ORDER BY r.start"""
    ).fetchall()
    instances = {}  # (nsys step, kineto op) -> dict
    matched_steps = []
    for si, (a, b, sname) in enumerate(nv_steps):
        mine = [r for r in rows if a <= r[0] <= b]
        ref = kin[si % len(kin)]
        if len(mine) != len(ref) or any(r[3] not in k[1] for r, k in zip(mine, ref)):
            print(f"{sname}: {len(mine)} kernels vs Kineto's {len(ref)}: left without op ranges")
            continue
        matched_steps.append(sname)
        for r, (_, _, stack) in zip(mine, ref):
            parent = None
            for depth, op in enumerate(stack):
                key = (si, id(op))
                inst = instances.setdefault(key, {"op": op, "tid": r[2], "lo": r[0], "hi": r[1], "kids": set(), "step": si})
                inst["lo"], inst["hi"] = min(inst["lo"], r[0]), max(inst["hi"], r[1])
                assert inst["tid"] == r[2], "an op's launches on two threads"
                if parent is not None:
                    instances[parent]["kids"].add(key)
                parent = key
    height = {}

    def h(key):
        if key not in height:
            height[key] = 1 + max((h(k) for k in instances[key]["kids"]), default=0)
        return height[key]

    out = []
    for key, inst in instances.items():
        hh = h(key)
        out.append([inst["lo"] - 2 * hh, inst["hi"] + 2 * hh, inst["tid"], inst["op"], hh])
    # op ids in CPU order, as RecordFunction hands them out
    out.sort(key=lambda x: (x[0], -x[1]))
    for i, o in enumerate(out):
        o.append(i + 1)
    # every thread's push/pop ranges (those already there and these) must nest
    existing = c.execute("SELECT start, end, globalTid FROM NVTX_EVENTS WHERE eventType = 59 AND end IS NOT NULL").fetchall()
    by_tid = {}
    for s, e, t in existing:
        by_tid.setdefault(t, []).append((s, e))
    for o in out:
        by_tid.setdefault(o[2], []).append((o[0], o[1]))
    for t, rs in by_tid.items():
        rs.sort(key=lambda x: (x[0], -x[1]))
        stack = []
        for s, e in rs:
            while stack and stack[-1] <= s:
                stack.pop()
            assert not stack or e <= stack[-1], f"ranges overlap without nesting on thread {t}: {s}..{e}"
            stack.append(e)
    ins = []
    for lo, hi, tid, op, _, op_id in out:
        a = op.get("args", {})
        seq = a.get("Sequence number")
        ins.append((lo, hi, 59, nvtx_text(op["name"], seq, op_id, a.get("Input Dims")), tid, tid, 0))
    c.executemany(
        "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, endGlobalTid, domainId) VALUES (?,?,?,?,?,?,?)", ins
    )
    c.commit()
    c.execute("VACUUM")
    c.close()
    print(f"{DST.name}: {len(ins)} op ranges over steps {', '.join(matched_steps)}; {DST.stat().st_size} bytes")


if __name__ == "__main__":
    main()
