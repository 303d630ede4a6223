"""JSON rows from the Rust side into pandas DataFrames, keeping integers exact.

The analyses hand their tables over as the JSON text ``strobe report --json`` prints, so a
column is named as the JSON names it. Integer columns stay integers: ``int64``, or pandas'
nullable ``Int64`` where some rows have no value (a float column would round nanosecond
timestamps past 2**53).
"""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional, Sequence

import pandas as pd


def _column(values: List[Any]) -> Any:
    present = [v for v in values if v is not None]
    if present and all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        if len(present) == len(values):
            return pd.array(values, dtype="int64")
        return pd.array(values, dtype="Int64")
    return values


def _flatten(row: Dict[str, Any], nested: Sequence[str]) -> Dict[str, Any]:
    """``{"parts": {"a": 1}}`` → ``{"parts.a": 1}`` for the keys in ``nested`` (one level)."""
    out: Dict[str, Any] = {}
    for k, v in row.items():
        if k in nested and isinstance(v, dict):
            for k2, v2 in v.items():
                out[f"{k}.{k2}"] = v2
        else:
            out[k] = v
    return out


def records(rows: List[Dict[str, Any]], columns: Sequence[str] = (), nested: Sequence[str] = ()) -> pd.DataFrame:
    """A DataFrame of ``rows`` (dicts), columns in the order the JSON has them; ``columns``
    names them when there is no row. Keys in ``nested`` holding objects are spread into
    ``key.member`` columns."""
    if nested:
        rows = [_flatten(r, nested) for r in rows]
    names: Dict[str, None] = {}
    for r in rows:
        for k in r:
            names.setdefault(k, None)
    if not rows:
        return pd.DataFrame({c: pd.Series(dtype="object") for c in columns})
    data = {k: _column([r.get(k) for r in rows]) for k in names}
    return pd.DataFrame(data)


def from_json(text: str, columns: Sequence[str] = (), nested: Sequence[str] = ()) -> pd.DataFrame:
    """``records`` of a JSON array of objects."""
    return records(json.loads(text), columns, nested)


def maybe(rows: Optional[List[Dict[str, Any]]], columns: Sequence[str] = (), nested: Sequence[str] = ()) -> pd.DataFrame:
    """``records`` of a report's list that may be absent (``None``: no rows)."""
    return records(rows or [], columns, nested)
