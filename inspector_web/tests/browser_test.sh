#!/usr/bin/env bash
# The inspector's browser test (size large): compiles a real model with `coil compile --dump`,
# serves the artifacts with `coil inspect`, and runs browser_test.js (Playwright + Debian's
# chromium) against them, an exported single file, bad files and a 5,000-node graph.
# Screenshots and server logs go to $TEST_UNDECLARED_OUTPUTS_DIR.
#
# usage: browser_test.sh COIL REPORT_TOOL BROWSER_TEST_JS   (from the runfiles root, where the
#        protoc-generated ir/proto/*_pb2.py modules are)
# Needs: /usr/bin/chromium (apt), playwright-core in inspector_web/node_modules (npm ci, as
# tools/setup.sh does), or in $COIL_NODE_MODULES; /usr/bin/python3 with torch and protobuf.
set -euo pipefail

coil=$(readlink -f "$1")
report_tool=$2
browser_js=$3

fail() { echo "browser test: $*" >&2; exit 1; }

[ -x /usr/bin/chromium ] || fail "/usr/bin/chromium is missing: run tools/setup.sh (apt-get install chromium)"
# node_modules is not a Bazel input: find it beside this script's source (runfiles link there).
src_dir=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
node_modules=${COIL_NODE_MODULES:-$(cd "$src_dir/.." && pwd)/node_modules}
[ -f "$node_modules/playwright-core/package.json" ] ||
  fail "playwright-core is missing from $node_modules: run tools/setup.sh (npm ci in inspector_web)"
command -v node > /dev/null || fail "node is missing"

tmp=${TEST_TMPDIR:-$(mktemp -d)}
out=${TEST_UNDECLARED_OUTPUTS_DIR:-$tmp/outputs}
mkdir -p "$out"
export HOME=$tmp  # chromium writes its crash and font caches under HOME

# 1. A real model: the GPT-style decoder exported by Debian's torch, compiled stage by stage.
/usr/bin/python3 tests/real_models/export_models.py gpt "$tmp/gpt" > "$out/export.log" 2>&1 ||
  { cat "$out/export.log"; fail "exporting the gpt model with torch failed"; }
COIL_CACHE=off "$coil" compile "$tmp/gpt/model.onnx" --dump "$tmp/artifacts" > "$out/compile.log" 2>&1 ||
  { cat "$out/compile.log"; fail "coil compile failed"; }
[ -s "$tmp/artifacts/report.pb" ] || fail "coil compile wrote no report.pb"

# The same model for the CUDA backend (NVRTC: no GPU needed), for kernels' launch configurations.
COIL_CACHE=off "$coil" compile "$tmp/gpt/model.onnx" --backend cuda --dump "$tmp/cuda_artifacts" \
  > "$out/compile_cuda.log" 2>&1 || { cat "$out/compile_cuda.log"; fail "coil compile --backend cuda failed"; }

# A training compile of the same model (--train: autograd's joint/forward/backward graphs with
# the saved values, then both graphs' stages).
COIL_CACHE=off "$coil" compile "$tmp/gpt/model.onnx" --train --dump "$tmp/train_artifacts" \
  > "$out/compile_train.log" 2>&1 || { cat "$out/compile_train.log"; fail "coil compile --train failed"; }

# 2. What the page must show, read independently with protoc's Python modules.
export PYTHONPATH=$PWD
/usr/bin/python3 "$report_tool" expect "$tmp/artifacts/report.pb" "$tmp/expect.json"
/usr/bin/python3 "$report_tool" expect "$tmp/cuda_artifacts/report.pb" "$tmp/expect_cuda.json"
mkdir -p "$tmp/big"
/usr/bin/python3 "$report_tool" big 5000 "$tmp/big/big.pb"
mkdir -p "$tmp/recompiled"
recompiled=$(/usr/bin/python3 "$report_tool" recompiled "$tmp/recompiled/report.pb")
# A second compile to compare with: the CUDA one, its schedule fused otherwise (report_tool.py split).
mkdir -p "$tmp/compare"
/usr/bin/python3 "$report_tool" split "$tmp/cuda_artifacts/report.pb" "$tmp/compare/cuda_split.pb"
/usr/bin/python3 "$report_tool" compare "$tmp/artifacts/report.pb" "$tmp/compare/cuda_split.pb" \
  "$tmp/compare/expect.json"
train_saved=$(/usr/bin/python3 "$report_tool" saved "$tmp/train_artifacts/report.pb")
mkdir -p "$tmp/big_named"
/usr/bin/python3 "$report_tool" big 5000 "$tmp/big_named/big_named.pb" named

# 3. Bad input: a truncated report, a foreign protobuf (an ONNX model) and a text file.
mkdir -p "$tmp/bad"
size=$(stat -c %s "$tmp/artifacts/report.pb")
head -c $((size / 2)) "$tmp/artifacts/report.pb" > "$tmp/bad/truncated.pb"
cp "$tmp/gpt/model.onnx" "$tmp/bad/model_onnx.pb"
printf 'this is a text file, not a protobuf\n' > "$tmp/bad/notes.pb"
# The message must say what is wrong, as in "report.pb: not a coil protobuf (truncated at ...)".
bad_files=$(printf '[{"file": "%s", "pattern": "truncat"}, {"file": "%s", "pattern": "not a coil"}, {"file": "%s", "pattern": "not a coil"}]' \
  "$tmp/bad/truncated.pb" "$tmp/bad/model_onnx.pb" "$tmp/bad/notes.pb")

# 4. Single stage files (a Graph, a Schedule), as `coil compile --dump` writes beside report.pb.
single_files=$(printf '[{"file": "%s", "count": %d}, {"file": "%s", "count": %d}]' \
  "$tmp/artifacts/01_import.pb" "$(/usr/bin/python3 "$report_tool" count graph "$tmp/artifacts/01_import.pb")" \
  "$tmp/artifacts/03_inductor.schedule.pb" \
  "$(/usr/bin/python3 "$report_tool" count schedule "$tmp/artifacts/03_inductor.schedule.pb")")

# 5. The single file to share: without the weights, unless --with-weights.
"$coil" inspect "$tmp/artifacts" --export "$tmp/exported.html" 2> "$out/export_html.log" ||
  { cat "$out/export_html.log"; fail "coil inspect --export failed"; }
"$coil" inspect "$tmp/artifacts" --export "$tmp/exported_weights.html" --with-weights \
  2> "$out/export_weights.log" || { cat "$out/export_weights.log"; fail "--with-weights failed"; }
light=$(/usr/bin/python3 "$report_tool" weights "$tmp/exported.html")
heavy=$(/usr/bin/python3 "$report_tool" weights "$tmp/exported_weights.html")
full=$(/usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["weight_bytes"])' "$tmp/expect.json")
[ "$light" = 0 ] || fail "the export embeds $light bytes of weights (want 0 without --with-weights)"
[ "$heavy" = "$full" ] && [ "$full" -gt 0 ] ||
  fail "the --with-weights export embeds $heavy bytes of weights (the report holds $full)"
echo "ok   export leaves out $full bytes of weights ($(stat -c %s "$tmp/exported.html") vs" \
  "$(stat -c %s "$tmp/exported_weights.html") bytes with --with-weights)"

# 6. The browser.
COIL=$coil ARTIFACTS=$tmp/artifacts EXPECT=$tmp/expect.json EXPORT_HTML=$tmp/exported.html \
  CUDA_ARTIFACTS=$tmp/cuda_artifacts CUDA_EXPECT=$tmp/expect_cuda.json \
  TRAIN_ARTIFACTS=$tmp/train_artifacts TRAIN_SAVED=$train_saved \
  COMPARE_B=$tmp/compare/cuda_split.pb COMPARE_EXPECT=$tmp/compare/expect.json \
  RECOMPILED=$tmp/recompiled/report.pb RECOMPILED_EXPECT=$recompiled \
  BIG=$tmp/big/big.pb BIG_NODES=5000 BIG_NAMED=$tmp/big_named/big_named.pb BAD_FILES=$bad_files \
  SINGLE_FILES=$single_files OUT=$out \
  PAGE_BUDGET_BYTES=3000000 BIG_BUDGET_MS=2000 NODE_PATH=$node_modules \
  node "$browser_js"
