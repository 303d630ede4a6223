"""The ``strobe`` program the wheel installs beside Python (the window and the CLI), found
as ruff and uv find theirs: in the scripts folder of the environment the package is
installed in, then on ``PATH``."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Iterable, List, Optional

_EXE = "strobe" + (".exe" if sys.platform == "win32" else "")


def _candidates() -> Iterable[Path]:
    override = os.environ.get("STROBE_BINARY")
    if override:
        yield Path(override)
    yield Path(sysconfig.get_path("scripts")) / _EXE
    # a `pip install --user`
    if sys.version_info >= (3, 10):
        user_scheme = sysconfig.get_preferred_scheme("user")
    elif os.name == "nt":
        user_scheme = "nt_user"
    elif sys.platform == "darwin" and getattr(sys, "_framework", None):
        user_scheme = "osx_framework_user"
    else:
        user_scheme = "posix_user"
    yield Path(sysconfig.get_path("scripts", scheme=user_scheme)) / _EXE
    # the package's own prefix (a `pip install --target` or `--prefix` elsewhere)
    pkg = Path(__file__).resolve().parent
    for up in pkg.parents:
        yield up / "bin" / _EXE
        yield up / "Scripts" / _EXE


def binary_path() -> str:
    """The path of the ``strobe`` program installed with this package.

    ``STROBE_BINARY`` overrides it. Raises ``FileNotFoundError`` when none is found.
    """
    for c in _candidates():
        if c.is_file() and os.access(c, os.X_OK):
            return str(c)
    found = shutil.which(_EXE)
    if found:
        return found
    raise FileNotFoundError(
        "the strobe program was not found beside this Python (it is installed with the "
        "strobe-viewer wheel); set STROBE_BINARY to its path"
    )


def show(files: List[str], cache_dir: Optional[str] = None) -> "subprocess.Popen[bytes]":
    """Starts the Strobe window on ``files`` in a process of its own and returns at once."""
    args = [binary_path()]
    if cache_dir is not None:
        args += ["--cache-dir", str(cache_dir)]
    args += files
    return subprocess.Popen(
        args,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        # the window outlives a notebook cell, and a Ctrl-C in the notebook does not close it
        start_new_session=True,
    )
