#!/usr/bin/env python3
"""The plain-SQL peer of `strobe report` on an Nsight Systems SQLite export (`strobe bench
peers`): what a user would write with Python's sqlite3 alone to get the report's headline
figures. Per GPU: busy time (union of kernels, copies and sets), compute and NCCL time and
their overlap, idle within the active span; the top kernels by total time; time per
stream; the CUDA runtime calls; copies by kind. Opens the file read-only and immutable.

  python3 tests/tools/nsys_plain_sql.py export.sqlite
"""
import sqlite3
import sys


def union(intervals):
    """Sorted, merged (start, end) pairs of intervals sorted by start."""
    out = []
    for s, e in intervals:
        if out and s <= out[-1][1]:
            if e > out[-1][1]:
                out[-1][1] = e
        else:
            out.append([s, e])
    return out


def total(u):
    return sum(e - s for s, e in u)


def intersect(a, b):
    i = j = 0
    t = 0
    while i < len(a) and j < len(b):
        s, e = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if s < e:
            t += e - s
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return t


def main(path):
    db = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    K = "CUPTI_ACTIVITY_KIND_KERNEL"
    gpu_tables = [t for t in (K, "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET") if t in tables]
    nccl = {r[0] for r in db.execute("SELECT id FROM StringIds WHERE value LIKE '%nccl%'")}
    name = "coalesce(demangledName, shortName)"
    # a report of several processes (one per rank) keeps each process's GPUs apart;
    # pid = (globalPid >> 24) & 0xFFFFFF is nsys's documented encoding
    pid = "((globalPid >> 24) & 16777215)"
    gpus = db.execute(f"SELECT DISTINCT {pid}, deviceId FROM {K} ORDER BY 1, 2").fetchall() if K in tables else []
    for p, d in gpus:
        busy, comp, comm = [], [], []
        rows = db.execute(
            " UNION ALL ".join(
                f"SELECT start, \"end\", {name if t == K else 'NULL'} FROM {t} WHERE {pid} = ? AND deviceId = ?"
                for t in gpu_tables
            )
            + " ORDER BY 1",
            [p, d] * len(gpu_tables),
        )
        for s, e, n in rows:
            busy.append((s, e))
            if n is not None:
                (comm if n in nccl else comp).append((s, e))
        b, c, m = union(busy), union(comp), union(comm)
        span = b[-1][1] - b[0][0] if b else 0
        print(
            f"process {p} GPU {d}: busy {total(b) / 1e6:.3f} ms of {span / 1e6:.3f} ms, idle {(span - total(b)) / 1e6:.3f} ms; "
            f"compute {total(c) / 1e6:.3f} ms, NCCL {total(m) / 1e6:.3f} ms, overlapped {intersect(c, m) / 1e6:.3f} ms"
        )
    if K in tables:
        print("top kernels:")
        q = (
            f"SELECT s.value, count(*), sum(k.\"end\" - k.start) FROM {K} k JOIN StringIds s ON s.id = "
            f"coalesce(k.demangledName, k.shortName) GROUP BY 1 ORDER BY 3 DESC LIMIT 10"
        )
        for n, c, t in db.execute(q):
            print(f"  {t / 1e6:10.3f} ms {c:8d}× {n[:80]}")
        print("streams:")
        for d, s, c, t in db.execute(
            f"SELECT deviceId, streamId, count(*), sum(\"end\" - start) FROM {K} GROUP BY 1, 2 ORDER BY 4 DESC"
        ):
            print(f"  GPU {d} stream {s}: {c} kernels, {t / 1e6:.3f} ms")
    if "CUPTI_ACTIVITY_KIND_RUNTIME" in tables:
        c, t = db.execute('SELECT count(*), coalesce(sum("end" - start), 0) FROM CUPTI_ACTIVITY_KIND_RUNTIME').fetchone()
        print(f"CUDA runtime: {c} calls, {t / 1e6:.3f} ms")
    if "CUPTI_ACTIVITY_KIND_MEMCPY" in tables:
        for k, c, b in db.execute(
            "SELECT copyKind, count(*), sum(bytes) FROM CUPTI_ACTIVITY_KIND_MEMCPY GROUP BY 1 ORDER BY 1"
        ):
            print(f"copies of kind {k}: {c}, {b / 1e6:.1f} MB")


if __name__ == "__main__":
    main(sys.argv[1])
