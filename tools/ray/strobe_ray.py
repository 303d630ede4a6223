#!/usr/bin/env python3
"""Map `strobe summarize` over a list of traces as Ray tasks, one per rank (docs/cluster.md).

    python tools/ray/strobe_ray.py --address auto --out /shared/job42/summaries \
        --strobe /opt/strobe/bin/strobe --placement nodes.csv traces/*.json.gz
    strobe report /shared/job42/summaries

Each task runs `strobe summarize TRACE -o OUT` on a worker; a task that fails (non-zero exit,
a lost worker) is retried `--retries` times by Ray. `--placement FILE` (CSV `trace,node_id`)
pins a trace's task to the Ray node that holds the file (soft: another node may take it if
that one is gone). The summaries land in one folder, which every worker must see (a shared
file system); `strobe report OUT` merges them.

The planning (`plan`) and the run loop (`run`) take any executor: `RayExecutor` on a cluster,
`LocalExecutor` (sequential subprocesses) for a run without Ray; tests use a fake.
"""

import argparse
import csv
import os
import subprocess
import sys


def plan(traces, out_dir, strobe="strobe", steps=None, placement=None):
    """One task per trace: (trace, argv, node_id or None)."""
    placement = placement or {}
    tasks = []
    for t in traces:
        argv = [strobe, "summarize", t, "-o", out_dir]
        if steps:
            argv += ["--steps", steps]
        tasks.append((t, argv, placement.get(t)))
    return tasks


def read_placement(path):
    """`trace,node_id` rows (a header row `trace,node_id` is skipped)."""
    out = {}
    with open(path, newline="") as f:
        for row in csv.reader(f):
            if len(row) >= 2 and row[0] != "trace":
                out[row[0]] = row[1]
    return out


def run_argv(argv):
    """Runs one summarize; raises on failure (so that Ray retries the task)."""
    p = subprocess.run(argv, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited {p.returncode}: {p.stderr.strip()}")
    return p.stderr.strip()


class LocalExecutor:
    """Runs the tasks one after another on this machine."""

    def submit(self, trace, argv, node_id):
        try:
            return ("ok", run_argv(argv))
        except Exception as e:  # noqa: BLE001 - reported per trace
            return ("failed", str(e))

    def gather(self, handles):
        return handles


class RayExecutor:
    """One Ray task per trace, retried by Ray, pinned to `node_id` where given."""

    def __init__(self, address=None, retries=3):
        import ray

        self.ray = ray
        if not ray.is_initialized():
            ray.init(address=address, log_to_driver=False)
        self.task = ray.remote(max_retries=retries, retry_exceptions=True)(run_argv)

    def submit(self, trace, argv, node_id):
        opts = {}
        if node_id:
            from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

            opts["scheduling_strategy"] = NodeAffinitySchedulingStrategy(node_id=node_id, soft=True)
        return self.task.options(**opts).remote(argv)

    def gather(self, handles):
        out = []
        for h in handles:
            try:
                out.append(("ok", self.ray.get(h)))
            except Exception as e:  # noqa: BLE001 - a task out of retries
                out.append(("failed", str(e)))
        return out


def run(tasks, executor):
    """Submits every task, then waits for all; returns [(trace, status, message)]."""
    handles = [executor.submit(t, argv, node) for t, argv, node in tasks]
    return [(t, s, m) for (t, _, _), (s, m) in zip(tasks, executor.gather(handles))]


def main(args=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("traces", nargs="+", help="trace files, one per rank")
    ap.add_argument("--out", required=True, help="summary folder (shared by every worker)")
    ap.add_argument("--strobe", default="strobe", help="the strobe binary on the workers")
    ap.add_argument("--steps", help="passed to strobe summarize --steps")
    ap.add_argument("--address", help="Ray cluster address (default: RAY_ADDRESS, else a local Ray)")
    ap.add_argument("--retries", type=int, default=3, help="retries of a failed task")
    ap.add_argument("--placement", help="CSV trace,node_id: run each trace's task on the node holding it")
    ap.add_argument("--local", action="store_true", help="run without Ray, one trace after another")
    a = ap.parse_args(args)
    traces = [os.path.abspath(t) for t in a.traces]
    placement = {os.path.abspath(k): v for k, v in read_placement(a.placement).items()} if a.placement else {}
    os.makedirs(a.out, exist_ok=True)
    tasks = plan(traces, os.path.abspath(a.out), a.strobe, a.steps, placement)
    ex = LocalExecutor() if a.local else RayExecutor(a.address, a.retries)
    results = run(tasks, ex)
    failed = [r for r in results if r[1] != "ok"]
    for t, _, m in failed:
        print(f"FAILED {t}: {m}", file=sys.stderr)
    print(f"{len(results) - len(failed)} of {len(results)} ranks summarized in {a.out}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
