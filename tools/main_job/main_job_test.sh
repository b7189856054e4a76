#!/usr/bin/env bash
# Runs the main job into a temporary folder and checks it wrote its artifacts.
set -euo pipefail
out="${TEST_TMPDIR}/out"
tools/main_job/main_job --out "$out"
for f in gpt_block.txt gpt_block.prims.txt gpt_block.schedule.pb report.pb; do
  [ -s "$out/$f" ] || { echo "missing artifact $f"; exit 1; }
done
# The captured graph holds aten ops, the prims graph only prims and externs.
grep -q "aten.layer_norm" "$out/gpt_block.txt"
if grep -E "= aten\.[a-z_]+\(" "$out/gpt_block.prims.txt" | grep -vqE "aten\.(mm|bmm|convolution)\("; then
  echo "the prims graph still has aten ops"; exit 1
fi
