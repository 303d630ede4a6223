#!/usr/bin/env python3
"""Independent oracle for the per-launch detail of an Nsight Compute report (stdlib only):
occupancy, stall reasons, memory workload and rule results, computed from ncu's own CSV
exports of the report (`ncu --import R --csv --page raw` and, where there is one,
`--page details --print-details all`), for comparison with what Strobe reads from the
.ncu-rep itself.

Usage: python3 tests/expected/ncu_detail_expected.py RAW.csv [DETAILS.csv] > tests/expected/<stem>.detail.json

Each number is written as [value, tolerance]: the tolerance is half a unit of the last digit
the export printed, in base units (propagated through sums and shares), so the comparison
is as tight as the export allows (a value printed without decimals is integer-typed in ncu's
output; a printed 0 is exactly zero).

Rules (from the Nsight Compute documentation and the files, not from the Rust code):
- Occupancy: theoretical = sm__maximum_warps_per_active_cycle_pct, achieved =
  sm__warps_active.avg.pct_of_peak_sustained_active; limiter = the smallest of
  launch__occupancy_limit_{registers,shared_mem,warps,blocks,barriers} (names registers,
  shared_memory, warps, blocks, barriers; ties joined by "+" in that order);
  registers = launch__registers_per_thread; shared memory per block =
  launch__shared_mem_per_block (bytes); waves = launch__waves_per_multiprocessor.
- Stalls: the warp-state ratios smsp__average_warps_issue_stalled_<r>_per_issue_active.ratio
  when any is > 0, else the PC-sampling counts smsp__pcsamp_warps_issue_stalled_<r> (not
  _not_issued); `selected` left out; share = value / sum * 100; zero reasons dropped.
- Memory: l1tex__t_sector_hit_rate.pct, lts__t_sector_hit_rate.pct, dram__bytes_read.sum,
  dram__bytes_write.sum, dram__bytes.sum.per_second,
  l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum; the memory chart's links (FLOWS below:
  ncu's Memory Workload Analysis chart, kernel -> L1/TEX -> L2 -> DRAM), each with its bytes
  (L1 global sectors x 32 bytes) and its % of peak where the export has either.
- Rules (details export): one per row with a Rule Name: name, type, description, speedup type
  and value; ranked by speedup (largest first, none last), OPT before others on ties, then
  export order. Estimated speedup of a launch = the largest `global` one (on a tie, the rule
  whose name sorts first).
"""
import csv
import json
import sys

PREFIX = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
TIME = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9, "nsecond": 1.0, "usecond": 1e3, "msecond": 1e6, "second": 1e9}


def factor(unit):
    """Scale of a unit's numerator to base units (bytes, ns, Hz; per-second kept)."""
    top = unit.split("/")[0].strip()
    if top in TIME:
        return TIME[top]
    if top.lower().endswith("byte") and top[:1] in "KMGT" and len(top) > 4:
        return PREFIX[top[0]]
    if top.lower() in ("khz", "mhz", "ghz"):
        return PREFIX[top[0].upper()]
    return 1.0


def number(text, unit):
    """[value, half a unit of the last printed digit] in base units, or None."""
    t = text.replace(",", "").strip()
    try:
        v = float(t)
    except ValueError:
        return None
    if v != v or v in (float("inf"), float("-inf")):
        return None
    f = factor(unit)
    if "." not in t:
        # ncu prints integer-typed values without decimals: exact (a printed 0 is zero).
        return [v * f, 0.0 if v == 0 else 0.5 * f]
    dec = len(t.split(".")[1])
    return [v * f, 0.5 * 10.0**-dec * f]


def raw_rows(path):
    rows = [r for r in csv.reader(open(path, newline="", encoding="utf-8", errors="replace")) if r]
    head = next(i for i, r in enumerate(rows) if r and r[0] == "ID")
    hdr, units = rows[head], rows[head + 1]
    out = []
    for r in rows[head + 2 :]:
        if not r or not r[0].strip():
            continue
        d = {}
        for i, h in enumerate(hdr):
            if i < len(r):
                d[h] = (r[i], units[i] if i < len(units) else "")
        out.append(d)
    return out


def get(d, k):
    if k not in d:
        return None
    return number(*d[k])


LIMITS = [("registers", "registers"), ("shared_mem", "shared_memory"), ("warps", "warps"), ("blocks", "blocks"), ("barriers", "barriers")]


def occupancy(d):
    limits = [(n, get(d, f"launch__occupancy_limit_{m}")) for m, n in LIMITS]
    limits = [(n, v) for n, v in limits if v]
    limiter = None
    if limits:
        lo = min(v[0] for _, v in limits)
        limiter = "+".join(n for n, v in limits if v[0] == lo)
    o = {
        "theoretical_pct": get(d, "sm__maximum_warps_per_active_cycle_pct"),
        "achieved_pct": get(d, "sm__warps_active.avg.pct_of_peak_sustained_active"),
        "limiter": limiter,
        "registers_per_thread": get(d, "launch__registers_per_thread"),
        "shared_mem_per_block_bytes": get(d, "launch__shared_mem_per_block"),
        "waves_per_sm": get(d, "launch__waves_per_multiprocessor"),
    }
    return {k: v for k, v in o.items() if v is not None} or None


def share_list(pairs):
    total = sum(v for _, (v, _) in pairs)
    ttol = sum(t for _, (_, t) in pairs)
    if total <= 0:
        return None
    out = []
    for r, (v, t) in pairs:
        if v > 0:
            pct = v / total * 100
            tol = (t + v / total * ttol) / max(total - ttol, 1e-300) * 100
            out.append([r, [pct, tol]])
    out.sort(key=lambda x: (-x[1][0], x[0]))
    return out


def stalls(d):
    ws, pc = [], []
    pre, suf = "smsp__average_warps_issue_stalled_", "_per_issue_active.ratio"
    for k in d:
        if k.startswith(pre) and k.endswith(suf):
            r = k[len(pre) : -len(suf)]
            v = get(d, k)
            if v and r != "selected" and v[0] >= 0:
                ws.append((r, v))
        p = "smsp__pcsamp_warps_issue_stalled_"
        if k.startswith(p) and not k.endswith("_not_issued") and "." not in k:
            r = k[len(p) :]
            v = get(d, k)
            if v and r != "selected" and v[0] >= 0:
                pc.append((r, v))
    for source, pairs in (("warp_state", ws), ("pc_sampling", pc)):
        s = share_list(pairs)
        if s:
            return {"source": source, "reasons": s}
    return None


def memory(d):
    m = {
        "l1_hit_pct": get(d, "l1tex__t_sector_hit_rate.pct"),
        "l2_hit_pct": get(d, "lts__t_sector_hit_rate.pct"),
        "dram_read_bytes": get(d, "dram__bytes_read.sum"),
        "dram_write_bytes": get(d, "dram__bytes_write.sum"),
        "dram_bytes_per_s": get(d, "dram__bytes.sum.per_second"),
        "shared_bank_conflicts": get(d, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum"),
    }
    m = {k: v for k, v in m.items() if v is not None}
    flows = []
    for frm, to, what, b, scale, pct in FLOWS:
        bv = get(d, b)
        if bv:
            bv = [bv[0] * scale, bv[1] * scale]
        pv = get(d, pct)
        if bv or pv:
            f = {"from": frm, "to": to, "what": what}
            if bv:
                f["bytes"] = bv
            if pv:
                f["pct_of_peak"] = pv
            flows.append(f)
    if flows:
        m["flows"] = flows
    return m or None


# The memory chart's links, in the direction the data goes: (from, to, what, bytes metric,
# bytes per unit, % of peak metric).
FLOWS = [
    ("L1", "kernel", "global loads", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", 32.0,
     "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum.pct_of_peak_sustained_elapsed"),
    ("kernel", "L1", "global stores", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", 32.0,
     "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum.pct_of_peak_sustained_elapsed"),
    ("L2", "L1", "reads", "l1tex__m_xbar2l1tex_read_bytes.sum", 1.0,
     "l1tex__m_xbar2l1tex_read_bytes.sum.pct_of_peak_sustained_elapsed"),
    ("L1", "L2", "writes", "l1tex__m_l1tex2xbar_write_bytes.sum", 1.0,
     "l1tex__m_l1tex2xbar_write_bytes.sum.pct_of_peak_sustained_elapsed"),
    ("DRAM", "L2", "reads", "dram__bytes_read.sum", 1.0, "dram__bytes_read.sum.pct_of_peak_sustained_elapsed"),
    ("L2", "DRAM", "writes", "dram__bytes_write.sum", 1.0, "dram__bytes_write.sum.pct_of_peak_sustained_elapsed"),
]


def rules(path):
    """ID -> ranked rules, from a details export."""
    by_id = {}
    rows = [r for r in csv.reader(open(path, newline="", encoding="utf-8", errors="replace")) if r]
    head = next(i for i, r in enumerate(rows) if r and r[0] == "ID")
    hdr = rows[head]
    col = {h: i for i, h in enumerate(hdr)}
    f = lambda r, name: r[col[name]].strip() if name in col and col[name] < len(r) else ""
    for r in rows[head + 1 :]:
        if not f(r, "Rule Name"):
            continue
        sp = number(f(r, "Estimated Speedup"), "")
        by_id.setdefault(f(r, "ID"), []).append(
            {
                "name": f(r, "Rule Name"),
                "type": f(r, "Rule Type"),
                "message": f(r, "Rule Description"),
                "speedup_type": f(r, "Estimated Speedup Type") or None,
                "speedup_pct": sp,
            }
        )
    for k, v in by_id.items():
        order = list(enumerate(v))
        order.sort(key=lambda x: (-(x[1]["speedup_pct"][0] if x[1]["speedup_pct"] else float("-inf")), x[1]["type"] != "OPT", x[0]))
        by_id[k] = [x[1] for x in order]
    return by_id


def main():
    raw = raw_rows(sys.argv[1])
    rl = rules(sys.argv[2]) if len(sys.argv) > 2 else None
    out = []
    for d in raw:
        lid = d["ID"][0].strip()
        k = {"id": int(lid), "occupancy": occupancy(d), "stalls": stalls(d), "memory": memory(d)}
        if rl is not None:
            rs = rl.get(lid, [])
            k["rules"] = rs
            glob = [r for r in rs if r["speedup_type"] == "global" and r["speedup_pct"]]
            best = min(glob, key=lambda r: (-r["speedup_pct"][0], r["name"])) if glob else None
            k["estimated_speedup"] = {"pct": best["speedup_pct"], "rule": best["name"]} if best else None
        out.append(k)
    json.dump({"kernels": out}, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
