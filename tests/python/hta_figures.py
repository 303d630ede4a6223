"""HTA's own idle-time and kernel breakdowns of one trace, as JSON on stdout (run with a
Python that has HTA 0.5: `pip install HolisticTraceAnalysis==0.5.0`).

Usage: python hta_figures.py TRACE_DIR

Every kernel the trace launched counts (`include_last_profiler_step`), and kernel wait is a
gap under 10 µs (`consecutive_kernel_delay`), Strobe's idle threshold. Times in HTA's unit, µs.
"""

import json
import logging
import sys
import warnings

logging.disable(logging.WARNING)
warnings.simplefilter("ignore")
from hta.trace_analysis import TraceAnalysis  # noqa: E402

a = TraceAnalysis(trace_dir=sys.argv[1], include_last_profiler_step=True)
types, per_kernel = a.get_gpu_kernel_breakdown(visualize=False, num_kernels=10**9, include_memory_kernels=True)
idle = a.get_idle_time_breakdown(visualize=False, consecutive_kernel_delay=10)[0]
json.dump(
    {
        "kernel_types": {str(r.kernel_type): float(r.sum) for r in types.itertuples()},
        "kernels": [
            {"name": r["name"], "kernel_type": r["kernel_type"], "sum_us": float(r["sum (us)"])}
            for _, r in per_kernel.iterrows()
        ],
        "idle": [
            {"stream": int(r.stream), "category": str(r.idle_category), "idle_us": float(r.idle_time)}
            for r in idle.itertuples()
        ],
    },
    sys.stdout,
)
