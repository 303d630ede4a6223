#!/usr/bin/env python3
"""Trims the nsys capture of a CUDA graph (recorded with --cuda-graph-trace=node by
record_metrics_graphs.py: NVTX phases ..., graph_capture, graph_replay) to its last two phases,
so that it fits sample-traces/: rows of the timed tables that start before the graph_capture
range are deleted, the rest of the export is kept as nsys wrote it.

    python3 tests/tools/trim_nsys_cuda_graphs.py IN.sqlite sample-traces/nsys_cuda_graphs.sqlite
"""
import shutil
import sqlite3
import sys

TIMED = [
    "CUPTI_ACTIVITY_KIND_KERNEL",
    "CUPTI_ACTIVITY_KIND_MEMCPY",
    "CUPTI_ACTIVITY_KIND_MEMSET",
    "CUPTI_ACTIVITY_KIND_RUNTIME",
    "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
    "NVTX_EVENTS",
    "OSRT_API",
    "CUDA_GRAPH_NODE_EVENTS",
    "CUDA_GPU_MEMORY_USAGE_EVENTS",
]


def main(src, dst):
    shutil.copyfile(src, dst)
    c = sqlite3.connect(dst)
    (t0,) = c.execute("SELECT start FROM NVTX_EVENTS WHERE text = 'graph_capture'").fetchone()
    tables = {r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    for t in TIMED:
        if t in tables:
            c.execute(f'DELETE FROM "{t}" WHERE start < ?', (t0,))
    if "GPU_METRICS" in tables:
        c.execute("DELETE FROM GPU_METRICS WHERE timestamp < ?", (t0,))
    c.commit()
    c.execute("VACUUM")
    c.close()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
