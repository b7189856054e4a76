#!/bin/bash
# The wasm module (emscripten, protobuf-lite) must produce byte for byte the JSON the native
# core (gcc, full protobuf) produces, for a pipeline report, each of its stages as a single
# file, and broken files: the native unit tests then vouch for what the page shows.
# Usage (Bazel): wasm_native_test.sh MAKE_TEST_REPORT INSPECT_JSON MODULE_JS WASM_JSON_JS
set -euo pipefail
make_report=$1 inspect_json=$2 module_js=$3 wasm_json=$4
node=/usr/bin/node
if [ ! -x "$node" ]; then
  echo "FAIL: $node is missing (install Debian's nodejs or NodeSource's node 20)" >&2
  exit 1
fi
dir=${TEST_TMPDIR:-$(mktemp -d)}
"$make_report" "$dir/report.pb"
head -c 1234 "$dir/report.pb" > "$dir/truncated.pb"
printf 'graph @g() {\n  return\n}\n' > "$dir/text_ir.txt"
: > "$dir/empty.pb"

files=("$dir/report.pb" "$dir/truncated.pb" "$dir/text_ir.txt" "$dir/empty.pb")
failed=0
for f in "${files[@]}"; do
  name=$(basename "$f")
  native_status=0 wasm_status=0
  "$inspect_json" "$f" --all > "$dir/$name.native" || native_status=$?
  "$node" "$wasm_json" "$module_js" "$f" > "$dir/$name.wasm" || wasm_status=$?
  if [ "$wasm_status" -gt 1 ]; then
    echo "FAIL: $name: the wasm module did not run (status $wasm_status)"
    failed=1
  elif [ "$native_status" != "$wasm_status" ] || ! cmp -s "$dir/$name.native" "$dir/$name.wasm"; then
    echo "FAIL: $name: wasm and native differ (status $wasm_status vs $native_status)"
    diff <(tr ',' '\n' < "$dir/$name.native") <(tr ',' '\n' < "$dir/$name.wasm") | head -20
    failed=1
  else
    echo "ok: $name: $(wc -l < "$dir/$name.native") documents, $(wc -c < "$dir/$name.native") bytes, identical"
  fi
done
# The report has every stage kind; make sure the comparison covered them.
for key in capture.0 autograd.joint prims inductor codegen_cpu; do
  grep -q "\"key\":\"$key\"" "$dir/report.pb.native" || { echo "FAIL: no stage $key"; failed=1; }
done
# ... and the comparison of the report with itself (core/compare.h).
grep -q '^{"ok":true,"a":"report.pb","b":"report.pb",' "$dir/report.pb.native" ||
  { echo "FAIL: report.pb: no comparison"; failed=1; }
grep -q '"error":"truncated.pb: not a coil protobuf (truncated at byte ' "$dir/truncated.pb.native" ||
  { echo "FAIL: truncated.pb: no truncation error"; failed=1; }
exit $failed
