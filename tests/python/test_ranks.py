"""Several ranks against `strobe report --json A B …`."""

from __future__ import annotations

import pytest
from conftest import SAMPLES
from frames import rows, same_rows

import strobe

SETS = {
    "ddp": ["ddp_rank0.json.gz", "ddp_rank1.json.gz"],
    "hta_sampled": ["hta_sampled_rank0.json.gz", "hta_sampled_rank1.json.gz"],
}


@pytest.fixture(scope="module", params=sorted(SETS))
def ranks_and_cli(request, cli, cache_dir):
    files = [SAMPLES / f for f in SETS[request.param]]
    return strobe.open(files, cache_dir=cache_dir), cli.report(*files), files


def test_report_is_the_cli_report(ranks_and_cli, cli):
    r, expected, files = ranks_and_cli
    assert isinstance(r, strobe.Ranks)
    assert r.report() == expected
    assert r.report(top=5, align="step") == cli.report_with(*files, "--top", "5", "--align", "step")


def test_rank_step_table(ranks_and_cli):
    r, expected, _ = ranks_and_cli
    want = [{"step": s["name"], **p} for s in expected["steps"] for p in s["per_rank"]]
    same_rows(r.steps(), want)
    grid = r.step_table("dur_ns")
    assert list(grid.columns) == [s["name"] for s in expected["steps"]]
    for s in expected["steps"]:
        for p in s["per_rank"]:
            assert grid.loc[p["rank"], s["name"]] == p["dur_ns"]


def test_stragglers_collectives_and_hta_tables(ranks_and_cli):
    r, expected, _ = ranks_and_cli
    same_rows(r.stragglers(), expected["stragglers"])
    same_rows(r.straggler_steps(), expected["straggler_steps"])
    same_rows(r.collectives(), expected["collectives"])
    same_rows(r.temporal_breakdown(), expected["temporal_breakdown"])
    kb = [
        {"rank": k["rank"], **{a: b for a, b in t.items() if a != "top"}}
        for k in expected["kernel_breakdown"]
        for t in k["types"]
    ]
    same_rows(r.kernel_breakdown(), kb)


def test_a_folder_and_its_files_give_one_report(tmp_path, cli, cache_dir):
    for f in SETS["ddp"]:
        (tmp_path / f).symlink_to(SAMPLES / f)
    by_dir = strobe.open(tmp_path, cache_dir=cache_dir)
    assert isinstance(by_dir, strobe.Ranks)
    assert [n for n, _ in by_dir.ranks] == [str(tmp_path / f) for f in SETS["ddp"]]
    assert [t.kernels()["count"].sum() for t in by_dir.traces()] == [
        sum(k["count"] for k in cli.report(tmp_path / f, top=10**6)["top_kernels"]) for f in SETS["ddp"]
    ]
    assert rows(by_dir.steps()) == rows(strobe.open([tmp_path / f for f in SETS["ddp"]], cache_dir=cache_dir).steps())


def test_an_nsys_export_of_two_processes_is_two_ranks(cli, cache_dir):
    f = SAMPLES / "nsys_ddp_2proc.sqlite"
    r = strobe.open(f, cache_dir=cache_dir)
    assert isinstance(r, strobe.Ranks)
    assert len(r.ranks) == 2
    assert r.report() == cli.report(f)
