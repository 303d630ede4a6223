#!/usr/bin/env python3
"""Runs every named query of figures.sql on one nsys SQLite export and prints the results
as JSON: {name: [[col, ...], ...] or null when a table the query reads is absent}.
Stdlib only; opens the file read-only and immutable (nothing is written beside it)."""
import json
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


def main(path):
    sql = (Path(__file__).parent / "figures.sql").read_text()
    uri = "file:" + urllib.parse.quote(str(Path(path).resolve())) + "?mode=ro&immutable=1"
    con = sqlite3.connect(uri, uri=True)
    con.text_factory = lambda b: b.decode("utf-8", "replace")
    result = {}
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
