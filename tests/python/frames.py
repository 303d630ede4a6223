"""DataFrame rows back as plain JSON-like dicts, to compare with the command line's JSON."""

from __future__ import annotations

import math
from typing import Any, Dict, List

import pandas as pd


def plain(v: Any) -> Any:
    if v is None or v is pd.NA:
        return None
    if isinstance(v, float) and math.isnan(v):
        return None
    if hasattr(v, "item") and not isinstance(v, (list, dict, str)):
        return v.item()
    return v


def rows(df: pd.DataFrame) -> List[Dict[str, Any]]:
    cols = list(df.columns)
    return [{c: plain(v) for c, v in zip(cols, r)} for r in df.itertuples(index=False, name=None)]


def flatten(r: Dict[str, Any], nested: tuple) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for k, v in r.items():
        if k in nested and isinstance(v, dict):
            for k2, v2 in v.items():
                out[f"{k}.{k2}"] = v2
        else:
            out[k] = v
    return out


def same_rows(df: pd.DataFrame, expected: List[Dict[str, Any]], nested: tuple = ()) -> None:
    """Every row of `df` equals the JSON row at the same place, every key of the JSON a
    column (values exactly equal: both come from one serialisation)."""
    got = rows(df)
    want = [flatten(r, nested) for r in expected]
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        for k, v in w.items():
            assert k in g, f"row {i}: column {k!r} missing"
            assert g[k] == v, f"row {i}, {k}: {g[k]!r} != {v!r}"
