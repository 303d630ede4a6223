#!/usr/bin/env python3
"""Independent figures of the collectives in an nsys export's NCCL NVTX ranges, stdlib only.

Usage: nsys_nccl_expected.py OUT.json

Sources (tests/tools/record_nccl_nsys.py on an H100, one rank, NCCL 2.28.9):
- tests/expected/nsys_nccl_1rank.log.json: what the rank issued (kind, element count, dtype,
  bytes by nccl-tests' convention: all-gather its output, reduce-scatter and all-reduce their
  input, broadcast its buffer), written as it ran: the truth.
- sample-traces/nsys_nccl_1rank_json.sqlite (`nsys export --include-json=true`): the NCCL
  domain's push/pop ranges (NVTX_EVENTS, event type 59, domain named by its type-75 row), each
  payload in `jsonText`. NCCL's "Message size [bytes]" is per rank: all-gather's send
  buffer, reduce-scatter's receive buffer, the buffer of the others; the communicator's rank
  count is the "No. of ranks" of its ncclCommInitRank* payload. So nccl-tests' bytes:
  all-gather and reduce-scatter message × ranks, the others the message. Each range's
  duration is end − start (ns); algbw = bytes / duration (GB/s = bytes per ns).
  The k-th range of each kind must carry the log's k-th bytes of that kind (checked here).
- sample-traces/nsys_nccl_1rank_nojson.sqlite (default export): the same ranges, no payload
  values: bytes unknown.
"""
import json
import os
import sqlite3
import sys
from collections import defaultdict

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
TRACES = os.path.join(ROOT, "sample-traces")

KIND = {
    "ncclAllReduce": "all_reduce",
    "ncclAllGather": "all_gather",
    "ncclReduceScatter": "reduce_scatter",
    "ncclBroadcast": "broadcast",
    "ncclReduce": "reduce",
}


def nccl_ranges(path):
    con = sqlite3.connect(path)
    dom = [r[0] for r in con.execute("SELECT domainId FROM NVTX_EVENTS WHERE eventType = 75 AND text = 'NCCL'")]
    assert len(dom) == 1, dom
    rows = con.execute(
        "SELECT e.start, e.end, s.value, e.jsonText FROM NVTX_EVENTS e JOIN StringIds s ON s.id = e.textId "
        "WHERE e.eventType = 59 AND e.domainId = ? ORDER BY e.start",
        (dom[0],),
    ).fetchall()
    ranks = {}
    for _, _, name, js in rows:
        if name.startswith("ncclCommInitRank") and js:
            p = json.loads(js)
            ranks[p["NCCL communicator ID"]] = p["No. of ranks"]
    out = []
    for start, end, name, js in rows:
        if name not in KIND:
            continue
        kind = KIND[name]
        r = {"name": name, "kind": kind, "dur_ns": end - start, "bytes": None, "group": None, "group_size": None}
        if js:
            p = json.loads(js)
            msg = p["Message size [bytes]"]
            n = ranks[p["NCCL communicator ID"]]
            r["group"] = str(p["NCCL communicator ID"])
            r["group_size"] = n
            r["bytes"] = msg * n if kind in ("all_gather", "reduce_scatter") else msg
            r["algbw_gbps"] = r["bytes"] / r["dur_ns"]
        out.append(r)
    return out


def main(out_path):
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "nsys_nccl_1rank.log.json")) as f:
        log = json.load(f)
    issued = defaultdict(list)
    for c in log["collectives"]:
        issued[c["kind"]].append(c["bytes"])
    with_json = nccl_ranges(os.path.join(TRACES, "nsys_nccl_1rank_json.sqlite"))
    seen = defaultdict(list)
    for r in with_json:
        seen[r["kind"]].append(r["bytes"])
    for kind, b in seen.items():
        assert b == issued[kind], (kind, b, issued[kind])
    # kinds the rank issued that left no NCCL range in the export
    no_range = {k: len(v) for k, v in issued.items() if k not in seen}
    without = nccl_ranges(os.path.join(TRACES, "nsys_nccl_1rank_nojson.sqlite"))
    assert [r["kind"] for r in without] == [r["kind"] for r in with_json]
    res = {
        "issued": {k: v for k, v in issued.items()},
        "issued_without_range": no_range,
        "json": with_json,
        "nojson": without,
    }
    with open(out_path, "w") as f:
        json.dump(res, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1])
