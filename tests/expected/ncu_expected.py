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
- Tensor FLOPs (Nsight Compute 2025.3's SpeedOfLight_HierarchicalTensorRooflineChart.section):
  the section's achieved-work counters for the launch's architecture, each an operation count
  (weight 1) -- CC 9.0: the sm__ops_path_tensor_op_{hgmma,hmma,igmma,imma,bgmma,bmma}_src_*
  families listed in TENSOR_WORK plus src_fp64 and src_fp8 (no op_ family counts those); CC 8.0/8.6/8.7: the src_* families with their
  _sparsity_off/_on parts; 8.9 adds src_fp8. tensor FLOPs = sum of <family>.sum; tensor FLOP/s =
  sum of <family>.sum.per_cycle_elapsed x sm__cycles_elapsed.avg.per_second. FLOP/s above plus
  tensor FLOP/s is the launch's flops_per_s (and its arithmetic intensity).
- Verdict: compute = max(sm, tensor pipe %) (sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed);
  compute < 40 and mem < 40 -> under_saturated; both > 80 -> compute_bound when the launch's
  arithmetic intensity is at or past the ridge point (tensor peak / DRAM peak for launches with
  tensor FLOPs, FP32 peak / DRAM peak otherwise; peaks = the median over launches of
  <family>.sum.peak_sustained x SM Hz -- the family with most tensor FLOPs --,
  2 x ffma peak_sustained x SM Hz, dram__bytes.sum.peak_sustained x DRAM Hz), memory_bound when
  before it, else (no ridge or no intensity) the larger of the two (memory on a tie);
  mem > 80 -> memory_bound; compute > 80 -> compute_bound; else balanced. None without sm and mem.
  by_name: the same on duration-weighted sm, mem and tensor pipe, the side being that of its
  launches when all of them that are compute/memory bound agree.
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
        for k, v in vals.items():
            if k.startswith(TP) or k in ("dram__bytes.sum", "dram__bytes_read.sum", "dram__bytes_write.sum",
                                         "sm__cycles_elapsed.avg.per_second", "dram__cycles_elapsed.avg.per_second",
                                         "dram__bytes.sum.peak_sustained",
                                         "sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained",
                                         "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed",
                                         "sm__inst_executed_pipe_tensor.avg.pct_of_peak_sustained_elapsed"):
                m[k] = v
        ci = head.index("CC")
        out.append({"id": int(r[0]), "name": r[head.index("Kernel Name")], "cc": r[ci], "m": m})
    return out


_GH100_OPS = ["hgmma_src_bf16_dst_fp32", "hgmma_src_fp16", "hgmma_src_tf32_dst_fp32", "hmma_src_bf16_dst_fp32",
              "hmma_src_fp16_dst_fp16", "hmma_src_fp16_dst_fp32", "hmma_src_tf32_dst_fp32", "igmma_src_int8",
              "imma_src_int8"]
_GA_SRC = ["bf16_dst_fp32", "fp16_dst_fp16", "fp16_dst_fp32", "int4", "int8", "tf32_dst_fp32"]
TENSOR_WORK = {
    "9.0": ["op_%s_sparsity_%s" % (o, s) for o in _GH100_OPS for s in ("off", "on")]
    + ["op_bgmma_src_int1", "op_bmma_src_int1", "src_fp64", "src_fp8_sparsity_off", "src_fp8_sparsity_on"],
    "8.0": ["src_%s_sparsity_%s" % (t, s) for t in _GA_SRC for s in ("off", "on")] + ["src_fp64", "src_int1"],
}
TENSOR_WORK["8.6"] = TENSOR_WORK["8.7"] = TENSOR_WORK["8.0"]
_GB20X_HMMA = ["bf16_dst_fp32", "fp16_dst_fp16", "fp16_dst_fp32", "tf32_dst_fp32"]
_GB20X_SRC = ["fp4_dst_fp32", "fp4_fp6_dst_fp16", "fp4_fp6_dst_fp32", "fp8_dst_fp16", "fp8_dst_fp32"]
TENSOR_WORK["12.0"] = (["op_hmma_src_%s_sparsity_%s" % (t, s) for t in _GB20X_HMMA for s in ("off", "on")]
                       + ["op_imma_src_int8_sparsity_off", "op_imma_src_int8_sparsity_on", "src_fp64"]
                       + ["src_%s_sparsity_%s" % (t, s) for t in _GB20X_SRC for s in ("off", "on")])
# The same section's by-source charts: used when an export has none of the op_ counters.
BY_SOURCE = {
    "9.0": ["src_bf16_dst_fp32", "src_fp16", "src_tf32_dst_fp32", "src_int8", "src_int1", "src_fp64",
            "src_fp8_sparsity_off", "src_fp8_sparsity_on"],
    "12.0": ["src_bf16_dst_fp32", "src_fp16_dst_fp16", "src_fp16_dst_fp32", "src_int8", "src_tf32_dst_fp32",
             "src_fp64"] + ["src_%s_sparsity_%s" % (t, s) for t in _GB20X_SRC for s in ("off", "on")],
}
TENSOR_WORK["8.9"] = TENSOR_WORK["8.0"] + ["src_fp8_sparsity_off", "src_fp8_sparsity_on"]
TP = "sm__ops_path_tensor_"


def tensor(l):
    """(tensor FLOPs, tensor FLOP/s, {family: FLOPs}) or (None, None, {})."""
    m = l["m"]
    work = TENSOR_WORK.get(l["cc"], [])
    if not any(k.startswith(TP + "op_") for k in m):
        work = BY_SOURCE.get(l["cc"], work)
    fams = {f: m[TP + f + ".sum"] for f in work if TP + f + ".sum" in m}
    if not fams:
        return None, None, {}
    hz = m.get("sm__cycles_elapsed.avg.per_second")
    rates = [m[TP + f + ".sum.per_cycle_elapsed"] for f in fams if TP + f + ".sum.per_cycle_elapsed" in m]
    rate = sum(rates) * hz if rates and hz else None
    if rate is None and m.get("dur"):
        rate = sum(fams.values()) / (m["dur"] / 1e9)
    return sum(fams.values()), rate, fams


def median(v):
    v = sorted(x for x in v if x is not None)
    if not v:
        return None
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def ridges(launches):
    """(FP32 ridge, tensor ridge) in FLOP/byte, from the export's peaks."""
    def prod(l, a, b, k=1.0):
        m = l["m"]
        return m[a] * m[b] * k if a in m and b in m else None
    dram = median([prod(l, "dram__bytes.sum.peak_sustained", "dram__cycles_elapsed.avg.per_second") for l in launches])
    fp32 = median([prod(l, "sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained",
                        "sm__cycles_elapsed.avg.per_second", 2.0) for l in launches])
    total = {}
    for l in launches:
        for f, v in tensor(l)[2].items():
            total[f] = total.get(f, 0.0) + v
    tpeak = None
    if total:
        best = max(sorted(total), key=lambda f: total[f])
        tpeak = median([prod(l, TP + best + ".sum.peak_sustained", "sm__cycles_elapsed.avg.per_second") for l in launches])
    r = lambda p: p / dram if p and dram else None
    return r(fp32), r(tpeak)


WEIGHT = {"fadd": 1, "fmul": 1, "ffma": 2, "dadd": 1, "dmul": 1, "dfma": 2, "hadd": 2, "hmul": 2, "hfma": 4}


def verdict(sm, mem, tensor=None, compute_side=None):
    if sm is None or mem is None:
        return None
    compute = sm if tensor is None else max(sm, tensor)
    if compute < 40 and mem < 40:
        return "under_saturated"
    if compute > 80 and mem > 80:
        if compute_side is not None:
            return "compute_bound" if compute_side else "memory_bound"
        return "compute_bound" if compute > mem else "memory_bound"
    if mem > 80:
        return "memory_bound"
    if compute > 80:
        return "compute_bound"
    return "balanced"


def figures(l, ridge):
    m = l["m"]
    dur = m.get("dur")
    rates = [WEIGHT[k[5:]] * v for k, v in m.items() if k.startswith("rate_")]
    flops_per_s = None
    if rates and "smsp_hz" in m:
        flops_per_s = sum(rates) * m["smsp_hz"]
    tflops, trate, _ = tensor(l)
    if trate is not None:
        flops_per_s = (flops_per_s or 0.0) + trate
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
    tpct = m.get("sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed",
                 m.get("sm__inst_executed_pipe_tensor.avg.pct_of_peak_sustained_elapsed"))
    rp = ridge[1] if tflops else ridge[0]
    side = ai >= rp if ai is not None and rp is not None else None
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
        "tensor_flops": tflops,
        "tensor_pipe_pct": tpct,
        "verdict": verdict(m.get("sm"), m.get("mem"), tpct, side),
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
    ridge = ridges(launches)
    kernels = [figures(l, ridge) for l in launches]
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
        sides = [k["verdict"] == "compute_bound" for k in ks if k["verdict"] in ("compute_bound", "memory_bound")]
        side = sides[0] if sides and all(x == sides[0] for x in sides) else None
        by_name.append({
            "name": n,
            "launches": len(ks),
            "duration_ns": sum(durs) if durs else None,
            "sm_pct": sm,
            "memory_pct": mem,
            "dram_pct": wmean(ks, "dram_pct"),
            "dram_bytes": sum(bytes_) if bytes_ else None,
            "verdict": verdict(sm, mem, wmean(ks, "tensor_pipe_pct"), side),
        })
    by_name.sort(key=lambda a: -(a["duration_ns"] or 0))
    print(json.dumps({"layout": "details" if long_form else "raw", "cc": launches[0]["cc"] if launches else "", "kernels": kernels, "by_name": by_name}, indent=1))


if __name__ == "__main__":
    main(sys.argv[1])
