#!/usr/bin/env python3
"""Independent oracle for the Ops table (torch.profiler's key_averages) of a Kineto trace.

Usage: python3 tests/expected/ops_expected.py sample-traces/gpt_train.json.gz > tests/expected/gpt_train.ops.json

Rules (from torch/autograd/profiler.py `_parse_kineto_results` and profiler_util.py
`FunctionEvent` / `EventList._build_tree` / `key_averages`, not from the Rust code):
- Events: every complete ('X') event of the categories cpu_op, user_annotation, cuda_runtime,
  cuda_driver (host side) and kernel, gpu_memcpy, gpu_memset (device side). python_function,
  gpu_user_annotation, instants and Kineto's own 'Trace' span are not profiler events.
  Names PyTorch filters out are dropped entirely ([memory], [OutOfMemory],
  profiler::_record_function_enter / _enter_new / _exit, aten::is_leaf, aten::output_nr,
  aten::_version). "ProfilerStep#N" is keyed "ProfilerStep*".
- Times are integer ns (the JSON's microsecond decimals times 1000, exactly).
- CPU children: per (pid, tid), host events sorted by (start, -end); a stack of open events;
  an event pops the top while it starts at or after the top's end or ends after it; the top
  left (if any) is its parent.
- cpu_total = duration (host events; 0 for device ones); self_cpu = duration - the sum of the
  direct children's durations.
- A device event belongs to the op (cpu_op or user_annotation) whose "External id" equals its
  own "External id" (runtime and driver calls carry their op's id too: a link, not an owner).
  device_total(host) = its device events' durations + the device_total of its children;
  self_device(host) = device_total - children's device_total. Device events: device_total =
  self_device = duration.
- Rows: key (name[, input shapes]) and side (host or device: PyTorch keys by device type too);
  count and sums of the four figures.
- Input shapes: the "Input Dims" arg written as Python's str() of the list ("[[2, 3], []]");
  events without it have "[]".
Output: {"by_op": [...], "by_op_and_shape": [...]} rows sorted by (name, shapes, device), each
{name, shapes?, device, count, cpu_total_ns, self_cpu_ns, device_total_ns, self_device_ns}.
"""
import gzip
import json
import sys
from decimal import Decimal

HOST = {"cpu_op", "user_annotation", "cuda_runtime", "cuda_driver"}
OWNERS = {"cpu_op", "user_annotation"}
DEVICE = {"kernel", "gpu_memcpy", "gpu_memset"}
FILTERED = {
    "[memory]",
    "[OutOfMemory]",
    "profiler::_record_function_enter",
    "profiler::_record_function_enter_new",
    "profiler::_record_function_exit",
    "aten::is_leaf",
    "aten::output_nr",
    "aten::_version",
}


def ns(x):
    return int(Decimal(str(x)) * 1000)


def load(path):
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt") as f:
        doc = json.load(f)
    return doc["traceEvents"] if isinstance(doc, dict) else doc


def events(raw):
    evs = []
    for e in raw:
        cat = e.get("cat")
        if e.get("ph") != "X" or (cat not in HOST and cat not in DEVICE):
            continue
        name = e.get("name", "")
        if name in FILTERED:
            continue
        start = ns(e["ts"])
        args = e.get("args") or {}
        dims = args.get("Input Dims")
        evs.append(
            {
                "name": "ProfilerStep*" if name.startswith("ProfilerStep#") else name,
                "cat": cat,
                "host": cat in HOST,
                "start": start,
                "end": start + ns(e.get("dur", 0)),
                "thread": (e.get("pid"), e.get("tid")),
                "ext": args.get("External id"),
                "shapes": "[]" if dims is None else str(dims),
                "children": [],
                "kernel_ns": 0,
            }
        )
    return evs


def build(evs):
    owner = {}
    for ev in evs:
        if ev["cat"] in OWNERS and ev["ext"] is not None:
            owner.setdefault(ev["ext"], ev)
    for ev in evs:
        if not ev["host"] and ev["ext"] in owner:
            owner[ev["ext"]]["kernel_ns"] += ev["end"] - ev["start"]
    threads = {}
    for ev in evs:
        if ev["host"]:
            threads.setdefault(ev["thread"], []).append(ev)
    for lst in threads.values():
        lst.sort(key=lambda e: (e["start"], -e["end"]))
        stack = []
        for ev in lst:
            while stack:
                top = stack[-1]
                if ev["start"] >= top["end"] or ev["end"] > top["end"]:
                    stack.pop()
                else:
                    top["children"].append(ev)
                    break
            stack.append(ev)


def device_total(ev, memo):
    if not ev["host"]:
        return ev["end"] - ev["start"]
    k = id(ev)
    if k not in memo:
        # children before parents would need recursion depth; iterate from the leaves instead
        memo[k] = ev["kernel_ns"] + sum(device_total(c, memo) for c in ev["children"])
    return memo[k]


def figures(evs):
    memo = {}
    # fill the memo leaves first (start order reversed: children start after their parents)
    for ev in sorted((e for e in evs if e["host"]), key=lambda e: (e["start"], -e["end"]), reverse=True):
        device_total(ev, memo)
    out = []
    for ev in evs:
        dur = ev["end"] - ev["start"]
        if ev["host"]:
            dt = device_total(ev, memo)
            child_dt = sum(device_total(c, memo) for c in ev["children"])
            out.append((ev, dur, dur - sum(c["end"] - c["start"] for c in ev["children"]), dt, dt - child_dt))
        else:
            out.append((ev, 0, 0, dur, dur))
    return out


def rows(figs, with_shapes):
    acc = {}
    for ev, cpu, self_cpu, dev, self_dev in figs:
        key = (ev["name"], ev["shapes"] if with_shapes else None, "cpu" if ev["host"] else "cuda")
        r = acc.setdefault(key, [0, 0, 0, 0, 0])
        r[0] += 1
        r[1] += cpu
        r[2] += self_cpu
        r[3] += dev
        r[4] += self_dev
    out = []
    for (name, shapes, device), r in sorted(acc.items()):
        row = {"name": name}
        if with_shapes:
            row["shapes"] = shapes
        row.update(
            {
                "device": device,
                "count": r[0],
                "cpu_total_ns": r[1],
                "self_cpu_ns": r[2],
                "device_total_ns": r[3],
                "self_device_ns": r[4],
            }
        )
        out.append(row)
    return out


def main(path):
    evs = events(load(path))
    build(evs)
    figs = figures(evs)
    json.dump({"by_op": rows(figs, False), "by_op_and_shape": rows(figs, True)}, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv[1])
