#!/usr/bin/env python3
"""Runs every named query of figures.sql on one nsys SQLite export and prints the results
as JSON: {name: [[col, ...], ...] or null when a table the query reads is absent}.
Stdlib only; opens the file read-only and immutable (nothing is written beside it).

Before the queries run, TEMP views (which shadow same-named tables) give every export the
layout figures.sql is written for, following the nsys export schema's history:
  - a table missing under its name is read from its highest `NAME_V<n>` variant;
  - `StringIds` from `StringTable(_id_, value)` (the oldest layout);
  - `TARGET_INFO_GPU.id` from `deviceId` (older) or `cuDevice`, and mapped to the CUDA device
    id through `TARGET_INFO_CUDA_DEVICE` (gpuId -> cudaId) where every process agrees;
  - `globalPid` of the GPU tables from `globalTid` (same pid bits);
  - `NVTX_EVENTS.text` / `textId` NULL where the export has only the other;
  - times: an integer, a finite real (truncated) or integer text; anything else is no time.
    Rows without a start time, and rows whose end is before their start, are left out of
    every figure (the importer skips them); they are counted in `times_<table>`:
    [rows, no start, end before start, no end]."""
import json
import math
import re
import sqlite3
import sys
import urllib.parse
from pathlib import Path


def queries(sql_text):
    out = {}
    name = None
    buf = []
    for line in sql_text.splitlines():
        m = re.match(r"--\s*name:\s*(\w+)", line)
        if m:
            if name:
                out[name] = "\n".join(buf)
            name, buf = m.group(1), []
        elif name and not line.lstrip().startswith("--"):
            buf.append(line)
    if name:
        out[name] = "\n".join(buf)
    return out


TIMED = ["CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET",
         "CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "NVTX_EVENTS", "OSRT_API",
         "CUDA_GPU_MEMORY_USAGE_EVENTS"]
OTHER = ["StringIds", "ThreadNames", "PROCESSES", "TARGET_INFO_GPU", "TARGET_INFO_CUDA_DEVICE",
         "TARGET_INFO_SESSION_START_TIME", "META_DATA_EXPORT", "EXPORT_META_DATA"]
GPU_TABLES = TIMED[:3] + [TIMED[4]]


def time_value(v):
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        return int(v) if math.isfinite(v) else None
    if isinstance(v, str):
        t = v.strip()
        return int(t) if re.fullmatch(r"[+-]?[0-9]+", t) else None
    return None


def q(name):
    return '"' + name.replace('"', '""') + '"'


def found(names, name):
    """`name` as the export has it, or its highest _V<n> variant, or None."""
    lower = {n.lower(): n for n in names}
    if name.lower() in lower:
        return lower[name.lower()]
    best = None
    for n in names:
        m = re.fullmatch(re.escape(name) + r"_[Vv]([0-9]+)", n, flags=re.I)
        if m and (best is None or int(m.group(1)) > best[0]):
            best = (int(m.group(1)), n)
    return best[1] if best else None


def normalise(con):
    """Creates the TEMP views; returns {table: [rows, no start, end before start, no end]}."""
    names = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type IN ('table','view')")]
    con.create_function("t", 1, time_value, deterministic=True)
    cols = lambda t: [r[1] for r in con.execute(f"PRAGMA main.table_info({q(t)})")]
    times = {}
    for canon in TIMED + OTHER:
        real = found(names, canon)
        if canon == "StringIds" and real is None:
            real = found(names, "StringTable")
        if real is None:
            continue
        c = cols(real)
        sel = [q(x) for x in c]
        where = ""
        if canon in TIMED and "start" in c:
            sel = ["t(start) AS start" if x == "start" else 't("end") AS "end"' if x == "end" else q(x) for x in c]
            has_end = "end" in c
            where = "WHERE t(start) IS NOT NULL" + (' AND (t("end") IS NULL OR t("end") >= t(start))' if has_end else "")
            end_ok = 't("end") IS NOT NULL' if has_end else "1"
            times[canon] = list(con.execute(
                f"SELECT count(*), coalesce(sum(t(start) IS NULL), 0), "
                f"coalesce(sum(t(start) IS NOT NULL AND {end_ok} AND t(\"end\") < t(start)), 0), "
                f"coalesce(sum(t(start) IS NOT NULL AND NOT ({end_ok})), 0) FROM main.{q(real)}").fetchone())
        if canon in GPU_TABLES and "globalPid" not in c and "globalTid" in c:
            sel.append("globalTid AS globalPid")
        if canon == "NVTX_EVENTS":
            sel += [f"NULL AS {x}" for x in ["text", "textId"] if x not in c]
        if canon == "StringIds" and "id" not in c and "_id_" in c:
            sel.append("_id_ AS id")
        if canon == "TARGET_INFO_GPU":
            gid = next((x for x in ["id", "deviceId", "cuDevice"] if x in c), None)
            if gid is None:
                continue
            mapped = q(gid)
            if gid == "id" and found(names, "TARGET_INFO_CUDA_DEVICE"):
                cd = q(found(names, "TARGET_INFO_CUDA_DEVICE"))
                mapped = (f"coalesce((SELECT min(cudaId) FROM main.{cd} d WHERE d.gpuId = g.id "
                          f"GROUP BY d.gpuId HAVING count(DISTINCT d.cudaId) = 1), g.id)")
            sel = [f"{mapped} AS id"] + [q(x) for x in c if x != "id"]
            con.execute(f"CREATE TEMP VIEW {q(canon)} AS SELECT {', '.join(sel)} FROM main.{q(real)} g")
            continue
        if real == canon and not where and len(sel) == len(c):
            continue
        con.execute(f"CREATE TEMP VIEW {q(canon)} AS SELECT {', '.join(sel)} FROM main.{q(real)} {where}")
    return times


def main(path):
    sql = (Path(__file__).parent / "figures.sql").read_text()
    uri = "file:" + urllib.parse.quote(str(Path(path).resolve())) + "?mode=ro&immutable=1"
    con = sqlite3.connect(uri, uri=True)
    con.text_factory = lambda b: b.decode("utf-8", "replace")
    result = {"times_" + t: [v] for t, v in normalise(con).items()}
    for name, q in queries(sql).items():
        try:
            rows = con.execute(q).fetchall()
            result[name] = [list(r) for r in rows]
        except sqlite3.OperationalError as e:
            if "no such table" in str(e):
                result[name] = None
            else:
                raise
    # One figure a line: readable diffs when a figure changes.
    lines = [json.dumps(k) + ": " + json.dumps(result[k], ensure_ascii=False) for k in sorted(result)]
    print("{\n" + ",\n".join(lines) + "\n}")


if __name__ == "__main__":
    main(sys.argv[1])
