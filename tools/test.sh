#!/usr/bin/env bash
# Runs every coil test once and ends with one line "N passed, N failed" counting test cases.
#
# One run, in the sanitized configuration (--config=asan, .bazelrc): AddressSanitizer in every
# file, UndefinedBehaviorSanitizer on the library code of the stages that read outside bytes or
# manage memory themselves (ir, runtime, the ONNX importer, prims, inductor, the inspector's
# core), every fuzzer's regression corpus included. Until stop 28 the stages' tests ran in a
# second, sanitized phase that compiled ~300 files a second time (1,033 of CI's 2,474 s); one
# configuration compiles each file once.
# With --no-asan the tests run in the default configuration instead.
# CI must finish in under 30 minutes on 2 cores; the wall time is printed.
# Test cases are counted from Bazel's XML reports.
# Usage: tools/test.sh [--no-asan] [extra bazel test flags]
set -uo pipefail
cd "$(dirname "$0")/.."

config=(--config=asan)
if [ "${1:-}" = "--no-asan" ]; then config=(); shift; fi

bash tools/setup.sh || exit 1

# Fixed job counts: the machines have 2 cores; more local jobs only thrash.
common=(--jobs=2 --local_test_jobs=2 --test_output=errors --keep_going)

phase_start=$SECONDS
phases=()
end_phase() {  # end_phase NAME: records the wall time since the previous phase ended
  phases+=("$1 $((SECONDS - phase_start)) s")
  echo "test.sh: phase '$1' took $((SECONDS - phase_start)) s"
  phase_start=$SECONDS
}
end_phase setup

bazel test "${common[@]}" "${config[@]}" "$@" -- //... 2>&1 | tee /tmp/coil_test.log
status=${PIPESTATUS[0]}
logs=("$(bazel info "${config[@]}" "$@" bazel-testlogs 2>/dev/null)" /tmp/coil_test.log)
end_phase "build + tests"
printf 'test.sh: %s\n' "${phases[@]}"

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
