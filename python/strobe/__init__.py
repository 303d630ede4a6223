"""Strobe in Python: open GPU training profiles and get the figures of ``strobe report`` as
pandas DataFrames, computed by the same Rust code.

>>> import strobe
>>> t = strobe.open("trace.json.gz")
>>> t.kernels().head()
>>> t.show()  # the Strobe window on the same trace
"""

from ._binary import binary_path
from ._documents import Document, MemorySnapshot, NcuReport, Ranks, Trace, open
from ._strobe import StrobeError, __version__

__all__ = [
    "Document",
    "MemorySnapshot",
    "NcuReport",
    "Ranks",
    "StrobeError",
    "Trace",
    "__version__",
    "binary_path",
    "open",
]
