#!/usr/bin/env python3
"""HTA's critical path per ProfilerStep of one trace, for the comparison in docs/critical_path.md.

Usage (HTA installed in a virtualenv, e.g. `pip install HolisticTraceAnalysis==0.5.0`):
    python hta_critical_path.py TRACE_DIR OUT.json [data]
TRACE_DIR holds the one rank's Kineto trace. With `data`, the data-loading ranges are passed as
HTA's `data_load_events` (HTA versions that take them). Output per step: the path's length, its
split by HTA's `bound_by` and `summary()` (%), and the five events with most time on it; times in
HTA's unit (µs).
"""
import json
import logging
import sys

logging.disable(logging.WARNING)
from hta.trace_analysis import TraceAnalysis  # noqa: E402

trace_dir, out_path = sys.argv[1], sys.argv[2]
analysis = TraceAnalysis(trace_dir=trace_dir, include_last_profiler_step=True)
rank = list(analysis.t.traces.keys())[0]
df = analysis.t.get_trace(rank)
symbols = analysis.t.symbol_table.get_sym_table()
steps = df[df.name.isin([i for i, s in enumerate(symbols) if s.startswith("ProfilerStep#")])]
out = []
for i in range(len(steps)):
    try:
        kw = dict(data_load_events=["^data$", r"^enumerate\(DataLoader\)"]) if len(sys.argv) > 3 else {}
        graph, ok = analysis.critical_path_analysis(rank=rank, annotation="ProfilerStep", instance_id=i, **kw)
        edges = graph.get_critical_path_breakdown()
        bounds = edges.groupby("bound_by").duration.sum().to_dict()
        top = edges[edges.duration > 0].groupby("s_name").duration.sum().sort_values(ascending=False).head(5)
        out.append(dict(instance=i, ok=bool(ok), length=float(edges.duration.sum()),
                        bounds={k: float(v) for k, v in bounds.items()},
                        summary_pct={k: round(float(v), 2) for k, v in graph.summary().to_dict().items()},
                        top={k: float(v) for k, v in top.to_dict().items()}))
    except Exception as e:  # one step's failure is reported, the others still run
        out.append(dict(instance=i, error=repr(e)[:300]))
json.dump(out, open(out_path, "w"), indent=1)
