"""``python -m strobe ARGS`` runs the ``strobe`` program installed with the package."""

import os
import subprocess
import sys

from ._binary import binary_path


def main() -> int:
    exe = binary_path()
    if sys.platform == "win32":
        return subprocess.call([exe, *sys.argv[1:]])
    os.execv(exe, [exe, *sys.argv[1:]])
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())
