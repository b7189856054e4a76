#!/usr/bin/env bash
# Runs every coil test and ends with one line "N passed, N failed" counting test cases.
#
# Two runs: every test in the default configuration, then every small and medium test again
# under AddressSanitizer + UndefinedBehaviorSanitizer (--config=asan; the large suites, real
# models and ONNX conformance, run once: under ASan they take too long for a 2-core CI).
# Test cases are counted per run from Bazel's XML reports.
# Usage: tools/test.sh [--no-asan] [extra bazel test flags]
set -uo pipefail
cd "$(dirname "$0")/.."

asan=1
if [ "${1:-}" = "--no-asan" ]; then asan=0; shift; fi

bash tools/setup.sh || exit 1

# Fixed job counts: the machines have 2 cores; more local jobs only thrash.
common=(--jobs=2 --local_test_jobs=2 --test_output=errors)
logs=()

bazel test "${common[@]}" "$@" //... 2>&1 | tee /tmp/coil_test_default.log
status=${PIPESTATUS[0]}
logs+=("$(bazel info "$@" bazel-testlogs 2>/dev/null)" /tmp/coil_test_default.log)

if [ "$asan" -eq 1 ]; then
  bazel test "${common[@]}" --config=asan --build_tests_only --test_size_filters=small,medium \
    "$@" //... 2>&1 | tee /tmp/coil_test_asan.log
  asan_status=${PIPESTATUS[0]}
  [ "$status" -eq 0 ] && status=$asan_status
  logs+=("$(bazel info --config=asan "$@" bazel-testlogs 2>/dev/null)" /tmp/coil_test_asan.log)
fi

line=$(/usr/bin/python3 tools/count_tests.py "${logs[@]}")
counted=$?
# Bazel's own status wins: a build failure with no failing test report still counts as one
# failure, so the closing line never reads "0 failed" for a broken build.
if [ "$status" -ne 0 ] && [ "$counted" -eq 0 ]; then
  echo "bazel test exited with status $status (a build or infrastructure failure)"
  line="${line%%,*}, 1 failed"
  counted=1
fi
echo "$line"
exit "$counted"
