"""The build backend of ``pip install .``: maturin, after building the ``strobe`` program.

maturin builds the Python extension (crates/strobe-py); the wheel also carries the
``strobe`` program (the window and the command line), which it installs into the
environment's scripts folder as ruff and uv install theirs. maturin does not build a
crate's binaries beside its extension, so this backend builds the ``strobe`` binary with
the same cargo profile first and puts it in maturin's wheel-data folder
(python/strobe_viewer.data/scripts, not in git), then hands over to maturin.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Mapping, Optional

import maturin
from maturin import (  # noqa: F401 - the PEP 517 hooks maturin answers itself
    build_sdist,
    get_requires_for_build_sdist,
    get_requires_for_build_wheel,
)

get_requires_for_build_editable = get_requires_for_build_wheel

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = ROOT / "python" / "strobe_viewer.data" / "scripts"
EXE = "strobe" + (".exe" if sys.platform == "win32" else "")


def _profile(config_settings: Optional[Mapping[str, Any]]) -> str:
    """The cargo profile maturin will build with: `--profile P` in its arguments
    (MATURIN_PEP517_ARGS or the `maturin.build-args` config setting), else release."""
    args = maturin.get_maturin_pep517_args(config_settings)
    for i, a in enumerate(args):
        if a == "--profile" and i + 1 < len(args):
            return args[i + 1]
        if a.startswith("--profile="):
            return a.split("=", 1)[1]
    return "release"


def _target_dir(cargo: str) -> Path:
    meta = subprocess.run(
        [cargo, "metadata", "--format-version", "1", "--no-deps"],
        cwd=ROOT,
        check=True,
        stdout=subprocess.PIPE,
    )
    return Path(json.loads(meta.stdout)["target_directory"])


def _build_program(config_settings: Optional[Mapping[str, Any]]) -> None:
    cargo = os.environ.get("CARGO", "cargo")
    profile = _profile(config_settings)
    cmd = [cargo, "build", "-p", "strobe", "--bin", "strobe", "--profile", profile]
    print("strobe-viewer: building the strobe program:", " ".join(cmd), file=sys.stderr, flush=True)
    # cargo's progress goes to stderr, which pip shows with -v
    subprocess.run(cmd, cwd=ROOT, check=True, stdout=sys.stderr)
    built = _target_dir(cargo) / ("debug" if profile == "dev" else profile) / EXE
    SCRIPTS.mkdir(parents=True, exist_ok=True)
    shutil.copy2(built, SCRIPTS / EXE)
    # the release profile keeps line tables for backtraces: a fifth of the wheel's program
    strip = shutil.which("strip")
    if strip and sys.platform.startswith("linux"):
        subprocess.run([strip, "--strip-debug", str(SCRIPTS / EXE)], check=False)


def prepare_metadata_for_build_wheel(
    metadata_directory: str, config_settings: Optional[Mapping[str, Any]] = None
) -> str:
    # maturin checks that its data folder exists before the program is built into it
    SCRIPTS.mkdir(parents=True, exist_ok=True)
    return maturin.prepare_metadata_for_build_wheel(metadata_directory, config_settings)


def build_wheel(
    wheel_directory: str,
    config_settings: Optional[Mapping[str, Any]] = None,
    metadata_directory: Optional[str] = None,
) -> str:
    _build_program(config_settings)
    return maturin.build_wheel(wheel_directory, config_settings, metadata_directory)


def build_editable(
    wheel_directory: str,
    config_settings: Optional[Mapping[str, Any]] = None,
    metadata_directory: Optional[str] = None,
) -> str:
    _build_program(config_settings)
    return maturin.build_editable(wheel_directory, config_settings, metadata_directory)
