#!/usr/bin/env python3
"""Independent oracle for the sampled GPU metrics of an Nsight Systems export
(`nsys profile --gpu-metrics-devices=...`). Stdlib only (sqlite3, statistics), sharing no
code with the Rust crates.

Rules:
- A sample is a GPU_METRICS row; its metric is named by TARGET_INFO_GPU_METRICS on
  (typeId, metricId). Its GPU is typeId & 0xFF (the nsys GPU id, as Nsight Systems' own
  gpu_metric recipes read it), given as the CUDA device id TARGET_INFO_CUDA_DEVICE maps
  it to.
- A metric named `[MHz]` with a sample of at least 100 000 holds Hz (no GPU clock reaches
  100 GHz; Nsight Systems 2025.3 exports its clocks so): its values are divided by 10^6.
- A sample at t stands for the period from t to the metric's next sample (the last one: as
  long as the median period); a window [a, b) holds the samples with a <= t < b.
- A GPU's window: its first GPU operation's start to its last one's end (kernels, memcpy,
  memset of that deviceId).
- mean: statistics.fmean; p50: statistics.median; p90: statistics.quantiles(n=10,
  method="inclusive")[8] (linear between the nearest ranks); one sample is its own p90.
- Steps (given on the command line as NVTX range texts): each NVTX_EVENTS range with that
  text, [start, end); a step with no sample is left out.
- Busy but not working: over the periods of "SMs Active", those the union of the GPU's
  kernels (its gaps shorter than 2 000 ns closed: the GPU turning to its next queued
  kernel) covers for at least 90 % of the period are kernel-busy; of them, those with
  SMs Active < 50 are low. Reported: busy and low time (ns), the same per step (periods
  starting inside it), and the 5 longest runs of consecutive low periods (longest first,
  then earliest) with their mean SMs Active, the kernel name with the most time inside the
  run and the block count of its longest launch there.
- Per kernel name (the 3 with most GPU time): its launches' total time, and the mean of
  "SMs Active" weighted by how much of each sample's period its launches cover.

usage: nsys_gpu_metrics_expected.py EXPORT.sqlite [STEP_TEXT ...] > X.gpu_metrics.json
"""
import json
import sqlite3
import statistics
import sys


def summary(vals):
    vals = sorted(vals)
    p90 = vals[0] if len(vals) == 1 else statistics.quantiles(vals, n=10, method="inclusive")[8]
    return {"mean": statistics.fmean(vals), "p50": statistics.median(vals), "p90": p90, "samples": len(vals)}


def union(ivs):
    out = []
    for s, e in sorted(ivs):
        if e <= s:
            continue
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def covered(u, a, b):
    return sum(max(0, min(e, b) - max(s, a)) for s, e in u if s < b and e > a)


def main(path, step_texts):
    con = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)
    names = {(t, m): n for t, m, n in con.execute("SELECT typeId, metricId, metricName FROM TARGET_INFO_GPU_METRICS")}
    cuda = dict(con.execute("SELECT gpuId, cudaId FROM TARGET_INFO_CUDA_DEVICE"))
    series = {}
    for ts, t, m, v in con.execute("SELECT timestamp, typeId, metricId, value FROM GPU_METRICS ORDER BY rowid"):
        gpu = t & 0xFF
        dev = cuda.get(gpu, gpu)
        series.setdefault((dev, names[(t, m)]), []).append((ts, float(v)))
    for k in series:
        series[k].sort(key=lambda p: p[0])
        if k[1].endswith("[MHz]") and max(v for _, v in series[k]) >= 1e5:
            series[k] = [(t, v / 1e6) for t, v in series[k]]
    steps = []
    for text in step_texts:
        steps += [(text, s, e) for s, e in con.execute("SELECT start, end FROM NVTX_EVENTS WHERE text = ?", (text,))]
    steps.sort(key=lambda s: s[1])
    out = {"devices": {}}
    for dev in sorted({d for d, _ in series}):
        ops = []
        present = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        for table in ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"):
            if table not in present:
                continue
            ops += con.execute(f"SELECT start, end FROM {table} WHERE deviceId = ?", (dev,)).fetchall()
        a, b = min(s for s, _ in ops), max(e for _, e in ops)
        d = {"window": [a, b], "metrics": {}, "steps": {}, "kernels": {}}
        for (sdev, name), pts in sorted(series.items()):
            if sdev != dev:
                continue
            inside = [v for t, v in pts if a <= t < b]
            if inside:
                d["metrics"][name] = summary(inside)
            for text, s, e in steps:
                vals = [v for t, v in pts if s <= t < e]
                if vals:
                    d["steps"].setdefault(text, {})[name] = summary(vals)
        # periods of SMs Active
        sms = series[(dev, "SMs Active [Throughput %]")]
        gaps = sorted(sms[i + 1][0] - sms[i][0] for i in range(len(sms) - 1))
        med = gaps[len(gaps) // 2]
        periods = [(sms[i][0], sms[i + 1][0] if i + 1 < len(sms) else sms[i][0] + med, sms[i][1]) for i in range(len(sms))]
        kernels = con.execute(
            "SELECT k.start, k.end, s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.demangledName "
            "WHERE k.deviceId = ?", (dev,)).fetchall()
        ku = []
        for s, e in union([(s, e) for s, e, _ in kernels]):
            if ku and s - ku[-1][1] < 2000:
                ku[-1][1] = max(ku[-1][1], e)
            else:
                ku.append([s, e])
        busy = low = 0
        per_step = {}
        runs = []
        for i, (s, e, v) in enumerate(periods):
            if e > s and covered(ku, s, e) >= 0.9 * (e - s):
                busy += e - s
                inside = [t for t, a, b in steps if a <= s < b]
                for t in inside:
                    per_step.setdefault(t, {"busy_ns": 0, "low_ns": 0})["busy_ns"] += e - s
                if v < 50:
                    low += e - s
                    for t in inside:
                        per_step[t]["low_ns"] += e - s
                    if runs and runs[-1][1] == i - 1:
                        runs[-1][1] = i
                    else:
                        runs.append([i, i])
        runs.sort(key=lambda r: (-(periods[r[1]][1] - periods[r[0]][0]), r[0]))
        stretches = []
        for i, j in runs[:5]:
            a, b = periods[i][0], periods[j][1]
            kin = {}
            for ks, ke, n, grid in con.execute(
                    "SELECT k.start, k.end, s.value, k.gridX * k.gridY * k.gridZ FROM CUPTI_ACTIVITY_KIND_KERNEL k "
                    "JOIN StringIds s ON s.id = k.demangledName WHERE k.deviceId = ? AND k.start < ? AND k.end > ?",
                    (dev, b, a)):
                o = min(ke, b) - max(ks, a)
                if o > 0:
                    tot, best, g = kin.get(n, (0, 0, None))
                    kin[n] = (tot + o, max(best, o), grid if o > best else g)
            name = min(kin, key=lambda n: (-kin[n][0], n)) if kin else None
            stretches.append({"start_ns": a, "end_ns": b, "samples": j - i + 1,
                              "sms_active": statistics.fmean(periods[k][2] for k in range(i, j + 1)),
                              "kernel": name, "kernel_ns": kin[name][0] if name else 0,
                              "grid_blocks": kin[name][2] if name else None})
        d["busy_not_working"] = {"busy_ns": busy, "low_ns": low, "steps": per_step, "stretches": stretches}
        by_name = {}
        for s, e, n in kernels:
            if e > s:
                by_name.setdefault(n, []).append((s, e))
        top = sorted(by_name.items(), key=lambda kv: (-sum(e - s for s, e in kv[1]), kv[0]))[:3]
        for n, ivs in top:
            w = sum_wv = 0
            for ks, ke in ivs:
                for s, e, v in periods:
                    o = min(e, ke) - max(s, ks)
                    if o > 0:
                        w += o
                        sum_wv += o * v
            d["kernels"][n] = {"gpu_ns": sum(e - s for s, e in ivs), "count": len(ivs), "sms_active": sum_wv / w}
        out["devices"][str(dev)] = d
    out["samples"] = sum(len(p) for p in series.values())
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    print()


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2:])
