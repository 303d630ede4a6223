#!/usr/bin/env python3
"""Independent oracle for the categories of a torch.profiler(profile_memory=True) trace's
`[memory]` instants (docs/memory.md, "Categories"), from the JSON with the standard library.

Each GPU instant (`Device Type` != 0, `Bytes` != 0) is an alloc (`Bytes` > 0) or a free of
`Addr`; its stack is the X events of its thread that hold its time (start <= ts <= end),
innermost first (a python_function named `file(line): func` is that frame, any other event a
frame named after it); the `user_annotation` events are the phases. What the profile never saw
made is one block: the last instant's `Total Allocated` less what the profile left allocated.
The rules are those of memory_categories_expected.py with the history taken as not starting at
the run's start (allocations made before it are `other` unless a frame says otherwise).

Usage: memory_profile_expected.py TRACE.json.gz > STEM.profile_categories.json
"""
import gzip, json, os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import memory_categories_expected as oracle  # noqa: E402


def frame_of(ev):
    name = ev["name"]
    if ev.get("cat") == "python_function" and "): " in name:
        loc, func = name.split("): ", 1)
        if "(" in loc:
            file, line = loc.rsplit("(", 1)
            if line.isdigit():
                return {"name": func, "filename": file, "line": int(line)}
    return {"name": name, "filename": "", "line": 0}


def main():
    with gzip.open(sys.argv[1]) as f:
        evs = json.load(f)["traceEvents"]
    xs = {}
    for e in evs:
        if e.get("ph") == "X" and "dur" in e:
            xs.setdefault((e["pid"], e["tid"]), []).append(e)
    mem = [e for e in evs if e.get("name") == "[memory]" and e.get("ph") == "i"]
    mem = [e for e in mem if e["args"].get("Device Type", 0) != 0 and e["args"].get("Bytes", 0) != 0]
    mem.sort(key=lambda e: e["ts"])  # stable: file order among equal times
    ranges = sorted((e["ts"], e["ts"] + e["dur"], e["name"]) for e in evs
                    if e.get("cat") == "user_annotation" and e.get("ph") == "X")
    out = {}
    for dev in sorted({e["args"]["Device Id"] for e in mem}):
        trace = []
        for e in mem:
            if e["args"]["Device Id"] != dev:
                continue
            holders = [x for x in xs.get((e["pid"], e["tid"]), []) if x["ts"] <= e["ts"] <= x["ts"] + x["dur"]]
            # innermost first: the latest start, the shortest among equal starts
            holders.sort(key=lambda x: (x["ts"], -x["dur"]), reverse=True)
            b = e["args"]["Bytes"]
            trace.append({
                "action": "alloc" if b > 0 else "free_completed",
                "addr": e["args"]["Addr"], "size": abs(b), "time_us": e["ts"],
                "frames": [frame_of(x) for x in holders],
                "total": e["args"].get("Total Allocated", -1),
            })
        open_ = {}
        for t in trace:
            if t["action"] == "alloc":
                open_[t["addr"]] = t["size"]
            else:
                open_.pop(t["addr"], None)
        before = max(trace[-1]["total"], 0) - sum(open_.values())
        blocks = [{"address": a, "size": n, "requested_size": n, "state": "active_allocated"} for a, n in open_.items()]
        if before > 0:
            blocks.append({"address": 0, "size": before, "requested_size": before, "state": "active_allocated"})
        snap = {
            "segments": [{"device": dev, "address": b["address"], "total_size": b["size"], "blocks": [b]} for b in blocks],
            "external_annotations": [a for t0, t1, n in ranges for a in (
                {"stage": "START", "name": n, "device": dev, "time_us": t0},
                {"stage": "END", "name": n, "device": dev, "time_us": t1})],
        }
        snap["external_annotations"].sort(key=lambda a: (a["time_us"], a["stage"] == "START"))
        oracle.wrapped = lambda _trace: True  # the profile began after the model was made
        out[str(dev)] = oracle.device(snap, dev, trace)["peak"]
    json.dump({"devices": out}, sys.stdout, indent=1, sort_keys=True)
    print()


if __name__ == "__main__":
    main()
