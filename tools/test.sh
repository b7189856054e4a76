#!/usr/bin/env bash
# Runs every coil test and ends with one line "N passed, N failed" counting test cases.
# Usage: tools/test.sh [extra bazel test flags, e.g. --config=asan]
set -uo pipefail
cd "$(dirname "$0")/.."

bash tools/setup.sh

# Fixed job count: the machines are 2-core; more local jobs only thrash.
bazel test --jobs=2 --local_test_jobs=2 --test_output=errors "$@" //... 2>&1 | tee /tmp/coil_test.log
status=${PIPESTATUS[0]}

/usr/bin/python3 tools/count_tests.py "$(bazel info "$@" bazel-testlogs 2>/dev/null)" /tmp/coil_test.log
counted=$?
# Bazel's own status wins (a build failure counts as failed even with no test report).
if [ "$status" -ne 0 ] && [ "$counted" -eq 0 ]; then
  echo "bazel test exited with status $status"
  exit "$status"
fi
exit "$counted"
