"""Strobe's idle-time and kernel breakdowns against HTA 0.5's own, on a one-stream trace
where the two definitions meet: HTA classifies the gaps between a stream's kernels, Strobe
those of the device's busy union (the same gaps on one stream); both sum kernel time by
kind. The trace's times are whole µs, HTA's unit, so the figures agree exactly.

HTA runs in whatever Python has it: this one, or `$STROBE_HTA_PYTHON` (CI installs it in a
venv of its own); without one the test is skipped, saying so."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import SAMPLES

import strobe

TRACE = "kineto_tbplugin_resnet50.json.gz"


def _hta_python():
    for py in (sys.executable, os.environ.get("STROBE_HTA_PYTHON")):
        if py and subprocess.run([py, "-c", "import hta"], capture_output=True).returncode == 0:
            return py
    return None


@pytest.fixture(scope="module")
def hta(tmp_path_factory):
    py = _hta_python()
    if py is None:
        pytest.skip("HTA not installed (pip install HolisticTraceAnalysis==0.5.0, or set STROBE_HTA_PYTHON)")
    d = tmp_path_factory.mktemp("hta")
    shutil.copy(SAMPLES / TRACE, d / TRACE)
    out = subprocess.run(
        [py, str(Path(__file__).with_name("hta_figures.py")), str(d)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=600,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout)


def test_idle_time_breakdown_is_htas(hta, cache_dir):
    t = strobe.open(SAMPLES / TRACE, cache_dir=cache_dir)
    assert len(t.report()["streams"]) == 1
    mine = t.idle_breakdown().iloc[0]
    theirs = {r["category"]: r["idle_us"] for r in hta["idle"]}
    assert set(theirs) == {"host_wait", "kernel_wait", "other"}
    assert mine["host_wait_ns"] == theirs["host_wait"] * 1000
    assert mine["kernel_wait_ns"] == theirs["kernel_wait"] * 1000
    assert mine["other_ns"] == theirs["other"] * 1000
    assert mine["idle_ns"] == sum(theirs.values()) * 1000


def test_kernel_breakdown_is_htas(hta, cache_dir):
    t = strobe.open(SAMPLES / TRACE, cache_dir=cache_dir)
    gpu = t.report()["gpus"][0]
    assert gpu["compute_ns"] == hta["kernel_types"]["COMPUTATION"] * 1000
    assert gpu["memory_ns"] == hta["kernel_types"]["MEMORY"] * 1000
    assert gpu["comm_ns"] == hta["kernel_types"].get("COMMUNICATION", 0) * 1000
    # per kernel name: the kernel table's totals are HTA's sums
    kernels = t.kernels().set_index("name")["total_ns"]
    theirs = {k["name"]: k["sum_us"] for k in hta["kernels"] if k["kernel_type"] == "COMPUTATION"}
    assert len(theirs) == len(kernels)
    for name, us in theirs.items():
        assert kernels[name] == us * 1000, name
