#!/bin/bash
# //inspector_web:page is one self-contained file within the size budget, with the DOM hooks
# the browser test and `coil inspect --export` rely on.
# Usage (Bazel): page_test.sh INDEX_HTML
set -euo pipefail
page=$1
budget=$((3 * 1024 * 1024))  # page + wasm under 3 MB (docs/inspector.md)
failed=0
fail() { echo "FAIL: $*"; failed=1; }

size=$(wc -c < "$page")
echo "index.html: $size bytes (budget $budget)"
[ "$size" -lt "$budget" ] || fail "index.html is $size bytes, over the $budget-byte budget"

# Self-contained: nothing fetched from elsewhere.
if grep -Eiq '<link[ >]|src="(https?:)?//|href="(https?:)?//|@import|url\((https?:)?//' "$page"; then
  fail "index.html references an external resource"
fi
# The wasm module is inlined once (emcc -sSINGLE_FILE=1).
n=$(grep -o 'wasmBinaryFile="data:application/octet-stream;base64,' "$page" | wc -l)
[ "$n" -eq 1 ] || fail "expected the inlined wasm module once, found $n"
# Inline scripts cannot have been cut short: every <script> has its </script>.
opens=$(grep -oi '<script[ >]' "$page" | wc -l)
closes=$(grep -oi '</script>' "$page" | wc -l)
[ "$opens" -eq "$closes" ] || fail "$opens <script> tags but $closes </script>"
# The empty embedded-report slot that --export fills, exactly once.
n=$(grep -c '<script id="coil-embedded" type="application/octet-stream" data-name="report.pb"></script>' "$page" || true)
[ "$n" -eq 1 ] || fail "expected one empty #coil-embedded script, found $n"
# `coil inspect --export` inserts the report before </body>: there must be exactly one.
n=$(grep -o '</body>' "$page" | wc -l)
[ "$n" -eq 1 ] || fail "expected one </body>, found $n"
# Elements the browser test and deep links use.
for id in graph-view node-details error stage-summary stage-diff kernel-source timings \
          stage-tabs file-input drop-zone; do
  grep -q "id=\"$id\"" "$page" || fail "no element #$id"
done
for hook in "stage-tab" "data-stage" "data-node-id" "data-node-count" "dataset.ready"; do
  grep -q "$hook" "$page" || fail "the page's scripts never mention $hook"
done
if [ "$failed" -eq 0 ]; then echo "page_test: ok"; fi
exit $failed
