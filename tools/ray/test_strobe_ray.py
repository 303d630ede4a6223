#!/usr/bin/env python3
"""Tests of the cluster drivers without a cluster: the Ray driver's planning, retries and
failure reporting through a fake executor, and the Slurm scripts' command lines by dry run
(DRY_RUN=1 makes them print the command instead of running it).

    python3 tools/ray/test_strobe_ray.py
"""

import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import strobe_ray  # noqa: E402


class FakeExecutor:
    """Fails each trace's first `fail_first[trace]` attempts, as a lost worker would; retries
    like Ray's max_retries."""

    def __init__(self, fail_first, retries):
        self.fail_first = dict(fail_first)
        self.retries = retries
        self.attempts = {}
        self.placed = {}

    def submit(self, trace, argv, node_id):
        self.placed[trace] = node_id
        for _ in range(self.retries + 1):
            self.attempts[trace] = self.attempts.get(trace, 0) + 1
            if self.attempts[trace] > self.fail_first.get(trace, 0):
                return ("ok", " ".join(argv))
        return ("failed", f"{trace}: out of retries")

    def gather(self, handles):
        return handles


class RayDriver(unittest.TestCase):
    def test_plan_one_task_per_trace(self):
        tasks = strobe_ray.plan(["/d/r0.json", "/d/r1.json"], "/out", "/bin/strobe", "step_.*", {"/d/r1.json": "n1"})
        self.assertEqual(
            tasks,
            [
                ("/d/r0.json", ["/bin/strobe", "summarize", "/d/r0.json", "-o", "/out", "--steps", "step_.*"], None),
                ("/d/r1.json", ["/bin/strobe", "summarize", "/d/r1.json", "-o", "/out", "--steps", "step_.*"], "n1"),
            ],
        )

    def test_retries_and_failures(self):
        traces = [f"/d/rank{i}.json" for i in range(16)]
        ex = FakeExecutor({traces[3]: 2, traces[7]: 5}, retries=3)
        res = strobe_ray.run(strobe_ray.plan(traces, "/out"), ex)
        self.assertEqual([t for t, _, _ in res], traces)
        self.assertEqual([t for t, s, _ in res if s != "ok"], [traces[7]])
        self.assertEqual(ex.attempts[traces[3]], 3)
        self.assertEqual(ex.attempts[traces[7]], 4)
        self.assertEqual(ex.attempts[traces[0]], 1)

    def test_placement_file(self):
        with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
            f.write("trace,node_id\n/d/r0.json,abc\n")
        try:
            self.assertEqual(strobe_ray.read_placement(f.name), {"/d/r0.json": "abc"})
        finally:
            os.unlink(f.name)

    def test_local_executor_reports_a_failing_command(self):
        res = strobe_ray.run([("x", [sys.executable, "-c", "import sys; sys.exit(3)"], None)], strobe_ray.LocalExecutor())
        self.assertEqual(res[0][1], "failed")
        self.assertIn("exited 3", res[0][2])


class SlurmDryRun(unittest.TestCase):
    def run_script(self, script, args, task=None):
        env = dict(os.environ, DRY_RUN="1", STROBE="/opt/strobe")
        if task is not None:
            env["SLURM_ARRAY_TASK_ID"] = str(task)
        return subprocess.run(
            ["bash", os.path.join(ROOT, "tools", "slurm", script), *args], env=env, capture_output=True, text=True
        )

    def test_array_task_summarizes_its_line(self):
        with tempfile.TemporaryDirectory() as d:
            lst = os.path.join(d, "traces.txt")
            with open(lst, "w") as f:
                f.write("/t/rank0.json.gz\n/t/rank1.json.gz\n/t/rank2.json.gz\n")
            out = os.path.join(d, "sum")
            for i in range(3):
                p = self.run_script("strobe_summarize.sbatch", [lst, out], task=i)
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertEqual(p.stdout.strip(), f"/opt/strobe summarize /t/rank{i}.json.gz -o {out}")
            p = self.run_script("strobe_summarize.sbatch", [lst, out], task=3)
            self.assertEqual(p.returncode, 2)
            self.assertIn("no line 4", p.stderr)
            p = self.run_script("strobe_summarize.sbatch", [lst, out])
            self.assertNotEqual(p.returncode, 0)

    def test_merge(self):
        p = self.run_script("strobe_merge.sbatch", ["/s"])
        self.assertEqual(p.stdout.splitlines(), ["/opt/strobe report /s --json", "/opt/strobe report /s"])


if __name__ == "__main__":
    unittest.main()
