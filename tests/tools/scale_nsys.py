#!/usr/bin/env python3
"""Scales a real Nsight Systems SQLite export to a benchmark input of about --size-mb: every
timed event table is repeated N times, each copy shifted past the previous one by the
trace's span (plus a gap) and its correlation ids moved past every id before it, so kernels
still pair with their launches. Other tables (strings, processes, devices) stay as they are.
The source is opened read-only; the output is a new file.

With --vary, copy k is also stretched in time by its own factor (1 + up to 1 %, about the
source's first time), so that no two copies have the same gaps and durations: exact copies
compress far better than a real trace does, which misleads a measure of the cache's size.
Stretching keeps every row's order and nesting.

  python3 tests/tools/scale_nsys.py sample-traces/nsys_ddp_2proc.sqlite --size-mb 250 \\
      -o bench-data/nsys_250m.sqlite
"""
import argparse
import os
import shutil
import sqlite3
import sys

# Tables with start/end times (nsys export schema); those absent from the source are skipped.
TIMED = [
    "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET",
    "CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "CUPTI_ACTIVITY_KIND_CUDA_EVENT",
    "NVTX_EVENTS", "OSRT_API", "CUDA_GPU_MEMORY_USAGE_EVENTS", "PROFILER_OVERHEAD",
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("source")
    ap.add_argument("--size-mb", type=float, required=True)
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--vary", action="store_true", help="stretch each copy in time by its own factor")
    a = ap.parse_args()
    if os.path.exists(a.output):
        os.remove(a.output)
    shutil.copyfile(a.source, a.output)
    os.chmod(a.output, 0o644)
    db = sqlite3.connect(a.output)
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    cols = {t: [r[1] for r in db.execute(f'PRAGMA table_info("{t}")')] for t in TIMED if t in tables}
    # a table is repeated when it has times (some exports' tables of these names have none)
    timed = [t for t in cols if "start" in cols[t]]
    lo, hi, corr = None, None, 0
    for t in timed:
        end = 'coalesce("end", start)' if "end" in cols[t] else "start"
        s, e = db.execute(f'SELECT min(start), max({end}) FROM "{t}"').fetchone()
        if s is not None:
            lo = s if lo is None else min(lo, s)
            hi = e if hi is None else max(hi, e)
        if "correlationId" in cols[t]:
            corr = max(corr, db.execute(f'SELECT coalesce(max(correlationId), 0) FROM "{t}"').fetchone()[0])
    if lo is None:
        sys.exit(f"{a.source}: no timed rows to repeat")
    shift = (hi - lo) * (101 if a.vary else 100) // 100 + 1_000_000  # 1 ms between copies
    # every copy is inserted from the original rows (rowid ≤ the source's last), shifted by k
    last = {t: db.execute(f'SELECT coalesce(max(rowid), 0) FROM "{t}"').fetchone()[0] for t in timed}

    def size():
        return db.execute("PRAGMA page_count").fetchone()[0] * db.execute("PRAGMA page_size").fetchone()[0]

    def add_copy(k):
        for t in timed:
            sel = []
            for c in cols[t]:
                if c in ("start", "end") and a.vary:
                    # 1 + (0..1 %), the same for every table of copy k
                    f = 1 + ((k * 7919) % 1000) / 100_000
                    sel.append(f'{lo} + {k * shift} + CAST(("{c}" - {lo}) * {f!r} AS INTEGER)')
                elif c in ("start", "end"):
                    sel.append(f'"{c}" + {k * shift}')
                elif c == "correlationId":
                    sel.append(f'"{c}" + {k * (corr + 1)}')
                else:
                    sel.append(f'"{c}"')
            names = ", ".join(f'"{c}"' for c in cols[t])
            db.execute(f'INSERT INTO "{t}" ({names}) SELECT {", ".join(sel)} FROM "{t}" WHERE rowid <= {last[t]}')

    # the copies' own size, from the first few (the untimed tables do not grow)
    size0 = size()
    probe = 8
    for k in range(1, probe + 1):
        add_copy(k)
    db.commit()
    per_copy = max(1, (size() - size0) / probe)
    copies = max(probe + 1, round((a.size_mb * 1e6 - size0) / per_copy) + 1)
    for k in range(probe + 1, copies):
        add_copy(k)
        if k % 50 == 0:
            db.commit()
    db.commit()
    db.execute("VACUUM")
    db.close()
    rows = 0
    db = sqlite3.connect(f"file:{a.output}?mode=ro", uri=True)
    for t in timed:
        rows += db.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0]
    print(f"{a.output}: {os.path.getsize(a.output) / 1e6:.1f} MB, {copies} copies, {rows} timed rows")


if __name__ == "__main__":
    main()
