#!/usr/bin/env bash
# Regenerates the independent expected figures in tests/expected/ from the
# traces in sample-traces/ (python3 >= 3.8, stdlib only).  Run from anywhere.
set -euo pipefail
cd "$(dirname "$0")/../.."

KINETO="gpt_train ddp_rank0 ddp_rank1 hta_nccl_data kineto_tbplugin_resnet50
        tracelens_mi300_resnet_act_checkpoint hta_sampled_rank0"
CHROME="catapult_flow.json catapult_main_thread_has_unclosed_slices.json
        speedscope_trace-event_simple-partial.json perfetto_flow_events_json_v1.json
        catapult_lthi_cats.json.gz nesting_near_miss.json gpt_train.json.gz ddp_rank0.json.gz"

for stem in $KINETO; do
  python3 tests/expected/kineto_expected.py "sample-traces/$stem.json.gz" \
    > "tests/expected/$stem.report.json"
  echo "tests/expected/$stem.report.json"
done
for file in $CHROME; do
  stem="${file%.gz}"; stem="${stem%.json}"
  python3 tests/expected/chrome_expected.py "sample-traces/$file" \
    > "tests/expected/$stem.chrome.json"
  echo "tests/expected/$stem.chrome.json"
done

# Memory snapshots: stdlib pickle with every global refused.
# Legacy layouts and the wrapped ring buffer: made by tests/tools/make_legacy_snapshots.py
# (mem_yiyi_legacy is a real torch 2.0-era snapshot).
for stem in mem_train mem_oom mem_frag mem_expandable_oom mem_silmont mem_cranberrii mem_frag_oom mem_cache_held_oom \
    mem_legacy_list mem_legacy_history mem_legacy_traces mem_cpp_line mem_train_wrapped mem_yiyi_legacy \
    mem_pools_synthetic; do
  python3 tests/expected/memory_expected.py "sample-traces/$stem.pickle" \
    > "tests/expected/$stem.memory.json"
  echo "tests/expected/$stem.memory.json"
done

# Nsight Compute CSV exports: per-launch SOL/roofline figures.
NCU="ncu_raw.csv ncu_details.csv ncu_xplacer_cfd_097K.log ncu_llmperf_details.csv
     ncu_llmperf_metrics.csv ncu_llmperf_section_occupancy.csv ncu_llmperf_section_roofline.csv
     ncu_llmperf_raw_error_only.csv"
for file in $NCU; do
  stem="${file%.*}"
  python3 tests/expected/ncu_expected.py "sample-traces/$file" > "tests/expected/$stem.ncu.json"
  echo "tests/expected/$stem.ncu.json"
done

# Per-op efficiency from recorded shapes.
python3 tests/expected/efficiency_expected.py sample-traces/gpt_train.json.gz > tests/expected/gpt_train.efficiency.json
echo "tests/expected/gpt_train.efficiency.json"
python3 tests/expected/nsys_emit_nvtx_expected.py sample-traces/nsys_emit_nvtx_gpt.sqlite > tests/expected/nsys_emit_nvtx_gpt.efficiency.json
python3 tests/expected/nsys_gpu_metrics_expected.py sample-traces/nsys_gpu_metrics_h100.sqlite \
  gemm_bf16 copy_bandwidth small_grids host_sleep graph_capture graph_replay > tests/expected/nsys_gpu_metrics_h100.gpu_metrics.json
python3 tests/expected/nsys_gpu_metrics_expected.py sample-traces/nsys_gpu_metrics_idle_sms.sqlite \
  one_block_spin small_grid_chain full_gemm elementwise_stream > tests/expected/nsys_gpu_metrics_idle_sms.gpu_metrics.json
echo "tests/expected/nsys_emit_nvtx_gpt.efficiency.json"

# Several ranks: alignment, collectives, rank-step table, stragglers; and trace diff.
python3 tests/expected/ranks_expected.py ranks sample-traces/ddp_rank0.json.gz sample-traces/ddp_rank1.json.gz \
  > tests/expected/ddp.ranks.json
python3 tests/expected/ranks_expected.py ranks sample-traces/hta_sampled_rank0.json.gz \
  sample-traces/hta_sampled_rank1.json.gz > tests/expected/hta_sampled.ranks.json
python3 tests/expected/ranks_expected.py diff sample-traces/ddp_rank0.json.gz sample-traces/ddp_rank1.json.gz \
  > tests/expected/ddp.diff.json
python3 tests/expected/steps_expected.py sample-traces/nsys_gpt_single.sqlite > tests/expected/nsys_gpt_single.steps.json
echo tests/expected/nsys_gpt_single.steps.json
echo tests/expected/ddp.ranks.json tests/expected/hta_sampled.ranks.json tests/expected/ddp.diff.json
python3 tests/expected/nsys_2proc_expected.py sample-traces/nsys_ddp_2proc.sqlite > tests/expected/nsys_ddp_2proc.json
python3 tests/expected/nvtx_gpu_expected.py sample-traces/gpt_train.json.gz forward backward optimizer > tests/expected/gpt_train.nvtx_gpu.json
for s in gpipe 1f1b; do
  python3 tests/expected/pipeline_expected.py tests/expected/pp4_$s.pipeline.json sample-traces/pp4_${s}_rank{0,1,2,3}.json.gz
  echo tests/expected/pp4_$s.pipeline.json
done

# The step-time attribution: one trace, a DDP pair, a pipeline, HTA's own sample trace.
python3 tests/expected/attribution_expected.py tests/expected/gpt_train.attribution.json sample-traces/gpt_train.json.gz
python3 tests/expected/attribution_expected.py tests/expected/hta_nccl_data.attribution.json sample-traces/hta_nccl_data.json.gz
python3 tests/expected/attribution_expected.py tests/expected/ddp.attribution.json sample-traces/ddp_rank{0,1}.json.gz
python3 tests/expected/attribution_expected.py tests/expected/pp4_1f1b.attribution.json sample-traces/pp4_1f1b_rank{0,1,2,3}.json.gz
echo "tests/expected/*.attribution.json"

# The Ops table (torch.profiler's key_averages) of Kineto traces.
for stem in gpt_train; do
  python3 tests/expected/ops_expected.py "sample-traces/$stem.json.gz" > "tests/expected/$stem.ops.json"
  echo "tests/expected/$stem.ops.json"
done

# Critical path per step (docs/critical_path.md).
for stem in gpt_train ddp_rank0; do
  python3 tests/expected/critical_path_expected.py "sample-traces/$stem.json.gz" \
    > "tests/expected/$stem.critical_path.json"
  echo "tests/expected/$stem.critical_path.json"
done

# process groups, peers, pipelines on real groups, collective bandwidth (logs in tests/expected/comm/)
python3 tests/expected/comm_expected.py tests/expected/comm.expected.json

# Flight-recorder dumps: one folder per recorded fault, a dump per rank.
for d in sample-traces/flight_recorder/*/; do
  name=$(basename "$d")
  python3 tests/expected/flight_recorder_expected.py "$d" > "tests/expected/fr_$name.flight_recorder.json"
  echo "tests/expected/fr_$name.flight_recorder.json"
done

# Perfetto protobuf traces: decoded with the `perfetto` package's protobuf classes
# (pip install perfetto protobuf; PYTHON names an interpreter that has them).
for stem in pftrace_torch_train pftrace_rocprof_style; do
  "${PYTHON:-python3}" tests/expected/pftrace_expected.py "sample-traces/$stem.pftrace" \
    > "tests/expected/$stem.pftrace.json"
  echo "tests/expected/$stem.pftrace.json"
done

# CUDA graphs: replays, nodes and captures of the two graph recordings
python3 tests/expected/cuda_graphs_expected.py
echo "tests/expected/cuda_graphs.expected.json"
