#!/usr/bin/env python3
"""Makes sample-traces/nsys_gpu_metrics_h100.sqlite from a real Nsight Systems export recorded
with GPU metrics (`nsys profile --gpu-metrics-devices=0 --gpu-metrics-frequency=1000
--cuda-graph-trace=node`, NVTX phases gemm_bf16, copy_bandwidth, small_grids, host_sleep,
graph_capture, graph_replay; see tests/tools/record_metrics_graphs.py on the recording
machine). The export is 2.6 MB; to fit sample-traces it loses only what the importer never
reads: its empty tables and TARGET_INFO_SYSTEM_ENV (the recording machine's environment
variables). Every row of every other table is kept as nsys wrote it.

With --phases, GPU_METRICS also loses the samples outside the recording's NVTX ranges of those
texts: every sample from the last one before the first range starts to the first one at or
after the last range ends is kept (so each kept sample still has its next one, its period).
--out names the file written in sample-traces/.

  python3 tests/tools/trim_nsys_gpu_metrics.py RECORDED.sqlite [--out NAME] [--phases TEXT ...]
"""
import argparse
import shutil
import sqlite3
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def keep_phase_samples(con, texts):
    """Drops the GPU metric samples outside the NVTX ranges named `texts`; returns how many."""
    marks = ",".join("?" * len(texts))
    first, last = con.execute(f"SELECT min(start), max(end) FROM NVTX_EVENTS WHERE text IN ({marks})", texts).fetchone()
    if first is None:
        sys.exit(f"no NVTX range named {texts}")
    lo = con.execute("SELECT max(timestamp) FROM GPU_METRICS WHERE timestamp < ?", (first,)).fetchone()[0]
    hi = con.execute("SELECT min(timestamp) FROM GPU_METRICS WHERE timestamp >= ?", (last,)).fetchone()[0]
    lo = first if lo is None else lo
    hi = last if hi is None else hi
    return con.execute("DELETE FROM GPU_METRICS WHERE timestamp < ? OR timestamp > ?", (lo, hi)).rowcount


def main():
    ap = argparse.ArgumentParser(usage=__doc__)
    ap.add_argument("recorded")
    ap.add_argument("--out", default="nsys_gpu_metrics_h100.sqlite")
    ap.add_argument("--phases", nargs="*", default=[])
    args = ap.parse_args()
    out = ROOT / "sample-traces" / args.out
    tmp = out.with_suffix(".tmp")
    shutil.copyfile(args.recorded, tmp)
    con = sqlite3.connect(tmp)
    if args.phases:
        print(f"{keep_phase_samples(con, args.phases)} GPU metric samples outside the phases dropped")
    tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    dropped = []
    for t in tables:
        empty = con.execute(f'SELECT NOT EXISTS (SELECT 1 FROM "{t}")').fetchone()[0]
        if empty or t == "TARGET_INFO_SYSTEM_ENV":
            con.execute(f'DROP TABLE "{t}"')
            dropped.append(t)
    con.commit()
    con.execute("VACUUM")
    con.close()
    tmp.replace(out)
    print(f"{out}: {out.stat().st_size} bytes, {len(tables) - len(dropped)} tables kept, {len(dropped)} dropped")


if __name__ == "__main__":
    main()
