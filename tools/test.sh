#!/usr/bin/env bash
# Runs every coil test once and ends with one line "N passed, N failed" counting test cases.
#
# Two runs, each test in exactly one of them:
# - under AddressSanitizer + UndefinedBehaviorSanitizer (--config=asan): the tests of the code
#   that reads outside bytes and manages memory itself, i.e. the stages' own packages (ir,
#   runtime, the ONNX importer, prims, inductor, inspector_web/core) and every fuzzer's
#   regression test, except tests that link LLVM (LLVM itself is not instrumented; linking
#   ~40 MB per binary twice was most of the ASan rebuild). .bazelrc's asan config leaves the
#   test files themselves at -O0 without UBSan (the code under test has both).
# - in the default configuration: every other test (capture's tracing tests, autograd, the
#   LLVM-linked code generator tests, the cross-stage suites under tests/, tools/).
# Running the sanitized tests a second time unsanitized found nothing the sanitized run misses
# and cost CI about 4 minutes of compiling and running (2,059 s in all at stop 22). With
# --no-asan every test runs in the default configuration.
# CI must finish in under 30 minutes on 2 cores; each phase's wall time is printed.
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

phase_start=$SECONDS
phases=()
end_phase() {  # end_phase NAME: records the wall time since the previous phase ended
  phases+=("$1 $((SECONDS - phase_start)) s")
  echo "test.sh: phase '$1' took $((SECONDS - phase_start)) s"
  phase_start=$SECONDS
}
end_phase setup

asan_targets=()
query_failed=0
if [ "$asan" -eq 1 ]; then
  stages='//ir/... + //runtime/... + //capture/onnx/... + //prims/... + //inductor/... + //inspector_web/core/...'
  # Query operators are left-associative with equal precedence: every group is parenthesized.
  # Large tests stay in the default run (the ASan run is for small and medium ones).
  query="attr(size, '^(small|medium)$', (kind('.*_test', $stages) + (kind('.*_test', //...:*) intersect attr(name, 'fuzzer_regression_test$', //...))) except rdeps(//..., @llvm//:llvm_static))"
  mapfile -t asan_targets < <(bazel query --keep_going "$query" 2>/dev/null | sort)
  echo "test.sh: ${#asan_targets[@]} test targets under ASan + UBSan"
  if [ ${#asan_targets[@]} -lt 20 ]; then
    echo "test.sh: the ASan target query found too few tests (${#asan_targets[@]}): $query"
    query_failed=1
  fi
fi
# The default run leaves out the sanitized tests (each test runs once).
excluded=()
for t in "${asan_targets[@]}"; do excluded+=("-$t"); done
bazel test "${common[@]}" "$@" -- //... "${excluded[@]}" 2>&1 | tee /tmp/coil_test_default.log
status=${PIPESTATUS[0]}
[ "$query_failed" -eq 1 ] && status=1
logs+=("$(bazel info "$@" bazel-testlogs 2>/dev/null)" /tmp/coil_test_default.log)
end_phase "default build + tests"

if [ "$asan" -eq 1 ]; then
  bazel test "${common[@]}" --config=asan --build_tests_only --test_size_filters=small,medium \
    "$@" -- "${asan_targets[@]}" 2>&1 | tee /tmp/coil_test_asan.log
  asan_status=${PIPESTATUS[0]}
  [ "$status" -eq 0 ] && status=$asan_status
  logs+=("$(bazel info --config=asan "$@" bazel-testlogs 2>/dev/null)" /tmp/coil_test_asan.log)
  end_phase "asan build + tests"
fi
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
