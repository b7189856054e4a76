#!/usr/bin/env bash
# Runs the main job into a temporary folder and checks it wrote its artifacts.
set -euo pipefail
out="${TEST_TMPDIR}/out"
tools/main_job/main_job --out "$out"
for f in decoder_block.txt decoder_block.pb report.pb; do
  [ -s "$out/$f" ] || { echo "missing artifact $f"; exit 1; }
done
grep -q "aten.scaled_dot_product_attention" "$out/decoder_block.txt"
