#!/usr/bin/env bash
# The main job: installs what is missing, builds coil, and takes real networks through every
# stage that exists today, checking each against an independent oracle:
#  1. a GPT-style decoder block + LM head written with coil's C++ API: captured by
#     coil::compile (automatic dynamic batch), decomposed into prims, scheduled by inductor
#     (fusion + memory plan), run by the Schedule interpreter and compiled by the CPU backend
#     (LLVM + runtime/cpu), each checked on every run against the float64 reference
#     interpreter and against eager execution;
#  2. torchvision resnet18 and mobilenet_v2, a TransformerEncoder and a GPT-style decoder,
#     exported by Debian's torch 1.13 to ONNX (random weights, dynamic batch): imported by
#     coil, decomposed and scheduled by inductor, run at batch 1 and 3 by the Schedule
#     interpreter, compared with torch's own outputs; each schedule's summary is printed.
# Artifacts land in out/: graphs (.pb and text IR), report.pb, the imported models.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
bazel build --config=opt //tools/main_job:main_job //tools/coil:coil
bin=$(bazel info --config=opt bazel-bin)

"$bin/tools/main_job/main_job" --out out

echo
echo "real models: torch 1.13 -> ONNX -> coil import -> prims -> inductor -> Schedule interpreter, vs torch"
rm -rf out/models && mkdir -p out/models
for model in resnet18 mobilenet_v2 transformer_encoder gpt; do
  dir="out/models/$model"
  mkdir -p "$dir"
  /usr/bin/python3 tests/real_models/export_models.py "$model" "$dir" >"$dir.export.log" 2>&1 \
    || { cat "$dir.export.log"; exit 1; }
  # The conformance runner's layout: test_data_set_N/{input,output}_K.pb.
  mv "$dir/batch_1" "$dir/test_data_set_0"
  mv "$dir/batch_3" "$dir/test_data_set_1"
  "$bin/tools/coil/coil" import "$dir/model.onnx" -o "out/$model.pb"
  "$bin/tools/coil/coil" schedule "out/$model.pb" -o "out/$model.schedule.pb" | sed -n 1p
done
# Whole-network outputs: rtol 1e-3 with an absolute floor of 1e-5 (softmax outputs near 0).
"$bin/tools/coil/coil" conformance --dir out/models --verbose --atol 1e-5 --backend schedule
