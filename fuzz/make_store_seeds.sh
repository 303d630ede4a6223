#!/usr/bin/env bash
# Builds the store_reader seeds: real stores written by Strobe's own importers from a few
# small traces (the chrome and nsys seeds; the nsys ones are compressed, `strobe_store::codec`),
# so mutations start from valid caches. Run from the repository root after fuzz/make_seeds.py.
set -euo pipefail
out=fuzz/seeds/store_reader
rm -rf "$out"; mkdir -p "$out"
cargo build -q --release -p strobe
for src in sample-traces/export_flows_v2_counters.json sample-traces/nesting_near_miss.json \
           sample-traces/perfetto_flow_events_json_v1.json fuzz/seeds/chrome_json/gpt_train.trim.json \
           fuzz/seeds/chrome_json/hta_nccl_data.trim.json fuzz/seeds/nsys_sqlite/nsys_fx_string_table.trim.sqlite \
           fuzz/seeds/nsys_sqlite/nsys_gpt_single.trim.sqlite sample-traces/nsys_extrap_concurrent.sqlite; do
  name=$(basename "$src"); name=${name%.*}
  cache=$(mktemp -d)
  target/release/strobe --cache-dir "$cache" report "$src" > /dev/null
  cp "$cache"/*.strobe "$out/$name.store"  # not .strobe: caches are git-ignored
  rm -rf "$cache"
done
ls -l "$out"
