#!/usr/bin/env python3
"""Makes sample-traces/nsys_gpu_metrics_h100.sqlite from a real Nsight Systems export recorded
with GPU metrics (`nsys profile --gpu-metrics-devices=0 --gpu-metrics-frequency=1000
--cuda-graph-trace=node`, NVTX phases gemm_bf16, copy_bandwidth, small_grids, host_sleep,
graph_capture, graph_replay; see tests/tools/record_metrics_graphs.py on the recording
machine). The export is 2.6 MB; to fit sample-traces it loses only what the importer never
reads: its empty tables and TARGET_INFO_SYSTEM_ENV (the recording machine's environment
variables). Every row of every other table is kept as nsys wrote it.

  python3 tests/tools/trim_nsys_gpu_metrics.py RECORDED.sqlite
"""
import shutil
import sqlite3
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "sample-traces" / "nsys_gpu_metrics_h100.sqlite"


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    tmp = OUT.with_suffix(".tmp")
    shutil.copyfile(sys.argv[1], tmp)
    con = sqlite3.connect(tmp)
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
    tmp.replace(OUT)
    print(f"{OUT}: {OUT.stat().st_size} bytes, {len(tables) - len(dropped)} tables kept, {len(dropped)} dropped")


if __name__ == "__main__":
    main()
