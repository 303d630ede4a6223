#!/usr/bin/env bash
# Runs every fuzz target for SECONDS (default 30) from its committed seeds and fails on any
# crash, hang (-timeout=10) or allocation over 2 GB (-rss_limit_mb=2048). Used by .ci/run.
#
#   fuzz/smoke.sh [SECONDS] [PARALLEL]     (PARALLEL targets at a time, default 1)
#
# Builds once (cargo +nightly fuzz build -O, ASan), then runs the built binaries directly,
# each with -jobs=1. New inputs go to fuzz/corpus/<target>, crashes to fuzz/artifacts/<target>.
set -euo pipefail
cd "$(dirname "$0")"
secs=${1:-30}
par=${2:-1}
cargo +nightly fuzz build -O
bin=target/x86_64-unknown-linux-gnu/release
mkdir -p logs
run_one() {
  local t=$1 dict=() dirs=()
  mkdir -p "corpus/$t" "artifacts/$t"
  [ -f "dicts/$t.dict" ] && dict=("-dict=dicts/$t.dict")
  # inputs that once broke a reader stay in the seeds
  [ -d "regressions/$t" ] && dirs=("regressions/$t")
  if "$bin/$t" "corpus/$t" "seeds/$t" "${dirs[@]}" "${dict[@]}" -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 \
      -print_final_stats=1 -artifact_prefix="artifacts/$t/" >"logs/$t.log" 2>&1; then
    echo "fuzz $t: ok, $(grep -E '^stat::number_of_executed_units' "logs/$t.log" | awk '{print $2}') runs in ${secs}s"
  else
    echo "fuzz $t: FAILED (log fuzz/logs/$t.log, input under fuzz/artifacts/$t/)"
    tail -40 "logs/$t.log"
    return 1
  fi
}
failed=0
running=0
for t in $(cargo +nightly fuzz list); do
  run_one "$t" &
  running=$((running + 1))
  if [ "$running" -ge "$par" ]; then
    wait -n || failed=1
    running=$((running - 1))
  fi
done
while [ "$running" -gt 0 ]; do
  wait -n || failed=1
  running=$((running - 1))
done
exit "$failed"
