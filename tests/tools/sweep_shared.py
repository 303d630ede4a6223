#!/usr/bin/env python3
"""The foreign-file sweep over the shared traces (CI runs it when ../shared/traces
exists). Stdlib only.

Every file under TRACES_DIR goes through `strobe report --json`:
- exit 0 for every profile (3, a cut input, is a failure here: none of these files is cut);
- exit 2 only for files that are not profiles (README, manifest, an ncu log of only errors),
  with the file named, and for profiles of a format Strobe does not read yet (listed in
  NOT_READ_YET: they must get the same clear error naming the file, and are counted apart);
- chrome/Kineto traces: the GPU figures, top kernels and memory water level equal those of the
  independent oracle tests/expected/kineto_expected.py, run here on the same file;
- XSpace profiles (`.xplane.pb`): each GPU's kernels, copies and busy time equal those of
  tests/expected/xspace_expected.py.

usage: tests/tools/sweep_shared.py [TRACES_DIR (../shared/traces)] [STROBE (target/debug/strobe)]
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ORACLE = os.path.join(HERE, "..", "expected", "kineto_expected.py")
# not profiles: the data's own docs, and an ncu output holding only ==ERROR== lines
NOT_PROFILES = {"README.md", "manifest.json", "llm-perf-opt_outputs_2025-10-30_05-20-37_raw_error_only.csv"}
# profile formats Strobe does not read yet: a clear "unknown format" error naming the file is
# what a user gets today; add a suffix here for a format found in the shared traces before its
# importer exists
NOT_READ_YET = ()
GPU_KEYS = ["device", "window_ns", "busy_ns", "idle_ns", "compute_ns", "comm_ns", "memory_ns",
            "comm_overlapped_ns", "kernels", "memcpy", "memset"]


def xspace_expected(path):
    """tests/expected/xspace_expected.py's figures for one XSpace file."""
    sys.path.insert(0, os.path.join(HERE, "..", "expected"))
    import xspace_expected as x

    if path.endswith(".gz"):
        import gzip

        with tempfile.NamedTemporaryFile(suffix=".xplane.pb") as t:
            t.write(gzip.open(path).read())
            t.flush()
            return x.expect(t.name)
    return x.expect(path)


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "..", "..", "shared", "traces")
    strobe = sys.argv[2] if len(sys.argv) > 2 else "target/debug/strobe"
    files = sorted(os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs)
    failures, checked, not_read = [], 0, []
    with tempfile.TemporaryDirectory() as cache:
        for path in files:
            name = os.path.basename(path)
            p = subprocess.run([strobe, "report", path, "--json", "--cache-dir", cache],
                               capture_output=True, text=True)
            if name in NOT_PROFILES:
                if p.returncode != 2 or path not in p.stderr:
                    failures.append(f"{path}: not a profile, wanted exit 2 naming it, got {p.returncode}: {p.stderr[:200]}")
                continue
            if name.endswith(NOT_READ_YET):
                if p.returncode != 2 or path not in p.stderr:
                    failures.append(f"{path}: a format not read yet, wanted exit 2 naming it, got {p.returncode}")
                not_read.append(path)
                continue
            if p.returncode != 0:
                failures.append(f"{path}: exit {p.returncode}: {p.stderr[:300]}")
                continue
            got = json.loads(p.stdout)
            if name.endswith((".xplane.pb", ".xplane.pb.gz")) and got.get("format") == "xspace":
                want = xspace_expected(path)
                checked += 1
                if len(got["gpus"]) != len(want["gpus"]):
                    failures.append(f"{path}: {len(got['gpus'])} devices != oracle {len(want['gpus'])}")
                for g, w in zip(got["gpus"], want["gpus"]):
                    for k in ("device", "kernels", "memcpy", "busy_ns"):
                        if g[k] != w[k]:
                            failures.append(f"{path}: GPU {w['device']} {k} {g[k]} != oracle {w[k]}")
                continue
            if name.endswith((".json", ".json.gz")) and got.get("format") in ("kineto", "chrome"):
                want = json.loads(subprocess.run([sys.executable, ORACLE, path], capture_output=True,
                                                 text=True, check=True).stdout)
                checked += 1
                if got["events"] != want["events"]:
                    failures.append(f"{path}: events {got['events']} != oracle {want['events']}")
                for g, w in zip(got["gpus"], want["gpus"]):
                    for k in GPU_KEYS:
                        if g[k] != w[k]:
                            failures.append(f"{path}: GPU {w['device']} {k} {g[k]} != oracle {w[k]}")
                    if g.get("memory") != w.get("memory"):
                        failures.append(f"{path}: GPU {w['device']} memory {g.get('memory')} != oracle {w.get('memory')}")
                if len(got["gpus"]) != len(want["gpus"]):
                    failures.append(f"{path}: {len(got['gpus'])} devices != oracle {len(want['gpus'])}")
                for g, w in zip(got["top_kernels"], want["top_kernels"]):
                    if (g["name"], g["count"], g["total_ns"]) != (w["name"], w["count"], w["total_ns"]):
                        failures.append(f"{path}: top kernel {g['name'][:40]} differs from the oracle's {w['name'][:40]}")
                        break
    print(f"sweep: {len(files)} files under {root}, {checked} traces checked against the oracle, "
          f"{len(failures)} failure(s)")
    for f in not_read:
        print("  not read yet (a clear error naming the file):", f)
    for f in failures:
        print("  FAIL", f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
