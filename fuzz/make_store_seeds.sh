#!/usr/bin/env bash
# Builds the store_reader seeds: real stores written by Strobe's own importers from a few
# small traces (the chrome and nsys seeds), so mutations start from valid caches.
# Run from the repository root after fuzz/make_seeds.py.
set -euo pipefail
out=fuzz/seeds/store_reader
rm -rf "$out"; mkdir -p "$out"
cargo build -q -p strobe-import --example write_store
for src in sample-traces/export_flows_v2_counters.json sample-traces/nesting_near_miss.json \
           sample-traces/perfetto_flow_events_json_v1.json fuzz/seeds/chrome_json/gpt_train.trim.json \
           fuzz/seeds/chrome_json/hta_nccl_data.trim.json fuzz/seeds/nsys_sqlite/nsys_fx_string_table.trim.sqlite \
           fuzz/seeds/nsys_sqlite/nsys_gpt_single.trim.sqlite; do
  name=$(basename "$src"); name=${name%.*}
  target/debug/examples/write_store "$src" "$out/$name.store"  # not .strobe: caches are git-ignored
done
ls -l "$out"
