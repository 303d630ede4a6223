"""Shared fixtures: the sample traces, one store cache for the session, and the `strobe`
program the wheel installed (the command line the DataFrames are compared with)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any, List

import pytest

import strobe

SAMPLES = Path(__file__).resolve().parents[2] / "sample-traces"


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("strobe-cache")


class Cli:
    def __init__(self, cache: Path) -> None:
        self.exe = strobe.binary_path()
        self.cache = cache

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        return subprocess.run(
            [self.exe, "--cache-dir", str(self.cache), *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            check=check,
        )

    def report(self, *files: Path, top: int = 20) -> Any:
        """`strobe report --json`; exit status 3 (an input cut short) still prints it."""
        p = self.run("report", *map(str, files), "--json", "--top", str(top), check=False)
        assert p.returncode in (0, 3), p.stderr
        return json.loads(p.stdout)

    def report_with(self, *args: Any) -> Any:
        """`strobe report --json ARGS…` (files and options as given)."""
        p = self.run("report", *map(str, args), "--json", check=False)
        assert p.returncode in (0, 3), p.stderr
        return json.loads(p.stdout)

    def export(self, file: Path, what: str) -> List[Any]:
        """`strobe export --what WHAT --format jsonl`, one dict per row."""
        out = self.run("export", str(file), "--what", what, "--format", "jsonl").stdout
        return [json.loads(line) for line in out.splitlines() if line.strip()]


@pytest.fixture(scope="session")
def cli(cache_dir: Path) -> Cli:
    return Cli(cache_dir)


@pytest.fixture(scope="session")
def gpt(cache_dir: Path) -> "strobe.Trace":
    return strobe.open(SAMPLES / "gpt_train.json.gz", cache_dir=cache_dir)
