#!/usr/bin/env python3
"""Derives small Nsight Systems SQLite fixtures with older, newer or damaged layouts from the
real exports in sample-traces/, by editing copies in SQL (stdlib sqlite3; the sources are
never written). Each fixture is trimmed (rows past a cut-off time deleted, tables the
importer never reads dropped) and VACUUMed to stay small.

  nsys_fx_v2_tables        gpt_single (3.20): KERNEL as CUPTI_ACTIVITY_KIND_KERNEL_V2 with its
                           columns in another order, RUNTIME as _V3 (beside an empty _V2),
                           NVTX_EVENTS_V2, no CUDA_GPU_MEMORY_USAGE_EVENTS.
  nsys_fx_old_gpu_info     pipit (2.9): TARGET_INFO_GPU with `deviceId` and no `id`, NVTX text
                           inline (no `textId` column), no TARGET_INFO_SESSION_START_TIME.
  nsys_fx_string_table     extrap (2.9): `StringTable(_id_, value)` for StringIds, no
                           TARGET_INFO_GPU / _SESSION_START_TIME, no EXPORT_META_DATA.
  nsys_fx_bad_times        gpt_single (3.20): no ENUM_* tables, no TARGET_INFO_CUDA_DEVICE; rows
                           with NULL / 'NaN' / infinite start or end, and rows ending before
                           they start, in KERNEL, MEMCPY, RUNTIME and NVTX_EVENTS.
  nsys_fx_newer_globaltid  fuser (3.17): the GPU tables carry `globalTid` instead of
                           `globalPid`; EXPORT_SCHEMA_VERSION set to 3.99.0 (synthetic: stands
                           for a schema newer than any tested).

Run from anywhere:  python3 tests/tools/make_nsys_fixtures.py
then regenerate the expected figures:  bash tests/expected/nsys/regen.sh
"""
import os
import shutil
import sqlite3
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample-traces"

# Tables the importer reads (canonical names); every other table is dropped to keep fixtures small.
READ = {
    "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET",
    "CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "NVTX_EVENTS", "OSRT_API",
    "CUDA_GPU_MEMORY_USAGE_EVENTS", "StringIds", "ThreadNames", "PROCESSES", "TARGET_INFO_GPU",
    "TARGET_INFO_CUDA_DEVICE", "TARGET_INFO_SESSION_START_TIME", "META_DATA_EXPORT", "EXPORT_META_DATA",
    "ENUM_CUDA_MEMCPY_OPER", "ENUM_CUDA_MEM_KIND", "ENUM_CUPTI_SYNC_TYPE",
}
TIMED = [t for t in sorted(READ) if t.startswith(("CUPTI_", "NVTX", "OSRT", "CUDA_GPU"))]


def tables(c):
    return [r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'")]


def columns(c, t):
    return [r[1] for r in c.execute(f'PRAGMA table_info("{t}")')]


def start(src, dst):
    if dst.exists():
        dst.unlink()
    shutil.copyfile(src, dst)
    os.chmod(dst, 0o644)
    c = sqlite3.connect(dst)
    for (v,) in c.execute("SELECT name FROM sqlite_master WHERE type='view'").fetchall():
        c.execute(f'DROP VIEW "{v}"')
    for t in tables(c):
        if t not in READ:
            c.execute(f'DROP TABLE "{t}"')
    return c


def trim(c, fraction, window="NVTX_EVENTS"):
    """Deletes the rows of every timed table that start after `fraction` of the time span of
    `window`'s rows (the NVTX ranges: so the fixture keeps whole steps of GPU work)."""
    present = [t for t in TIMED if t in tables(c)]
    lo, hi = c.execute(f'SELECT min(start), max(start) FROM "{window}"').fetchone()
    cut = lo + int((hi - lo) * fraction)
    for t in present:
        c.execute(f'DELETE FROM "{t}" WHERE start > ?', (cut,))


def rebuild(c, table, select_cols, new_name=None):
    """Recreates `table` (as `new_name`) holding only `select_cols` (SQL expressions AS names)."""
    new_name = new_name or table
    c.execute(f'CREATE TABLE "_fx" AS SELECT {", ".join(select_cols)} FROM "{table}"')
    c.execute(f'DROP TABLE "{table}"')
    c.execute(f'ALTER TABLE "_fx" RENAME TO "{new_name}"')


def finish(c, dst):
    c.commit()
    c.execute("VACUUM")
    c.close()
    print(f"{dst.relative_to(ROOT)}  {dst.stat().st_size} bytes")


def v2_tables():
    dst = SAMPLES / "nsys_fx_v2_tables.sqlite"
    c = start(SAMPLES / "nsys_gpt_single.sqlite", dst)
    trim(c, 0.5)
    k = "CUPTI_ACTIVITY_KIND_KERNEL"
    cols = columns(c, k)
    # Columns by name, not position: the names first, start/end last.
    rebuild(c, k, [f'"{x}"' for x in reversed(cols)], k + "_V2")
    rt = "CUPTI_ACTIVITY_KIND_RUNTIME"
    c.execute(f'CREATE TABLE "{rt}_V2" AS SELECT * FROM "{rt}" WHERE 0')
    c.execute(f'ALTER TABLE "{rt}" RENAME TO "{rt}_V3"')
    c.execute('ALTER TABLE "NVTX_EVENTS" RENAME TO "NVTX_EVENTS_V2"')
    c.execute('DROP TABLE IF EXISTS "CUDA_GPU_MEMORY_USAGE_EVENTS"')
    finish(c, dst)


def old_gpu_info():
    dst = SAMPLES / "nsys_fx_old_gpu_info.sqlite"
    c = start(SAMPLES / "nsys_pipit_saxpy_mpi.sqlite", dst)
    g = "TARGET_INFO_GPU"
    rebuild(c, g, ['id AS deviceId' if x == "id" else f'"{x}"' for x in columns(c, g)])
    n = "NVTX_EVENTS"
    sel = []
    for x in columns(c, n):
        if x == "text":
            sel.append('coalesce(text, (SELECT value FROM StringIds WHERE id = textId)) AS text')
        elif x != "textId":
            sel.append(f'"{x}"')
    rebuild(c, n, sel)
    c.execute('DROP TABLE "TARGET_INFO_SESSION_START_TIME"')
    finish(c, dst)


def string_table():
    dst = SAMPLES / "nsys_fx_string_table.sqlite"
    c = start(SAMPLES / "nsys_extrap_concurrent.sqlite", dst)
    rebuild(c, "StringIds", ["id AS _id_", "value"], "StringTable")
    for t in ["TARGET_INFO_GPU", "TARGET_INFO_SESSION_START_TIME", "EXPORT_META_DATA"]:
        c.execute(f'DROP TABLE "{t}"')
    finish(c, dst)


def bad_times():
    dst = SAMPLES / "nsys_fx_bad_times.sqlite"
    c = start(SAMPLES / "nsys_gpt_single.sqlite", dst)
    trim(c, 0.6)
    for t in tables(c):
        if t.startswith("ENUM_") or t == "TARGET_INFO_CUDA_DEVICE":
            c.execute(f'DROP TABLE "{t}"')
    k, m, r = "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_RUNTIME"
    for t in [k, m, r, "NVTX_EVENTS"]:
        rebuild(c, t, ["*"])  # without the NOT NULL constraints, so NULL times can be stored
    c.executescript(f'''
        UPDATE {k} SET start = NULL WHERE rowid % 50 = 1;
        UPDATE {k} SET "end" = NULL WHERE rowid % 50 = 2;
        UPDATE {k} SET "end" = start - 1000 WHERE rowid % 50 = 3;
        UPDATE {k} SET start = 'NaN' WHERE rowid % 50 = 4;
        UPDATE {k} SET "end" = 9e999 WHERE rowid % 50 = 5;
        UPDATE {k} SET start = -9e999 WHERE rowid % 50 = 6;
        UPDATE {m} SET "end" = start - 1 WHERE rowid % 20 = 3;
        UPDATE {r} SET start = NULL WHERE rowid % 40 = 1;
        UPDATE {r} SET "end" = start - 5 WHERE rowid % 40 = 2;
        UPDATE {r} SET "end" = NULL WHERE rowid % 40 = 3;
        UPDATE NVTX_EVENTS SET "end" = start - 10 WHERE rowid % 10 = 3 AND eventType = 59;
        UPDATE NVTX_EVENTS SET start = NULL WHERE rowid % 10 = 4;
    ''')
    finish(c, dst)


def newer_globaltid():
    dst = SAMPLES / "nsys_fx_newer_globaltid.sqlite"
    c = start(SAMPLES / "nsys_fuser_h200.sqlite", dst)
    trim(c, 0.3)
    for t in ["CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET",
              "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"]:
        c.execute(f'ALTER TABLE "{t}" RENAME COLUMN globalPid TO globalTid')
    c.execute("UPDATE META_DATA_EXPORT SET value = '3.99.0' WHERE name = 'EXPORT_SCHEMA_VERSION'")
    finish(c, dst)


if __name__ == "__main__":
    if sqlite3.sqlite_version_info < (3, 25):
        sys.exit("needs SQLite >= 3.25 (ALTER TABLE RENAME COLUMN)")
    v2_tables()
    old_gpu_info()
    string_table()
    bad_times()
    newer_globaltid()
