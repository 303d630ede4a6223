"""Memory snapshots and Nsight Compute exports against `strobe report --json`."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import SAMPLES
from frames import same_rows

import strobe

SNAPSHOTS = ["mem_train.pickle", "mem_frag_oom.pickle", "mem_pools_synthetic.pickle"]


@pytest.mark.parametrize("name", SNAPSHOTS)
def test_snapshot_report_and_segments(name, cli, cache_dir):
    m = strobe.open(SAMPLES / name, cache_dir=cache_dir)
    assert isinstance(m, strobe.MemorySnapshot)
    expected = cli.report(SAMPLES / name)
    assert m.report() == expected
    seg = m.segments()
    for d in expected["devices"]:
        mine = seg[seg["device"] == d["device"]]
        assert len(mine) == d["segments"]
        assert int(mine["blocks"].sum()) == d["blocks"]
        assert int(mine["total_size"].sum()) == d["reserved_bytes"]
        assert int(mine["allocated_bytes"].sum()) == d["allocated_bytes"]
        assert int(mine["active_awaiting_free_bytes"].sum()) == d["active_awaiting_free_bytes"]
        assert int(mine["inactive_bytes"].sum()) == d["inactive_bytes"]


def _peak_of(allocs):
    """Σ sizes alive after each trace entry (alive from its alloc entry up to its free
    entry; made before the trace: from the start; never freed: to the end), the largest."""
    n = int(max(allocs["alloc_entry"].max(skipna=True) or 0, allocs["free_entry"].max(skipna=True) or 0)) + 2
    delta = np.zeros(n + 1, dtype=np.int64)
    start = allocs["alloc_entry"].fillna(-1).astype(np.int64).to_numpy() + 1
    end = allocs["free_entry"].fillna(n - 1).astype(np.int64).to_numpy() + 1
    np.add.at(delta, start, allocs["size"].to_numpy())
    np.add.at(delta, end, -allocs["size"].to_numpy())
    return int(np.cumsum(delta).max())


def test_allocations_rise_to_the_reported_peak(cli, cache_dir):
    f = SAMPLES / "mem_train.pickle"
    m = strobe.open(f, cache_dir=cache_dir)
    a = m.allocations()
    assert list(a.columns[:4]) == ["device", "addr", "size", "stream"]
    for d in cli.report(f)["devices"]:
        mine = a[a["device"] == d["device"]]
        assert _peak_of(mine) == d["peak_allocated_bytes"]
        done = mine.dropna(subset=["alloc_ns", "free_ns"])
        assert (done["free_ns"] >= done["alloc_ns"]).all()


@pytest.mark.parametrize("name", ["mem_adamw_b8.pickle", "mem_train.pickle"])
def test_peak_breakdown_by_category_and_source(name, cli, cache_dir):
    f = SAMPLES / name
    m = strobe.open(f, cache_dir=cache_dir)
    cats = m.peak_breakdown()
    srcs = m.peak_breakdown(by="source")
    assert list(cats.columns) == ["device", "category", "bytes", "count", "rules"]
    assert list(srcs.columns[:1]) == ["device"]
    allocs = m.allocations()
    devices = [d for d in cli.report(f)["devices"] if d.get("peak_breakdown")]
    assert devices, "the sample has no breakdown to compare with"
    for d in devices:
        b = d["peak_breakdown"]
        mine = cats[cats["device"] == d["device"]].drop(columns="device")
        same_rows(mine, b["categories"])
        same_rows(srcs[srcs["device"] == d["device"]].drop(columns="device"), b["by_source"])
        # both tables share out the bytes alive at the peak, which the allocations
        # table's own replay reaches (sizes summed here, not by Strobe)
        peak = _peak_of(allocs[allocs["device"] == d["device"]])
        assert int(mine["bytes"].sum()) == peak
        assert int(srcs[srcs["device"] == d["device"]]["bytes"].sum()) == peak
    with pytest.raises(ValueError, match="category"):
        m.peak_breakdown(by="stack")


@pytest.mark.parametrize("name", ["ncu_raw.csv", "ncu_esmm.ncu-rep", "ncu_details.csv"])
def test_ncu_kernels(name, cli, cache_dir):
    n = strobe.open(SAMPLES / name, cache_dir=cache_dir)
    assert isinstance(n, strobe.NcuReport)
    expected = cli.report(SAMPLES / name)
    assert n.report() == expected
    same_rows(n.kernels(), expected["kernels"])
    same_rows(n.by_name(), expected["by_name"])


def test_memory_stats_and_flight_recorder_reports(cli, cache_dir):
    f = SAMPLES / "mem_oom.memory_stats.json"
    d = strobe.open(f, cache_dir=cache_dir)
    assert d.kind == "memory_stats"
    assert d.report() == cli.report(f)
    folder = next(p for p in sorted((SAMPLES / "flight_recorder").iterdir()) if p.is_dir())
    fr = strobe.open(folder, cache_dir=cache_dir)
    assert fr.kind == "flight_recorder"
    assert fr.report() == cli.report(folder)
