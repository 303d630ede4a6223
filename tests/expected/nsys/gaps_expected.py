#!/usr/bin/env python3
"""Independent oracle for the headline figures, the largest idle gaps and the diagnostics of
an Nsight Systems export. Stdlib only (sqlite3), sharing no code with the Rust crates.

Definitions (docs/viewer.md, "Gaps" and "Headline"):
- GPU operations: rows of CUPTI_ACTIVITY_KIND_KERNEL, _MEMCPY, _MEMSET with end > start... (an
  empty one, end == start, adds nothing to a union); a device's busy time is the union of its
  operations' [start, end); its gaps are the spaces between consecutive union intervals.
- A gap's closing operation: the operation first by (start, end) among those starting at the
  gap's end; its launch: the runtime call with the same process (globalTid >> 24 ==
  globalPid >> 24) and correlationId.
- Cause: gap < 10 000 ns kernel wait; else host wait when the launch starts after the gap's
  start; else other (no launch: other).
- Steps: NVTX ranges whose text reads as an iteration (steps_expected.py's rule), outermost.
  Capture range: from the end of the first cudaProfilerStart / cuProfilerStart runtime call to
  the start of the last cudaProfilerStop / cuProfilerStop after it (none: open-ended); only
  steps wholly inside it are kept.
  Headline window: first step start to last step end; with no steps the capture range (its
  end cut at the last GPU operation's end); with neither, the whole trace, each device its
  first start to its last end.
- Headline per device over [a, b): busy = union within; idle = (b - a) - busy; each gap reaching
  into the window counts its part inside under its whole cause; window parts before the first
  or after the last busy interval count as other.
- Holding op of a gap: on the launching thread (globalTid), among its runtime calls, its
  CUPTI synchronization records (on the thread of the runtime call with their correlation id,
  named as Kineto names the sync types) and its NVTX ranges (a runtime call named without its `_v<N>` ABI suffix, as the importer names it): the shortest covering the whole gap (later start on a tie); else the one with the
  largest overlap (earlier start on a tie) if that overlap is at least half the gap; else none.
- Diagnostics: DIAGNOSTIC_EVENT rows of severity Warning or Error (ENUM_DIAGNOSTIC_SEVERITY_LEVEL),
  their text (a StringIds id where the column holds integers), distinct texts with counts.

usage: gaps_expected.py EXPORT.sqlite > X.gaps.json
"""
import json
import re
import sqlite3
import sys

IT = re.compile(r"^(train(ing)?[ _\-#:.=]*)?(iteration|iter|step)([ _\-#:.=]*\d+)?$", re.I)
PS = re.compile(r"^ProfilerStep#\d+$")
THRESHOLD = 10_000
TOP = 20


def union(iv):
    out = []
    for s, e in sorted(iv):
        if e <= s:
            continue
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def within(u, a, b):
    return sum(max(0, min(e, b) - max(s, a)) for s, e in u)


def main(path):
    c = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    tables = {r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    strings = dict(c.execute("SELECT id, value FROM StringIds"))
    ops = {}  # device -> [(start, end, pid, corr)]
    for t in ["CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"]:
        if t in tables:
            for s, e, d, gp, corr in c.execute(f"SELECT start, end, deviceId, globalPid, correlationId FROM {t}"):
                ops.setdefault(d, []).append((s, e, gp >> 24, corr))
    launch = {}
    calls = {}  # globalTid -> [(start, end, name)]
    pstarts, pstops = [], []
    for s, e, tid, corr, nid in c.execute(
            "SELECT start, end, globalTid, correlationId, nameId FROM CUPTI_ACTIVITY_KIND_RUNTIME"):
        launch[(tid >> 24, corr)] = (s, tid)
        name = re.sub(r"_v[0-9]+$", "", strings.get(nid, ""))
        calls.setdefault(tid, []).append((s, e, name))
        if name in ("cudaProfilerStart", "cuProfilerStart"):
            pstarts.append(e)
        if name in ("cudaProfilerStop", "cuProfilerStop"):
            pstops.append(s)
    # CUPTI synchronization records sit on the thread of the runtime call with their process and
    # correlation id, named as Kineto names CUPTI's sync types
    sync_names = {1: "Event Sync", 2: "Stream Wait Event", 3: "Stream Sync", 4: "Context Sync"}
    if "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION" in tables:
        for s, e, gp, corr, t in c.execute(
                "SELECT start, end, globalPid, correlationId, syncType FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"):
            l = launch.get((gp >> 24, corr))
            if l is not None and e is not None and e >= s:
                calls.setdefault(l[1], []).append((s, e, sync_names.get(t, "Unknown Sync")))
    capture = None
    if pstarts:
        a = min(pstarts)
        b = max([x for x in pstops if x >= a], default=None)
        capture = (a, b if b is not None else 2**63 - 1)
    steps = []
    if "NVTX_EVENTS" in tables:
        rows = []
        for s, e, text, tid_, gt in c.execute(
                "SELECT start, end, text, textId, globalTid FROM NVTX_EVENTS WHERE end IS NOT NULL"):
            name = text if text is not None else strings.get(tid_)
            if name is not None and e >= s:
                calls.setdefault(gt, []).append((s, e, name))
            if name and (IT.match(name.strip()) or PS.match(name)) and e > s:
                rows.append((s, e))
        rows.sort(key=lambda r: (r[0], -r[1]))
        reach = None
        for s, e in rows:
            if reach is not None and e <= reach:
                continue
            reach = e
            steps.append((s, e))
    if capture:
        steps = [(s, e) for s, e in steps if s >= capture[0] and e <= capture[1]]
    window = (min(s for s, _ in steps), max(e for _, e in steps)) if steps else None
    covers = "steps" if window else "trace"
    if not window and capture and ops:
        end = min(capture[1], max(e for v in ops.values() for _, e, _, _ in v))
        if end > capture[0]:
            window, covers = (capture[0], end), "capture"

    def holder(tid, a, b):
        cover, most = None, None
        for s, e, n in calls.get(tid, []):
            if s <= a and e >= b:
                k = (e - s, -s)
                if cover is None or k < cover[0]:
                    cover = (k, n)
            elif e > a and s < b or (s < max(b, a + 1) and e > a):
                k = (min(e, b) - max(s, a), -s)
                if most is None or k > most[0]:
                    most = (k, n)
        if cover:
            return cover[1]
        if most and 2 * most[0][0] >= b - a and b > a:
            return most[1]
        return None

    devices, gaps = [], []
    for d in sorted(ops):
        u = union([(s, e) for s, e, _, _ in ops[d]])
        first = {}
        for s, e, p, corr in sorted(ops[d]):
            first.setdefault(s, (p, corr))
        a, b = window if window else (u[0][0], u[-1][1])
        host = kern = other = 0
        long_gaps = 0
        for (s0, e0), (s1, e1) in zip(u, u[1:]):
            ce, st = e0, s1
            g = st - ce
            p, corr = first[st]
            l = launch.get((p, corr))
            if g < THRESHOLD:
                cause = "kernel wait"
            elif l is not None and l[0] > ce:
                cause = "host wait"
            else:
                cause = "other"
            if g >= THRESHOLD:
                gaps.append({"device": d, "start_ns": ce, "len_ns": g, "cause": cause,
                             "held_by": holder(l[1], ce, st) if l else None})
            inside = min(st, b) - max(ce, a)
            if inside <= 0:
                continue
            long_gaps += g >= THRESHOLD
            if cause == "host wait":
                host += inside
            elif cause == "kernel wait":
                kern += inside
            else:
                other += inside
        other += max(0, min(u[0][0], b) - a) + max(0, b - max(u[-1][1], a))
        busy = within(u, a, b)
        devices.append({"device": d, "window_ns": b - a, "busy_ns": busy, "idle_ns": b - a - busy,
                        "host_wait_ns": host, "kernel_wait_ns": kern, "other_ns": other, "long_gaps": long_gaps})
    gaps.sort(key=lambda g: (-g["len_ns"], g["start_ns"]))
    diags = {}
    if "DIAGNOSTIC_EVENT" in tables:
        sev = {"Warning": 2, "Error": 3}
        if "ENUM_DIAGNOSTIC_SEVERITY_LEVEL" in tables:
            sev = {n: i for i, n, _ in c.execute("SELECT * FROM ENUM_DIAGNOSTIC_SEVERITY_LEVEL")}
        keep = {sev["Warning"]: "warning", sev["Error"]: "error"}
        for s, text in c.execute("SELECT severity, text FROM DIAGNOSTIC_EVENT ORDER BY timestamp"):
            if s in keep:
                text = strings.get(text) if isinstance(text, int) else text
                diags.setdefault((keep[s], text), 0)
                diags[(keep[s], text)] += 1
    return {
        "headline": {"covers": covers, "steps": len(steps) if covers == "steps" else 0, "devices": devices},
        "largest_gaps": gaps[:TOP],
        "long_gaps": len(gaps),
        "diagnostics": [{"severity": k[0], "text": k[1], "count": v} for k, v in diags.items()],
    }


if __name__ == "__main__":
    json.dump(main(sys.argv[1]), sys.stdout, indent=1)
    sys.stdout.write("\n")
