#!/usr/bin/env bash
# Regenerates docs/conformance.md from a run of `coil conformance` (optimized build).
# Usage: bash tools/conformance_doc.sh
set -uo pipefail
cd "$(dirname "$0")/.."
bazel build --config=opt //tools/coil || exit 1
coil="$(bazel info --config=opt bazel-bin)/tools/coil/coil"
json=$(mktemp /tmp/coil_conformance.XXXXXX.json)
# Exit status 1 only means some test failed; the page lists them.
"$coil" conformance --suite all --backend reference --json "$json"
[ "$?" -le 1 ] || exit 1
/usr/bin/python3 tools/conformance_report.py "$json" \
  "bash tools/conformance_doc.sh   # = coil conformance --suite all --backend reference --json FILE; python3 tools/conformance_report.py FILE" \
  > docs/conformance.md
rm -f "$json"
echo "wrote docs/conformance.md"
