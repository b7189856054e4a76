#!/bin/bash
# Packs what tools/cpu_peers_job.sh runs on the GPU machine's CPU into DIR (default .cpu_peers,
# which .git/info/exclude should ignore): the portable opt `coil` and the Debian shared libraries
# the CPU runtime loads at run time (oneDNN's libdnnl.so.2 and what it needs: libgomp, the
# OpenCL loader), compressed with zstd, and Debian's static zstd to unpack them there.
#
#   tools/cpu_peers_pack.sh [DIR]      then: device run --carry DIR  tools/cpu_peers_job.sh DIR
# COIL_OUTPUT_BASE=/root/.cache/bazel_portable builds in that output base (as cuda_gpu_pack.sh).
set -eu
DIR=${1:-.cpu_peers}
DIR=$(mkdir -p "$DIR" && cd "$DIR" && pwd)
cd "$(dirname "$0")/.."
B="bazel ${COIL_OUTPUT_BASE:+--output_base=$COIL_OUTPUT_BASE}"
$B build --jobs=2 --config=opt --config=portable //tools/coil:coil
BIN=$($B info --config=opt --config=portable bazel-bin)
# A directory of its own: two packs at once (helpers sharing a machine) must not mix files.
T=$(mktemp -d /tmp/cpu_peers_bin.XXXXXX) && trap 'rm -rf "$T"' EXIT && mkdir -p $T/lib
cp -f "$BIN/tools/coil/coil" $T/
strip $T/coil
for lib in libdnnl.so.2 libgomp.so.1 libOpenCL.so.1; do
  cp -fL "/usr/lib/x86_64-linux-gnu/$lib" $T/lib/
done
tar -C $T -cf - . | zstd -q -f -10 -T2 -o "$DIR/bin.tar.zst"
cp -f "$(command -v zstd)" "$DIR/zstd"
du -sh "$DIR"/*
