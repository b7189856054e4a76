#!/bin/bash
# Builds what tools/cuda_gpu_job.sh runs on the GPU machine and packs it into DIR (default .gpu,
# which .git/info/exclude should ignore): portable opt binaries (coil, cuda_gpu_test) compressed
# with zstd, Debian's ONNX conformance data, and Debian's static zstd to unpack them there.
#
#   tools/cuda_gpu_pack.sh [DIR]      then: device run --carry DIR  tools/cuda_gpu_job.sh DIR
set -eu
DIR=${1:-.gpu}
cd "$(dirname "$0")/.."
bazel build --jobs=2 --config=opt --config=portable //tools/coil:coil //tests/cuda:cuda_gpu_test
mkdir -p "$DIR"
for t in tools/coil/coil tests/cuda/cuda_gpu_test; do
  zstd -q -f -19 -T2 "bazel-bin/$t" -o "$DIR/$(basename "$t").zst"
done
tar -C /usr/share/libonnx-testdata/data -cf - node pytorch-converted pytorch-operator simple |
  zstd -q -f -19 -T2 -o "$DIR/onnxdata.tar.zst"
cp -f "$(command -v zstd)" "$DIR/zstd"
du -sh "$DIR"/*
