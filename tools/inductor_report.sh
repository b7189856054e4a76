#!/usr/bin/env bash
# Prints the per-model inductor report (markdown rows for docs/inductor.md): kernels before and
# after fusion, estimated bytes moved vs unfused, arena size vs peak live memory and the size
# without reuse, for every real model of tests/real_models (exported by Debian's torch).
# Usage: tools/inductor_report.sh [MODEL...]   (sizes at the batch symbol's hint)
set -euo pipefail
cd "$(dirname "$0")/.."
bazel build -c opt //tools/coil >/dev/null 2>&1
coil=bazel-bin/tools/coil/coil
models=("$@")
if [ ${#models[@]} -eq 0 ]; then
  models=(resnet18 mobilenet_v2 transformer_encoder gpt efficientnet_b0 densenet121 googlenet
          mobilenet_v3_small shufflenet_v2_x0_5 squeezenet1_0 regnet_x_400mf mnasnet0_5
          resnext50_32x4d)
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "| model | kernels unfused -> fused (extern) | bytes moved unfused -> fused | arena | peak live | no reuse | schedule time |"
echo "|---|---|---|---|---|---|---|"
for m in "${models[@]}"; do
  OMP_NUM_THREADS=1 /usr/bin/python3 tests/real_models/export_models.py "$m" "$tmp/$m" >/dev/null 2>&1
  start=$(date +%s.%N)
  out=$($coil schedule "$tmp/$m/model.onnx")
  line=${out%%$'\n'*}
  end=$(date +%s.%N)
  # "schedule G: K kernels (E extern) from U unfused; bytes moved B (unfused BU); arena A, peak live P, without reuse N (...)"
  /usr/bin/python3 - "$m" "$line" "$start" "$end" <<'PY'
import re, sys
m, line, start, end = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
r = re.search(r": (\d+) kernels \((\d+) extern\) from (\d+) unfused; bytes moved (.+?) \(unfused (.+?)\); "
              r"arena (.+?), peak live (.+?), without reuse (.+?) \(", line)
k, e, u, b, bu, a, p, n = r.groups()
print(f"| {m} | {u} -> {k} ({e}) | {bu} -> {b} | {a} | {p} | {n} | {end - start:.2f} s |")
PY
done
