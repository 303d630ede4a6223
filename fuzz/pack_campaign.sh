#!/usr/bin/env bash
# Packs what fuzz/campaign.sh needs into DEST (default /work/main/.fuzzbin, the folder the
# device run carries): the release-built targets stripped of debug info and xz-packed, the
# seeds, regressions, dictionaries, libstdc++ and the script itself.
set -euo pipefail
cd "$(dirname "$0")"
dest=${1:-/work/main/.fuzzbin}
bin=target/x86_64-unknown-linux-gnu/release
rm -rf "$dest"; mkdir -p "$dest/lib" "$dest/.strip"
for t in $(cargo +nightly fuzz list); do
  strip --strip-debug -o "$dest/.strip/$t" "$bin/$t"
done
# one xz stream with a 64 MiB dictionary: the targets share most of their code, so it packs ~10x
tar -C "$dest/.strip" -cf - . | xz -9 >"$dest/bins.tar.xz"
rm -rf "$dest/.strip"
cp -r seeds regressions dicts campaign.sh "$dest/"
cp "$(ldconfig -p | awk '/libstdc\+\+\.so\.6 .*x86-64/ {print $NF; exit}')" "$dest/lib/libstdc++.so.6"
du -sh "$dest"; ls -la "$dest"
