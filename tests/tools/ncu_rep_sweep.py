#!/usr/bin/env python3
"""Checks that `strobe report --json` of the shared GPT report (report.ncu-rep.gz, read by
Strobe's native .ncu-rep reader) equals that of ncu's own `--csv --page raw` export of it
(ncu_raw.csv, read by the CSV path). Stdlib only.

Usage: tests/tools/ncu_rep_sweep.py [TRACES_DIR (default ../shared/traces)] [STROBE (default target/debug/strobe)]

Equal means: the same keys and strings, integers equal, floats within 1e-5 relative, and
kernel names equal or, where ncu's CSV shortened a long demangled name, ncu's name is the
native one with text removed (namespace qualifiers) and the function identifier the same.
The per-launch detail (occupancy, stalls, memory, rules, the verdict paragraph and the
estimates) is left out: the raw page has no rule results, and the rest is checked to the
export's printed precision by tests/tests/ncu_detail.rs.
The DRAM figures are compared to the precision the export printed them with: this export
writes DRAM bytes in Gbyte and DRAM bytes/s in Tbyte/s with 6 decimals (+-500 bytes), while
the report holds the exact counts; the allowance is read from the CSV's units row and cells.
"""
import csv as csvmod
import json
import math
import re
import subprocess
import sys


def ident(name):
    """The function's own identifier (as strobe's kernel_match_key)."""
    head = re.sub(r"<unnamed>|\(anonymous namespace\)", "", name)
    head = re.split(r"[<(]", head, 1)[0].strip()
    return head.split("::")[-1].split(" ")[-1]


def subsequence(short, long):
    it = iter(long)
    return all(c in it for c in short)


PREFIX = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}


def half_unit(csv_path, column):
    """Half a unit of the last printed digit of `column`, in base units (largest over rows)."""
    rows = [r for r in csvmod.reader(open(csv_path, newline="")) if r]
    head = next(i for i, r in enumerate(rows) if r[0] == "ID")
    hdr, units, data = rows[head], rows[head + 1], rows[head + 2 :]
    i = hdr.index(column)
    unit = units[i].split("/")[0]
    factor = PREFIX.get(unit[0], 1.0) if unit and unit[0] in "KMGT" and unit[1:].lower().startswith("byte") else 1.0
    dec = max((len(r[i].split(".")[1]) if "." in r[i] else 0) for r in data if len(r) > i)
    return 0.5 * 10.0 ** -dec * factor


def allowance(csv_path, rep):
    """Per-figure absolute allowances for the DRAM figures (see the module doc)."""
    try:
        b = half_unit(csv_path, "dram__bytes_read.sum") + half_unit(csv_path, "dram__bytes_write.sum")
    except ValueError:
        b = half_unit(csv_path, "dram__bytes.sum")
    bps = half_unit(csv_path, "dram__bytes.sum.per_second")
    launches = {}
    for k in rep["kernels"]:
        launches[k["name"]] = launches.get(k["name"], 0) + 1
    return b, bps, launches


def same(a, b, path, bad, allow=None):
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            bad.append(f"{path}: keys {sorted(a.keys() ^ b.keys())}")
        for k in a.keys() & b.keys():
            same(a[k], b[k], f"{path}.{k}", bad, allow)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            bad.append(f"{path}: {len(a)} vs {len(b)} items")
        for i, (x, y) in enumerate(zip(a, b)):
            same(x, y, f"{path}[{i}]", bad, allow)
    elif isinstance(a, str) and isinstance(b, str) and path.endswith(".name"):
        if a != b and not (subsequence(b, a) and ident(a) == ident(b)):
            bad.append(f"{path}: {a[:80]!r} vs {b[:80]!r}")
    elif allow and (isinstance(a, (int, float)) or isinstance(b, (int, float))) and allow(path) is not None:
        if a is None or b is None or abs(a - b) > allow(path):
            bad.append(f"{path}: {a} vs {b} (allowed {allow(path)})")
    elif isinstance(a, float) or isinstance(b, float):
        if a is None or b is None or not math.isclose(a, b, rel_tol=1e-5, abs_tol=1e-9):
            bad.append(f"{path}: {a} vs {b}")
    elif a != b:
        bad.append(f"{path}: {a!r} vs {b!r}")


DETAIL = ["occupancy", "stalls", "stall_source", "stall_samples", "memory", "rules", "estimated_speedup",
          "roofline_speedup_pct", "verdict_text"]


def without_detail(rep):
    """The report's JSON less the per-launch detail (see the module doc)."""
    for k in rep.get("kernels", []):
        for key in DETAIL:
            k.pop(key, None)
    return rep


def report(strobe, path):
    out = subprocess.run([strobe, "report", "--json", path], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"strobe report {path} failed: {out.stderr.strip()}")
    return json.loads(out.stdout)


def main():
    traces = sys.argv[1] if len(sys.argv) > 1 else "../shared/traces"
    strobe = sys.argv[2] if len(sys.argv) > 2 else "target/debug/strobe"
    rep = without_detail(report(strobe, f"{traces}/ncu/report.ncu-rep.gz"))
    csv = without_detail(report(strobe, f"{traces}/ncu/ncu_raw.csv"))
    b, bps, launches = allowance(f"{traces}/ncu/ncu_raw.csv", rep)

    def allow(path):
        m = re.match(r"report\.(kernels|by_name)\[(\d+)\]\.(dram_bytes|dram_bytes_per_s|arithmetic_intensity)$", path)
        if not m:
            return None
        table, i, what = m.group(1), int(m.group(2)), m.group(3)
        k = rep[table][i]
        n = launches.get(k["name"], 1) if table == "by_name" else 1
        if what == "dram_bytes":
            return n * b + 1e-5 * abs(k[what] or 0)
        if what == "dram_bytes_per_s":
            return bps + 1e-5 * abs(k[what] or 0)
        # FLOP / byte: the relative error of its DRAM term, plus float rounding.
        bytes_ = k.get("dram_bytes") or 0
        rel = (n * b / bytes_) if bytes_ else 0
        return (2 * rel + 1e-5) * abs(k[what] or 0)

    bad = []
    same(rep, csv, "report", bad, allow)
    n = len(rep.get("kernels", []))
    if bad:
        print(f"report.ncu-rep.gz vs ncu_raw.csv: {len(bad)} differences", *bad[:40], sep="\n  ")
        sys.exit(1)
    print(f"report.ncu-rep.gz and ncu_raw.csv agree: {n} launches, {len(rep.get('by_name', []))} kernel names")


if __name__ == "__main__":
    main()
