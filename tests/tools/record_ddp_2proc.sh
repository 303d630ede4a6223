#!/bin/bash
# Records sample-traces/nsys_ddp_2proc.sqlite on the GPU machine (see record_ddp_2proc.py).
# The nsys there comes with Nsight Compute; its QdstrmImporter needs libdw/libelf from
# .nsyslibs/ (copied from the build machine). Output goes to $OUT.
set -x
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=$PWD/.nsyslibs:$LD_LIBRARY_PATH
NSYS=$(ls -d /opt/nvidia/nsight-compute/*/host/target-linux-x64 2>/dev/null | head -1)
[ -n "$NSYS" ] || NSYS=$(dirname "$(find / -name nsys -type f -path '*target-linux-x64*' 2>/dev/null | head -1)")
echo "nsys dir: $NSYS"; ls "$NSYS" | head -50
cd /tmp
timeout 240 "$NSYS/nsys" profile --trace=cuda,nvtx --sample=none --cpuctxsw=none --force-overwrite=true \
  -o /tmp/ddp2 python3 $OLDPWD/tests/tools/record_ddp_2proc.py 2>&1 | tail -20
ls -la /tmp/ddp2* 
if [ ! -f /tmp/ddp2.nsys-rep ] && [ -f /tmp/ddp2.qdstrm ]; then
  "$NSYS/QdstrmImporter" -i /tmp/ddp2.qdstrm 2>&1 | tail -5; ls -la /tmp/ddp2*
fi
"$NSYS/nsys" export --type sqlite --force-overwrite=true -o /tmp/ddp2.sqlite /tmp/ddp2.nsys-rep 2>&1 | tail -5
ls -la /tmp/ddp2*
cp /tmp/ddp2.sqlite "$OUT/" 2>/dev/null
python3 -c "import torch;print(torch.__version__)"
