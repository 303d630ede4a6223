#!/usr/bin/env python3
"""Independent oracle for Nsight Compute CSV exports (stdlib only).

Usage: python3 tests/expected/ncu_expected.py sample-traces/ncu_raw.csv > tests/expected/ncu_raw.ncu.json

Rules (written from the ncu documentation and the files, not from the Rust code):
- The CSV starts at the first line whose first field is "ID" and which has a "Kernel Name"
  or "Metric Name" field; lines starting with "==" (==PROF==, ==WARNING==, ==ERROR==) and
  blank lines are dropped. No header and any ==ERROR== line -> {"error": "only_errors"};
  no header otherwise -> {"error": "no_header"}.
- Long form (has "Metric Name" and "Metric Value"): rows grouped by ID. Wide form: row 2 is
  the units row (ID empty); one row per launch.
- Numbers: commas removed; "n/a" and other text -> no value.
- Units -> base: byte prefixes K/M/G/T = 10^3.., time -> ns, frequencies -> Hz,
  X/s or X/second -> per second, X/cycle keeps "per cycle".
- Details display names used: Duration; "Compute (SM) Throughput" / "SM [%]" (sm %);
  "Memory Throughput" with unit % / "Memory [%]" (memory %); "DRAM Throughput" / "SOL FB"
  (dram %); "Memory Throughput" with a bytes/s unit and "DRAM Bandwidth" (DRAM bytes/s);
  roofline-section "Predicated-On <OP> Thread Instructions Executed Per Cycle" and the
  roofline-section "SM Frequency" (FLOP rate).
- FLOP/s = (FADD + FMUL + 2 FFMA + DADD + DMUL + 2 DFMA + 2 HADD + 2 HMUL + 4 HFMA) per-cycle
  rates x SM (smsp) cycles per second (ncu's roofline-chart definition; half counts packed
  half2 ops). None when no such rate is exported.
- DRAM bytes = dram__bytes.sum, else dram__bytes_read.sum + dram__bytes_write.sum, else
  DRAM bytes/s x duration. DRAM bytes/s = dram__bytes.sum.per_second (or the details name),
  else bytes / duration. Arithmetic intensity = FLOP/s / DRAM bytes/s.
- Verdict: sm < 40 and mem < 40 -> under_saturated; mem > 80 -> memory_bound; sm > 80 ->
  compute_bound; else balanced. None without both.
- by_name: per kernel name, total duration, duration-weighted sm/mem/dram, sum of DRAM bytes.
"""
import csv
import json
import sys

PREFIX = {"": 1.0, "K": 1e3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
TIME_NS = {"ns": 1.0, "nsecond": 1.0, "us": 1e3, "usecond": 1e3, "ms": 1e6, "msecond": 1e6, "s": 1e9, "second": 1e9}


def to_base(value, unit):
    """Returns the value in base units (bytes, ns, Hz, per second)."""
    unit = unit.strip()
    if "/" in unit:
        top, bottom = unit.split("/", 1)
    else:
        top, bottom = unit, None
    scale = 1.0
    if top in TIME_NS:
        scale = TIME_NS[top]
    elif top.lower().endswith("hz"):
        scale = PREFIX[top[:-2]]
    elif top.endswith("byte"):
        scale = PREFIX[top[:-4]]
    elif top.endswith("B") and top[:-1] in PREFIX:
        scale = PREFIX[top[:-1]]
    if bottom is not None and bottom in TIME_NS:
        scale = scale * (1e9 / TIME_NS[bottom])
    return value * scale


def number(text):
    t = text.strip().replace(",", "")
    try:
        v = float(t)
    except ValueError:
        return None
    return v


def read_rows(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().splitlines()
    start = None
    for i, line in enumerate(lines):
        if line.startswith('"ID",') and ('"Kernel Name"' in line or '"Metric Name"' in line):
            start = i
            break
    if start is None:
        if any(l.startswith("==ERROR==") for l in lines):
            return None, "only_errors"
        return None, "no_header"
    kept = [l for l in lines[start:] if l.strip() and not l.startswith("==")]
    return list(csv.reader(kept)), None


def launches_long(rows):
    head = rows[0]
    ix = {name: i for i, name in enumerate(head)}
    order, launches = [], {}
    for r in rows[1:]:
        if not r or not r[0]:
            continue
        lid = int(r[0])
        if lid not in launches:
            launches[lid] = {"id": lid, "name": r[ix["Kernel Name"]], "cc": r[ix["CC"]] if "CC" in ix and len(r) > ix["CC"] else "", "m": {}}
            order.append(lid)
        if len(r) <= ix["Metric Value"]:
            continue
        sec = r[ix["Section Name"]]
        name = r[ix["Metric Name"]]
        unit = r[ix["Metric Unit"]]
        v = number(r[ix["Metric Value"]])
        if not name or v is None:
            continue
        m = launches[lid]["m"]
        key = None
        if "__" in name:
            key = name
        elif name == "Duration":
            key = "dur"
        elif name in ("Compute (SM) Throughput", "SM [%]") and unit == "%":
            key = "sm"
        elif name in ("Memory Throughput", "Memory [%]") and unit == "%":
            key = "mem"
        elif name in ("DRAM Throughput", "SOL FB") and unit == "%":
            key = "dram"
        elif name in ("Memory Throughput", "DRAM Bandwidth") and (unit.endswith("/s") or unit.endswith("/second")):
            key = "dram_bps"
        elif "Roofline" in sec and name == "SM Frequency":
            key = "smsp_hz"
        elif "Roofline" in sec and name.startswith("Predicated-On ") and name.endswith(" Thread Instructions Executed Per Cycle"):
            key = "rate_" + name.split()[1].lower()
        if key is None:
            continue
        m.setdefault(key, to_base(v, unit))
    out = []
    for lid in order:
        l = launches[lid]
        m = l["m"]
        alias = {
            "gpu__time_duration.sum": "dur",
            "sm__throughput.avg.pct_of_peak_sustained_elapsed": "sm",
            "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed": "mem",
            "dram__throughput.avg.pct_of_peak_sustained_elapsed": "dram",
            "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed": "dram",
            "dram__bytes.sum.per_second": "dram_bps",
        }
        for full, short in alias.items():
            if full in m and short not in m:
                m[short] = m[full]
        out.append(l)
    return out


def launches_wide(rows):
    head, units = rows[0], rows[1]
    out = []
    for r in rows[2:]:
        if not r or not r[0]:
            continue
        vals = {}
        for i, name in enumerate(head):
            if i < len(r) and "__" in name:
                v = number(r[i])
                if v is not None:
                    vals[name] = to_base(v, units[i])
        m = {}
        pairs = [
            ("dur", "gpu__time_duration.sum"),
            ("sm", "sm__throughput.avg.pct_of_peak_sustained_elapsed"),
            ("mem", "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"),
            ("dram", "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"),
            ("dram_bps", "dram__bytes.sum.per_second"),
            ("smsp_hz", "smsp__cycles_elapsed.avg.per_second"),
        ]
        for short, full in pairs:
            if full in vals:
                m[short] = vals[full]
        for op in ("fadd", "fmul", "ffma", "dadd", "dmul", "dfma", "hadd", "hmul", "hfma"):
            k = "smsp__sass_thread_inst_executed_op_%s_pred_on.sum.per_cycle_elapsed" % op
            if k in vals:
                m["rate_" + op] = vals[k]
        for k in ("dram__bytes.sum", "dram__bytes_read.sum", "dram__bytes_write.sum"):
            if k in vals:
                m[k] = vals[k]
        ci = head.index("CC")
        out.append({"id": int(r[0]), "name": r[head.index("Kernel Name")], "cc": r[ci], "m": m})
    return out


WEIGHT = {"fadd": 1, "fmul": 1, "ffma": 2, "dadd": 1, "dmul": 1, "dfma": 2, "hadd": 2, "hmul": 2, "hfma": 4}


def verdict(sm, mem):
    if sm is None or mem is None:
        return None
    if sm < 40 and mem < 40:
        return "under_saturated"
    if mem > 80:
        return "memory_bound"
    if sm > 80:
        return "compute_bound"
    return "balanced"


def figures(l):
    m = l["m"]
    dur = m.get("dur")
    rates = [WEIGHT[k[5:]] * v for k, v in m.items() if k.startswith("rate_")]
    flops_per_s = None
    if rates and "smsp_hz" in m:
        flops_per_s = sum(rates) * m["smsp_hz"]
    if "dram__bytes.sum" in m:
        dram_bytes = m["dram__bytes.sum"]
    elif "dram__bytes_read.sum" in m or "dram__bytes_write.sum" in m:
        dram_bytes = m.get("dram__bytes_read.sum", 0.0) + m.get("dram__bytes_write.sum", 0.0)
    elif "dram_bps" in m and dur is not None:
        dram_bytes = m["dram_bps"] * (dur / 1e9)
    else:
        dram_bytes = None
    bps = m.get("dram_bps")
    if bps is None and dram_bytes is not None and dur:
        bps = dram_bytes / (dur / 1e9)
    ai = flops_per_s / bps if flops_per_s is not None and bps else None
    return {
        "id": l["id"],
        "name": l["name"],
        "duration_ns": None if dur is None else int(round(dur)),
        "sm_pct": m.get("sm"),
        "memory_pct": m.get("mem"),
        "dram_pct": m.get("dram"),
        "flops_per_s": flops_per_s,
        "dram_bytes": dram_bytes,
        "arithmetic_intensity": ai,
        "verdict": verdict(m.get("sm"), m.get("mem")),
    }


def wmean(ks, key):
    pairs = [(k[key], k["duration_ns"]) for k in ks if k[key] is not None and k["duration_ns"]]
    if not pairs:
        return None
    return sum(v * d for v, d in pairs) / sum(d for _, d in pairs)


def main(path):
    rows, err = read_rows(path)
    if err:
        print(json.dumps({"error": err}, indent=1))
        return
    long_form = "Metric Name" in rows[0]
    launches = launches_long(rows) if long_form else launches_wide(rows)
    kernels = [figures(l) for l in launches]
    names = []
    for k in kernels:
        if k["name"] not in names:
            names.append(k["name"])
    by_name = []
    for n in names:
        ks = [k for k in kernels if k["name"] == n]
        durs = [k["duration_ns"] for k in ks if k["duration_ns"] is not None]
        bytes_ = [k["dram_bytes"] for k in ks if k["dram_bytes"] is not None]
        sm, mem = wmean(ks, "sm_pct"), wmean(ks, "memory_pct")
        by_name.append({
            "name": n,
            "launches": len(ks),
            "duration_ns": sum(durs) if durs else None,
            "sm_pct": sm,
            "memory_pct": mem,
            "dram_pct": wmean(ks, "dram_pct"),
            "dram_bytes": sum(bytes_) if bytes_ else None,
            "verdict": verdict(sm, mem),
        })
    by_name.sort(key=lambda a: -(a["duration_ns"] or 0))
    print(json.dumps({"layout": "details" if long_form else "raw", "cc": launches[0]["cc"] if launches else "", "kernels": kernels, "by_name": by_name}, indent=1))


if __name__ == "__main__":
    main(sys.argv[1])
