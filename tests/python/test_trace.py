"""A trace's DataFrames against `strobe report --json` and `strobe export` on the same file."""

from __future__ import annotations

import pandas as pd
import pytest
from conftest import SAMPLES
from frames import rows, same_rows

import strobe

TRACES = [
    "gpt_train.json.gz",
    "ddp_rank0.json.gz",
    "hta_nccl_data.json.gz",
    "kineto_tbplugin_resnet50.json.gz",
    "nsys_fuser_h200.sqlite",
    "jax_rocm_conv_8gpu.xplane.pb",
    "catapult_flow.json",
]


@pytest.mark.parametrize("name", TRACES)
def test_report_is_the_cli_report(name, cli, cache_dir):
    t = strobe.open(SAMPLES / name, cache_dir=cache_dir)
    assert isinstance(t, strobe.Trace)
    assert t.report() == cli.report(SAMPLES / name)
    assert t.report(top=3) == cli.report(SAMPLES / name, top=3)


@pytest.mark.parametrize("name", TRACES)
def test_tables_are_the_report_tables(name, cli, cache_dir):
    t = strobe.open(SAMPLES / name, cache_dir=cache_dir)
    r = cli.report(SAMPLES / name, top=1_000_000)
    same_rows(t.kernels(), r["top_kernels"])
    same_rows(t.steps(), r["steps"])
    same_rows(t.idle_breakdown(), r["idle_breakdown"])
    same_rows(t.ops(), r["efficiency"]["ops"])
    same_rows(t.kernel_efficiency(), r["efficiency"]["kernels"])
    same_rows(t.op_table(), r["ops"])
    same_rows(t.step_breakdown(), r.get("step_breakdown", []), nested=("parts", "details"))
    gaps = t.idle_gaps()
    same_rows(gaps.head(len(r["largest_gaps"])), r["largest_gaps"])
    # every gap, as `strobe export --what gaps` lists them
    exported = cli.export(SAMPLES / name, "gaps")
    assert len(gaps) == len(exported)
    # (the export writes the cause as its label: "host wait" for host_wait)
    assert rows(gaps[["device", "start_ns", "end_ns", "len_ns", "cause", "held_by_name"]]) == [
        {**{k: e[k] for k in ("device", "start_ns", "end_ns", "len_ns")},
         "cause": e["cause"].replace(" ", "_"), "held_by_name": e["held_by"]}
        for e in exported
    ]


def test_kernel_table_columns_and_types(gpt):
    k = gpt.kernels()
    assert list(k.columns) == ["name", "count", "total_ns", "mean_ns", "min_ns", "max_ns", "pct_kernel_time"]
    for c in ("count", "total_ns", "mean_ns", "min_ns", "max_ns"):
        assert k[c].dtype == "int64"
    assert k["total_ns"].is_monotonic_decreasing
    assert abs(k["pct_kernel_time"].sum() - 100.0) < 1e-6


SPAN_KEYS = ("pid", "tid", "process_name", "thread_name", "lane", "device", "stream", "depth", "ts_ns", "dur_ns",
             "name", "category")


def _key(r):
    return tuple(str(r[k]) for k in SPAN_KEYS)


@pytest.mark.parametrize("name", ["gpt_train.json.gz", "catapult_main_thread_has_unclosed_slices.json", "nsys_fuser_h200.sqlite"])
def test_spans_are_the_exported_spans(name, cli, cache_dir):
    t = strobe.open(SAMPLES / name, cache_dir=cache_dir)
    df = t.spans()
    got = sorted(_key(r) for r in rows(df.astype({"name": "object", "category": "object"})))
    want = sorted(_key(r) for r in cli.export(SAMPLES / name, "spans"))
    assert got == want


def test_spans_of_a_window_and_of_lanes(gpt):
    every = gpt.spans()
    a = int(every["ts_ns"].quantile(0.4))
    b = int(every["ts_ns"].quantile(0.5))
    end = every["ts_ns"] + every["dur_ns"].clip(lower=0)
    overlapping = every[(every["ts_ns"] < b) & (end > a) | ((every["dur_ns"] == 0) & (every["ts_ns"] == a))]
    w = gpt.spans(window=(a, b))
    key = ["lane_id", "ts_ns", "depth", "dur_ns"]
    assert 0 < len(w) < len(every)
    pd.testing.assert_frame_equal(
        w[key].sort_values(key).reset_index(drop=True),
        overlapping[key].sort_values(key).reset_index(drop=True),
    )
    lanes = gpt.lanes()
    gpu = lanes[lanes["device"].notna()].iloc[0]
    one = gpt.spans(lanes=gpu["lane"])
    assert set(one["lane"]) == {gpu["lane"]}
    assert len(one) == int(lanes.loc[lanes["lane"] == gpu["lane"], "spans"].sum())
    assert one["ts_ns"].is_monotonic_increasing or one["lane_id"].nunique() > 1
    with pytest.raises(ValueError, match="no lane named"):
        gpt.spans(lanes="no such lane")


def test_collectives_are_the_nccl_kernels(cli, cache_dir):
    f = SAMPLES / "ddp_rank0.json.gz"
    c = strobe.open(f, cache_dir=cache_dir).collectives()
    spans = cli.export(f, "spans")
    nccl = sorted(
        (s["ts_ns"], s["dur_ns"], s["name"])
        for s in spans
        if s["category"] == "kernel" and s["name"].lower().startswith("nccl")
    )
    assert len(nccl) > 0
    assert sorted(zip(c["start_ns"], c["dur_ns"], c["name"])) == nccl
    assert (c["end_ns"] - c["start_ns"] == c["dur_ns"]).all()
    assert (c["launch_ns"] <= c["start_ns"]).all()
