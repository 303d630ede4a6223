#!/usr/bin/env bash
# The long campaign, on a machine with no Rust: built fuzz binaries, seeds and dictionaries
# packed by fuzz/pack_campaign.sh into one folder with this script; every target runs at
# once in libFuzzer fork mode (crashes, hangs and OOMs are saved and fuzzing goes on).
#
#   campaign.sh OUT SECONDS "target:workers target:workers ..."
#
# OUT gets results.tar.gz (each target's log, the last status line, crash artifacts) and
# corpus.tar.gz (the corpora grown, to continue from: put it beside this script as
# corpus-in.tar.gz for the next run).
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=$1 secs=$2 alloc=$3
cd "$here"
python3 - <<'PY'
import tarfile, os
tarfile.open("bins.tar.xz").extractall("bin")
if os.path.exists("corpus-in.tar.gz"):
    tarfile.open("corpus-in.tar.gz").extractall("work")
PY
# the binaries need libstdc++ (libFuzzer is C++): the carried copy only where there is none
ldconfig -p 2>/dev/null | grep -q 'libstdc++.so.6 ' || export LD_LIBRARY_PATH="$here/lib"
# no LeakSanitizer there: its ptrace stop-the-world is unreliable under gVisor; leaks are not the bar
export ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1
echo "cpus: $(nproc); $(uname -r); alloc: $alloc; ${secs}s"
mkdir -p logs
for spec in $alloc; do
  t=${spec%%:*} n=${spec##*:}
  mkdir -p "work/$t/corpus" "work/$t/artifacts"
  flags=() dirs=()
  [ -f "dicts/$t.dict" ] && flags+=("-dict=dicts/$t.dict")
  [ -d "regressions/$t" ] && dirs+=("regressions/$t")
  "bin/$t" -fork="$n" -ignore_crashes=1 -ignore_ooms=1 -ignore_timeouts=1 -detect_leaks=0 \
    -rss_limit_mb=2048 -timeout=10 -max_total_time="$secs" -print_final_stats=1 \
    -artifact_prefix="work/$t/artifacts/" "${flags[@]}" "work/$t/corpus" "seeds/$t" "${dirs[@]}" \
    >"logs/$t.log" 2>&1 &
done
wait
for spec in $alloc; do
  t=${spec%%:*} n=${spec##*:}
  last=$(grep -aE '^#[0-9]+: cov:' "logs/$t.log" | tail -1)
  echo "$t workers=$n ${secs}s :: $last :: artifacts $(ls "work/$t/artifacts" | wc -l)"
done | tee logs/summary.txt
python3 - "$out" <<'PY'
import tarfile, sys, os, glob
out = sys.argv[1]
with tarfile.open(os.path.join(out, "results.tar.gz"), "w:gz") as t:
    t.add("logs")
    for d in glob.glob("work/*/artifacts"):
        t.add(d)
with tarfile.open(os.path.join(out, "corpus.tar.gz"), "w:gz", compresslevel=6) as t:
    for d in glob.glob("work/*/corpus"):
        t.add(d, arcname=os.path.relpath(d, "work"))
for f in os.listdir(out):
    print(f, os.path.getsize(os.path.join(out, f)))
PY
