#!/bin/bash
# Records the GPU-only test inputs on the GPU machine (one H100/H200, PyTorch, Nsight Compute with
# its bundled nsys). Run from the repository root with .nsyslibs/ (libdw.so.1, libelf.so.1 from a
# Debian machine: the bundled QdstrmImporter needs them) and, for `ncu`, the reports to export in
# .gpu-carry/. Writes one tarball per part into $OUT.
#   tests/tools/record_gpu_session.sh PART...   (nsys = emit metrics ncuexport; torch = reduce
#   sync memory fr ncufull)
set -x
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=$PWD/.nsyslibs:$LD_LIBRARY_PATH
NCU_DIR=$(ls -d /opt/nvidia/nsight-compute/* | tail -1)
NSYS=$NCU_DIR/host/target-linux-x64
IMPORTER=$(ls $NCU_DIR/host/linux-desktop-*/QdstrmImporter | head -1)
REPO=$PWD
W=/tmp/rec; rm -rf $W; mkdir -p $W/out
nsys_record() { # name, nsys options..., -- command...
  local name=$1; shift
  local opts=(); while [ "$1" != "--" ]; do opts+=("$1"); shift; done; shift
  (cd $W && timeout 300 "$NSYS/nsys" profile --trace=cuda,nvtx --sample=none --cpuctxsw=none \
    --force-overwrite=true "${opts[@]}" -o $W/$name "$@" > $W/out/$name.log 2>&1)
  if [ ! -f $W/$name.nsys-rep ] && [ -f $W/$name.qdstrm ]; then
    "$IMPORTER" -i $W/$name.qdstrm >> $W/out/$name.log 2>&1
  fi
  "$NSYS/nsys" export --type sqlite --lazy=false --force-overwrite=true -o $W/out/$name.sqlite \
    $W/$name.nsys-rep >> $W/out/$name.log 2>&1
  tail -5 $W/out/$name.log; ls -la $W/out/$name.sqlite
}
parts=()
for p in "$@"; do case $p in
  nsys) parts+=(emit metrics ncuexport);; torch) parts+=(reduce sync memory fr ncufull);; *) parts+=($p);;
esac; done
for part in "${parts[@]}"; do case $part in
emit)
  nsys_record emit_nvtx_gpt --capture-range=cudaProfilerApi --capture-range-end=stop -- \
    python3 $REPO/tests/tools/record_emit_nvtx.py
  ;;
metrics)
  nsys_record metrics_graphs --gpu-metrics-devices=0 --gpu-metrics-frequency=1000 \
    --cuda-graph-trace=node --capture-range=cudaProfilerApi --capture-range-end=stop -- \
    python3 $REPO/tests/tools/record_metrics_graphs.py
  ;;
ncuexport)
  mkdir -p $W/out/ncu_exports
  for r in .gpu-carry/*.ncu-rep .gpu-carry/*.ncu-rep.gz; do
    [ -f "$r" ] || continue
    b=$(basename $r .gz); b=${b%.ncu-rep}
    if [[ $r == *.gz ]]; then gunzip -c $r > $W/$b.ncu-rep; else cp $r $W/$b.ncu-rep; fi
    N="$NCU_DIR/ncu --import $W/$b.ncu-rep --csv"
    $N --page details > $W/out/ncu_exports/$b.details.csv 2>&1
    $N --page details --print-details all --print-rule-details > $W/out/ncu_exports/$b.details_all_rules.csv 2>&1
    $N --page raw > $W/out/ncu_exports/$b.raw.csv 2>&1
    $N --page raw --print-units base > $W/out/ncu_exports/$b.raw_base.csv 2>&1
  done
  "$NCU_DIR/ncu" --version > $W/out/ncu_exports/ncu_version.txt
  ;;
sync)
  timeout 120 python3 tests/tools/record_sync_events.py $W/out/kineto_sync_events.json.gz > $W/out/sync_events.log 2>&1
  tail -3 $W/out/sync_events.log
  ;;
reduce)
  python3 -c "import torch;print(torch.__version__, torch.cuda.get_device_name())"
  grep -rl "pftrace" $(python3 -c 'import torch,os;print(os.path.dirname(torch.__file__))')/profiler | head
  timeout 240 python3 tests/tools/record_reduce_overhead.py $W/out/kineto_reduce_overhead.json.gz > $W/out/reduce_overhead.log 2>&1
  tail -5 $W/out/reduce_overhead.log
  ;;
memory)
  for spec in "adamw 8" "adamw 16" "sgd 8"; do set -- $spec
    timeout 120 python3 tests/tools/record_memory_categories.py $W/out/mem_$1_b$2 --opt $1 --batch $2 > $W/out/mem_$1_b$2.log 2>&1
    tail -3 $W/out/mem_$1_b$2.log
  done
  timeout 120 python3 tests/tools/record_memory_categories.py $W/out/kineto_profile_memory --kineto > $W/out/kineto_profile_memory.log 2>&1
  tail -3 $W/out/kineto_profile_memory.log
  ;;
fr)
  timeout 150 python3 tests/tools/record_flight_recorder.py $W/out/fr_nccl --fault none --backend nccl --world 1 > $W/out/fr_nccl.log 2>&1
  tail -5 $W/out/fr_nccl.log
  ;;
ncufull)
  # A --set full report of a few kernel kinds, for the occupancy / stall / rule sections.
  cat > $W/ncu_kernels.py <<'PY'
import torch
a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
x = torch.randn(64 * 1024 * 1024, device="cuda")
t = torch.zeros(256, device="cuda")
s = torch.randn(4096, 8192, device="cuda")
torch.cuda.synchronize()
a @ a; x.mul_(2.0); t.add_(1.0); torch.softmax(s, dim=-1); x[::7].sum()
torch.cuda.synchronize()
PY
  # Two reports: every section on three small kernels (PC-sampling stalls included), and every
  # section but the source counters (whose SASS makes reports large) on all of them.
  (cd $W && timeout 200 "$NCU_DIR/ncu" --set full --import-source no -k "regex:vectorized|SoftMax|reduce_kernel" \
    --launch-count 3 -f -o $W/out/ncu_full_h100 python3 $W/ncu_kernels.py > $W/out/ncu_full.log 2>&1)
  (cd $W && timeout 200 "$NCU_DIR/ncu" --set full --section "regex:^(?!SourceCounters).*" --import-source no \
    -f -o $W/out/ncu_nosource_h100 python3 $W/ncu_kernels.py > $W/out/ncu_nosource.log 2>&1)
  tail -3 $W/out/ncu_full.log $W/out/ncu_nosource.log
  for r in ncu_full_h100 ncu_nosource_h100; do
    N="$NCU_DIR/ncu --import $W/out/$r.ncu-rep --csv"
    $N --page details --print-details all --print-rule-details > $W/out/$r.details_all_rules.csv 2>&1
    $N --page raw > $W/out/$r.raw.csv 2>&1
  done
  ;;
esac; done
ls -la $W/out $W/out/*
(cd $W/out && tar czf $OUT/recordings.tar.gz .)
ls -la $OUT
