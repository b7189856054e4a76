#!/bin/bash
# Builds what tools/cuda_gpu_job.sh runs on the GPU machine and packs it into DIR (default .gpu,
# which .git/info/exclude should ignore): portable opt binaries (coil, cuda_gpu_test,
# cuda_run_modes_gpu_test, cuda_division_gpu_test, cuda_attention_gpu_test, training_cuda_test with its torch 1.13 data) compressed with zstd,
# Debian's ONNX conformance data, and Debian's static zstd to unpack them there.
#
#   tools/cuda_gpu_pack.sh [DIR]      then: device run --carry DIR  tools/cuda_gpu_job.sh DIR
# COIL_OUTPUT_BASE=/root/.cache/bazel_portable builds in that output base (its own server), so
# that the portable configuration does not evict the shared server's analysis cache.
# COIL_PACK_JOBS=1 builds with one job (beside another build or a test run).
set -eu
DIR=${1:-.gpu}
DIR=$(mkdir -p "$DIR" && cd "$DIR" && pwd)
cd "$(dirname "$0")/.."
B="bazel ${COIL_OUTPUT_BASE:+--output_base=$COIL_OUTPUT_BASE}"
$B build --jobs=${COIL_PACK_JOBS:-2} --config=opt --config=portable //tools/coil:coil //tests/cuda:cuda_gpu_test \
  //tests/cuda:cuda_run_modes_gpu_test //tests/cuda:cuda_division_gpu_test //tests/cuda:cuda_attention_gpu_test //tools/driver:training_cuda_test
# bazel-bin may point at another output base: ask Bazel where this build's outputs are.
BIN=$($B info --config=opt --config=portable bazel-bin)
# A staging folder of this pack's own: packs made at the same time must not mix their files.
STAGE=$(mktemp -d /tmp/cuda_gpu_bin.XXXXXX) && trap 'rm -rf "$STAGE"' EXIT && mkdir -p "$STAGE/lib"
cp -f "$BIN/tools/coil/coil" "$BIN/tests/cuda/cuda_gpu_test" "$BIN/tests/cuda/cuda_attention_gpu_test" \
  "$BIN/tests/cuda/cuda_run_modes_gpu_test" "$BIN/tests/cuda/cuda_division_gpu_test" \
  "$BIN/tools/driver/training_cuda_test" \
  "$BIN"/tools/driver/training_{mlp,optim,cnn}.txt "$STAGE"/
# Test binaries link their libraries dynamically (the _solib_k8 ones are the project's own).
ldd "$BIN/tests/cuda/cuda_gpu_test" "$BIN/tests/cuda/cuda_attention_gpu_test" \
  "$BIN/tests/cuda/cuda_run_modes_gpu_test" "$BIN/tests/cuda/cuda_division_gpu_test" \
  "$BIN/tools/driver/training_cuda_test" |
  awk '/_solib_k8/{print $3}' | sort -u | xargs -I{} cp -f {} "$STAGE"/lib/
tar -C "$STAGE" -cf - . | zstd -q -f -10 -T2 -o "$DIR/bin.tar.zst"
[ -f "$DIR/onnxdata.tar.zst" ] ||
  tar -C /usr/share/libonnx-testdata/data -cf - node pytorch-converted pytorch-operator simple |
  zstd -q -f -10 -T2 -o "$DIR/onnxdata.tar.zst"
cp -f "$(command -v zstd)" "$DIR/zstd"
du -sh "$DIR"/*
