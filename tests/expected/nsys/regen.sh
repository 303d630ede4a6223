#!/usr/bin/env bash
# Regenerates tests/expected/nsys/<stem>.nsys.json from the nsys SQLite samples in
# sample-traces/ with figures.sql (python3 stdlib sqlite3). Run from anywhere.
set -euo pipefail
cd "$(dirname "$0")/../../.."
for f in sample-traces/nsys_*.sqlite; do  # the real exports and the nsys_fx_* fixtures
  stem="$(basename "$f" .sqlite)"
  python3 tests/expected/nsys/nsys_expected.py "$f" > "tests/expected/nsys/$stem.nsys.json"
  echo "tests/expected/nsys/$stem.nsys.json"
done
# headline, largest gaps and diagnostics: the real exports only (the fixtures vary the layout)
for stem in nsys_gpt_single nsys_fuser_h200 nsys_ddp_2proc nsys_extrap_concurrent nsys_pipit_saxpy_mpi nsys_uvmtorch_cpu_only; do
  python3 tests/expected/nsys/gaps_expected.py "sample-traces/$stem.sqlite" > "tests/expected/nsys/$stem.gaps.json"
  echo "tests/expected/nsys/$stem.gaps.json"
done
