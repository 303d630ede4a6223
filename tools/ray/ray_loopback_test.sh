#!/bin/bash
# The Ray driver on a real local Ray cluster on loopback (`ray start --head`, two worker
# processes): 16 ranks scaled from the real DDP pair (copies with distributedInfo.rank
# renumbered 0..15), summarized as Ray tasks, merged, and compared with the same 16 summarized
# locally in one `strobe summarize`: the two `strobe report DIR --json` must be identical.
#
#   STROBE=target/debug/strobe PYTHON=/path/to/venv/bin/python tools/ray/ray_loopback_test.sh
# Needs `pip install ray` in PYTHON's environment.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
strobe="$(realpath "${STROBE:-$root/target/debug/strobe}")"
py="${PYTHON:-python3}"
ray="$(dirname "$py")/ray"
work="$(mktemp -d)"
trap '"$ray" stop --force >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
"$py" - "$root/sample-traces" "$work/traces" <<'PY'
import gzip, json, os, sys
src, out = sys.argv[1], sys.argv[2]
os.makedirs(out)
for r in range(16):
    with gzip.open(os.path.join(src, f"ddp_rank{r % 2}.json.gz"), "rt") as f:
        t = json.load(f)
    t.setdefault("distributedInfo", {})["rank"] = r
    t["distributedInfo"]["world_size"] = 16
    with gzip.open(os.path.join(out, f"scaled_rank{r}.json.gz"), "wt") as f:
        json.dump(t, f)
PY
"$ray" start --head --num-cpus=2 --port=6399 --include-dashboard=false --disable-usage-stats >/dev/null
"$py" "$root/tools/ray/strobe_ray.py" --address 127.0.0.1:6399 --strobe "$strobe" --out "$work/ray" "$work"/traces/*.json.gz
"$strobe" --cache-dir "$work/cache" summarize "$work"/traces/*.json.gz -o "$work/local"
n_ray=$(ls "$work/ray"/*.rank.parquet | wc -l)
[ "$n_ray" = 16 ] || { echo "FAIL: $n_ray summaries from Ray, expected 16"; exit 1; }
"$strobe" report "$work/ray" --json > "$work/ray.json"
"$strobe" report "$work/local" --json > "$work/local.json"
cmp "$work/ray.json" "$work/local.json" || { echo "FAIL: Ray and local summaries merge differently"; exit 1; }
"$py" -c "import json,sys; r=json.load(open(sys.argv[1])); assert [e['rank'] for e in r['ranks']]==list(range(16)), 'ranks'; assert r['collectives'], 'collectives'" "$work/ray.json"
echo "OK: 16 ranks summarized on Ray, merged identically to the local run"
