#!/usr/bin/env bash
# The main job: installs what is missing, builds coil, and takes real networks through every
# stage that exists today, checking each against an independent oracle:
#  1. a GPT-style decoder block + LM head written with coil's C++ API: captured by
#     coil::compile (automatic dynamic batch), decomposed into prims, scheduled by inductor
#     (fusion + memory plan), run by the Schedule interpreter and compiled by the CPU backend
#     (LLVM + runtime/cpu), each checked on every run against the float64 reference
#     interpreter and against eager execution;
#  2. torchvision resnet18 and mobilenet_v2, a TransformerEncoder and a GPT-style decoder,
#     exported by Debian's torch 1.13 to ONNX (random weights, dynamic batch): compiled by
#     `coil compile` (import, prims, inductor, LLVM code generation, runtime/cpu; each stage
#     timed; checked against the Schedule interpreter), then run compiled at batch 1 and 3
#     and compared with torch's own outputs; the transformer's and GPT's every-stage
#     artifacts land in out/<model>/ (report.pb + one file per stage) for `coil inspect`;
#  3. training: the GPT-style decoder trained 40 AdamW steps through coil::compile against
#     torch 1.13's losses (tools/main_job/train_gpt.cc), with the activation bytes saved;
#  4. `coil bench cpu`: the same four models timed against torch 1.13 eager, memory-bound
#     kernels against a copy, resnet18's cold and warm compile (out/bench_cpu.json);
#  5. the CUDA backend: where a CUDA driver sees a GPU, the four models compiled by
#     `coil conformance --backend cuda` (NVRTC, runtime/cuda) against torch's outputs; elsewhere
#     one line saying why it was skipped. The GPU machine's own checks and benchmark (GPU tests,
#     conformance, compute-sanitizer, `coil bench cuda`) are tools/cuda_gpu_job.sh, which runs
#     from carried binaries (tools/cuda_gpu_pack.sh).
# Artifacts land in out/: graphs (.pb and text IR), report.pb, the imported models.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
bazel build --config=opt //tools/main_job:main_job //tools/main_job:train_gpt //tools/coil:coil
bin=$(bazel info --config=opt bazel-bin)

"$bin/tools/main_job/main_job" --out out

# Training: the GPT-style decoder trained 40 AdamW steps through coil::compile (joint graph,
# min-cut partition, compiled backward on the tape, compiled AdamW) from torch 1.13's initial
# weights, every step's loss beside torch's (fails beyond 1e-4 relative).
echo
echo "training: GPT-style decoder through coil::compile vs torch 1.13, 40 steps"
/usr/bin/python3 tests/training/gpt_training.py out/gpt_training.txt 40
"$bin/tools/main_job/train_gpt" out/gpt_training.txt

echo
echo "real models: torch 1.13 -> ONNX -> coil compile (import, prims, inductor, LLVM, runtime/cpu), vs torch"
rm -rf out/models && mkdir -p out/models
for model in resnet18 mobilenet_v2 transformer_encoder gpt; do
  dir="out/models/$model"
  mkdir -p "$dir"
  /usr/bin/python3 tests/real_models/export_models.py "$model" "$dir" >"$dir.export.log" 2>&1 \
    || { cat "$dir.export.log"; exit 1; }
  # The conformance runner's layout: test_data_set_N/{input,output}_K.pb.
  mv "$dir/batch_1" "$dir/test_data_set_0"
  mv "$dir/batch_3" "$dir/test_data_set_1"
  # Every stage's artifact for the inspector (coil inspect out/<model>); the CNNs' reports
  # would carry their 10-45 MB of weights four times over, so they are compiled and checked
  # against the Schedule interpreter without a dump.
  dump=()
  case "$model" in transformer_encoder|gpt) dump=(--dump "out/$model") ;; esac
  # The exported batch axis is symbolic with no size hint: --check runs at batch 2.
  "$bin/tools/coil/coil" compile "$dir/model.onnx" --check --dim batch=2 "${dump[@]}"
done
# Whole-network outputs of the compiled code against torch's own: rtol 1e-3 with an absolute
# floor of 1e-5 (softmax outputs near 0).
"$bin/tools/coil/coil" conformance --dir out/models --verbose --atol 1e-5 --backend cpu

# Timed against torch: the four models at batch 1 and 8 against Debian's torch 1.13 eager on
# the same threads and inputs, the fused pointwise chain and softmax against a copy, and
# resnet18's cold and warm compile (docs/benchmarks.md explains every row).
echo
echo "coil bench cpu: compiled CPU backend vs torch eager, bandwidth, compile times"
"$bin/tools/coil/coil" bench cpu --json out/bench_cpu.json

# The CUDA backend on the same four models, where this machine has a GPU (a driver that sees
# none, or no driver, is a one-line skip; any other failure fails the job).
echo
echo "cuda: the four models through coil's CUDA backend (NVRTC, runtime/cuda), vs torch"
if cuda_out=$("$bin/tools/coil/coil" conformance --dir out/models --verbose --atol 1e-5 \
    --backend cuda 2>&1); then
  echo "$cuda_out"
elif grep -qE "no CUDA driver|the CUDA driver" <<<"$cuda_out"; then
  echo "cuda: skipped: $(grep -m1 -oE "(no CUDA driver|the CUDA driver).*" <<<"$cuda_out")"
else
  echo "$cuda_out"
  exit 1
fi
