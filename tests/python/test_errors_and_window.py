"""Bad input raises StrobeError with the command line's message; `show()` starts the
window in a process of its own; the `strobe` program and `python -m strobe` run."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest
from conftest import SAMPLES

import strobe


def _cli_message(cli, path):
    p = cli.run("report", str(path), "--json", check=False)
    assert p.returncode == 2
    line = p.stderr.strip().splitlines()[-1]
    assert line.startswith("strobe: ")
    return line[len("strobe: "):]


def test_a_broken_trace_raises_the_cli_message(tmp_path, cli, cache_dir):
    bad = tmp_path / "broken.json"
    bad.write_text('{"traceEvents": [{"ph": "X", "name": "a", "ts": 1, "dur": 2, "pid": 1, "tid": 1}, {"ph": "X", "ts": @@ }]}')
    with pytest.raises(strobe.StrobeError) as e:
        strobe.open(bad, cache_dir=cache_dir)
    msg = _cli_message(cli, bad)
    assert str(e.value) == msg
    assert str(bad) in msg and "at byte 82" in msg


def test_a_missing_file_and_an_unknown_one(tmp_path, cli, cache_dir):
    missing = tmp_path / "nope.json"
    with pytest.raises(strobe.StrobeError) as e:
        strobe.open(missing, cache_dir=cache_dir)
    assert str(e.value) == _cli_message(cli, missing)
    junk = tmp_path / "junk.bin"
    junk.write_bytes(bytes(range(256)) * 4)
    with pytest.raises(strobe.StrobeError) as e:
        strobe.open(junk, cache_dir=cache_dir)
    assert str(e.value) == _cli_message(cli, junk)


def test_a_bad_step_regex(cache_dir):
    with pytest.raises(strobe.StrobeError):
        strobe.open(SAMPLES / "gpt_train.json.gz", cache_dir=cache_dir, steps="(")


def test_steps_option_is_the_cli_option(cli, cache_dir):
    f = SAMPLES / "gpt_train.json.gz"
    t = strobe.open(f, cache_dir=cache_dir, steps=r"ProfilerStep#[23]")
    assert t.report() == cli.report_with(f, "--steps", r"ProfilerStep#[23]")
    assert list(t.steps()["name"]) == ["ProfilerStep#2", "ProfilerStep#3"]


def test_show_starts_the_program_on_the_same_files(tmp_path, monkeypatch, cache_dir):
    log = tmp_path / "argv.txt"
    fake = tmp_path / "strobe"
    fake.write_text(f"#!{sys.executable}\nimport sys\nopen({str(log)!r}, 'w').write('\\n'.join(sys.argv[1:]))\n")
    fake.chmod(0o755)
    monkeypatch.setenv("STROBE_BINARY", str(fake))
    files = [SAMPLES / "ddp_rank0.json.gz", SAMPLES / "ddp_rank1.json.gz"]
    p = strobe.open(files, cache_dir=cache_dir).show()
    assert p.pid != os.getpid()
    assert p.wait(timeout=30) == 0
    assert log.read_text().splitlines() == ["--cache-dir", str(cache_dir), *map(str, files)]


def test_the_program_is_installed_and_runs():
    exe = strobe.binary_path()
    out = subprocess.run([exe, "--version"], stdout=subprocess.PIPE, text=True, check=True).stdout
    assert out.startswith("strobe ")
    out = subprocess.run([sys.executable, "-m", "strobe", "--version"], stdout=subprocess.PIPE, text=True, check=True)
    assert out.stdout.startswith("strobe ")
