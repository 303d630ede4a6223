#!/usr/bin/env python3
"""Independent oracle for Strobe's tests: slices, nesting and v1 flows of a
generic chrome trace-event file.

Written in plain Python (stdlib only), sharing no code or logic with the Rust
implementation, so that the Rust tests compare against figures computed a
second, independent way.  The rules (and where they are a choice) are in
README.md next to this file.

usage: python3 tests/expected/chrome_expected.py TRACE.json[.gz] > X.chrome.json
"""
import bisect
import gzip
import json
import os
import sys
from collections import Counter, defaultdict
from decimal import ROUND_HALF_EVEN, Decimal

INF = float("inf")
FULL_LIST_BELOW = 200  # list every slice when the file has fewer slices


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        text = f.read().strip()
    if text.startswith("[") and not text.endswith("]"):  # array may be unclosed
        text = text.rstrip().rstrip(",") + "]"
    return json.loads(text, parse_float=Decimal)


def to_ns(value, scale):
    return int((Decimal(value) * scale).to_integral_value(rounding=ROUND_HALF_EVEN))


def sort_key(v):
    return (0, v, "") if isinstance(v, int) else (1, 0, str(v))


def build_slices(events, scale, notes):
    """Returns {thread: [slice dicts sorted by (ts, longer first, file order)]}."""
    per_thread = defaultdict(list)
    for idx, e in enumerate(events):
        ph = e.get("ph")
        if ph in ("X", "B", "E", "i", "I"):
            per_thread[(e.get("pid"), e.get("tid", e.get("pid")))].append((idx, e))

    slices = {}
    for thread, evs in per_thread.items():
        out, open_b = [], []
        # B/E matching runs in ts order (file order breaks ties).
        for idx, e in sorted(evs, key=lambda p: (to_ns(p[1]["ts"], scale), p[0])):
            ph, ts = e["ph"], to_ns(e["ts"], scale)
            s = {"ts": ts, "dur": 0, "name": e.get("name", ""), "idx": idx}
            if ph == "X":
                if e.get("dur") is None:
                    notes["x_without_dur_skipped"] += 1
                    continue
                s["dur"] = to_ns(e["dur"], scale)
            elif ph in ("i", "I"):
                if e.get("s", "t") != "t":   # process/global instant: no thread slice
                    notes["non_thread_instants"] += 1
                    continue
            elif ph == "B":
                s["dur"] = -1                  # stays -1 if never closed
                open_b.append(s)
            elif ph == "E":
                if not open_b:
                    notes["e_without_b"] += 1
                    continue
                b = open_b.pop()
                b["dur"] = ts - b["ts"]
                if e.get("name") and e["name"] != b["name"]:
                    notes["e_name_mismatch"] += 1
                continue
            out.append(s)

        # Depth (README "Nesting"): a slice's parent is the innermost earlier slice still
        # open at its start that holds it, or holds at least half of it (a near-miss end);
        # a slice lying mostly after the one it starts in goes beside it. An unclosed B
        # nests where it began. Ends are clipped to the parent's, so an overhang holds
        # nothing down. Written as a walk up parent links (the Rust side keeps a stack).
        out.sort(key=lambda s: (s["ts"], -(INF if s["dur"] < 0 else s["dur"]), s["idx"]))
        last, prev = None, None
        for s in out:
            end = INF if s["dur"] < 0 else s["ts"] + s["dur"]
            c = last
            while c is not None:
                ce = c["eff_end"]
                if ce <= s["ts"]:
                    c = c["parent"]
                    continue
                if end <= ce or s["dur"] < 0:
                    break
                if ce - s["ts"] >= end - ce:
                    notes["nested_end_after_parent_clipped"] += 1
                    break
                notes["nested_mostly_after_reparented"] += 1
                c = c["parent"]
            s["parent"] = c
            s["depth"] = 0 if c is None else c["depth"] + 1
            s["eff_end"] = end if c is None else min(end, c["eff_end"])
            if end == s["ts"] and prev and prev["dur"] == 0 and prev["ts"] == s["ts"]:
                notes["zero_dur_after_zero_dur_same_ts"] += 1  # Perfetto stacks these
            last, prev = s, s
        slices[thread] = out
    return slices


def enclosing(thread_slices, starts, ts):
    """Innermost slice with start <= ts <= end (closed on the right, as
    catapult's findSliceAtTs; an unclosed B has end = infinity).  Ties at equal
    depth go to the later-starting slice."""
    i = bisect.bisect_right(starts, ts) - 1
    best = None
    while i >= 0:
        s = thread_slices[i]
        end = INF if s["dur"] < 0 else s["ts"] + s["dur"]
        if end >= ts and (best is None or s["depth"] > best["depth"]):
            best = s
        if s["depth"] == 0 and s["ts"] < ts:  # all earlier slices end before ts
            break
        i -= 1
    return best


def build_flows(events, scale, slices, notes):
    starts = {t: [s["ts"] for s in v] for t, v in slices.items()}
    chains = defaultdict(list)  # (cat, id) -> flow events in (ts, file order)
    for idx, e in enumerate(events):
        if e.get("ph") in ("s", "t", "f"):
            chains[(e.get("cat"), str(e.get("id")))].append((to_ns(e["ts"], scale), idx, e))

    def bind(e, ts):
        thread = (e.get("pid"), e.get("tid", e.get("pid")))
        v, st = slices.get(thread, []), starts.get(thread, [])
        if e["ph"] == "f" and e.get("bp") != "e":      # next slice at/after ts
            i = bisect.bisect_left(st, ts)
            return v[i] if i < len(v) else None
        return enclosing(v, st, ts)

    pairs = []
    for key, evs in chains.items():
        evs.sort(key=lambda p: (p[0], p[1]))
        chain = None
        done = []
        for ts, idx, e in evs:
            if e["ph"] == "s":
                if chain is not None:
                    notes["flow_s_while_open_ignored"] += 1
                    continue
                start = bind(e, ts)
                if start is None:   # an unbound 's' opens nothing
                    notes["flow_s_unbound"] += 1
                    continue
                chain = [start]
            elif chain is None:
                notes["flow_" + e["ph"] + "_without_s"] += 1
            else:
                chain.append(bind(e, ts))
                if e["ph"] == "f":
                    done.append(chain)
                    chain = None
        if chain is not None:
            notes["flow_chains_without_f"] += 1
            done.append(chain)
        for c in done:
            notes["flow_events_unbound"] += sum(1 for s in c if s is None)
            for a, b in zip(c, c[1:]):
                if a is None or b is None:
                    notes["flow_pairs_dropped_unbound"] += 1
                else:
                    pairs.append([a["name"], a["ts"], b["name"], b["ts"]])
    pairs.sort(key=lambda p: (p[1], p[3], p[0], p[2]))
    return pairs


def report(path):
    doc = load(path)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    scale = 1000  # ts/dur are µs; displayTimeUnit is a display hint only
    notes = Counter()
    slices = build_slices(events, scale, notes)
    flows = build_flows(events, scale, slices, notes)
    total = sum(len(v) for v in slices.values())

    threads = []
    for (pid, tid), v in sorted(slices.items(), key=lambda kv: (sort_key(kv[0][0]), sort_key(kv[0][1]))):
        t = {"pid": pid, "tid": tid, "slices": len(v),
             "unclosed": sum(1 for s in v if s["dur"] < 0),
             "instants_or_zero_dur": sum(1 for s in v if s["dur"] == 0),
             "max_depth": max((s["depth"] for s in v), default=0),
             "sum_dur_ns": sum(s["dur"] for s in v if s["dur"] > 0),
             "depth_counts": dict(sorted(Counter(str(s["depth"]) for s in v).items(), key=lambda kv: int(kv[0])))}
        if total < FULL_LIST_BELOW:
            t["list"] = [[s["ts"], s["dur"], s["depth"], s["name"]] for s in v]
        threads.append(t)

    return {
        "source": os.path.basename(path),
        "time_unit": "us",
        "events": len(events),
        "by_phase": dict(sorted(Counter(str(e.get("ph", "")) for e in events).items())),
        "slices": total,
        "unclosed": sum(t["unclosed"] for t in threads),
        "threads": threads,
        "flows": flows,
        "notes": dict(sorted(notes.items())),
    }


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    json.dump(report(sys.argv[1]), sys.stdout, indent=1, ensure_ascii=False)
    sys.stdout.write("\n")
