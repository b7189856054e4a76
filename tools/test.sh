#!/usr/bin/env bash
# Runs every coil test once and ends with one line "N passed, N failed" counting test cases.
#
# Two runs, each test in exactly one of them:
# - under AddressSanitizer (every file) + UndefinedBehaviorSanitizer (the stages' library code)
#   (--config=asan, .bazelrc): the regression corpora of the fuzzers of outside bytes whose
#   code is small enough to build twice (the graph proto reader, the ONNX importer, the
#   Schedule interpreter), and every small or medium test of ir, runtime, capture/onnx and
#   inspector_web/core that needs no library those three fuzzers do not already build
#   (their parsers, readers and kernels).
# - in the default configuration: every other test.
# Where the time went (2-core VM, cold): stop 28's CI 2,474 s = default 1,432 + sanitized
# 1,033 (the sanitized run then covered every stage test: ~300 files compiled a second time).
# Every test under ASan in one configuration was measured too (2,373 s: the tests run about
# twice as slowly, which ate what compiling once saved); `bazel test --config=asan //...`
# runs that by hand. With --no-asan every test runs in the default configuration.
# Stop 40 (2-core AMD EPYC VM, cold, no Bazel cache): stop 39's CI took 3,131 s = default
# 2,624 + sanitized 493. A profiled cold `bazel build //...` (--profile): 2,460 s wall, 1,532
# actions, 4,311 s of compiling (~1,400 files, most 3-20 s: a typical test file preprocesses to
# ~220K lines, C++20 libstdc++ 87K of them, absl 17K, protobuf 15K, the ir protos' headers 19K;
# the front end is 2/3 of its time), 412 s linking (gold), 79 s of torch 1.13 genrules; one file
# is an outlier (runtime/cpu/internal/conv_direct_depthwise.cc, 161 s alone: its kernels compiled
# at -O3 for three ISAs). The tests add ~960 s of CPU (ONNX conformance through NVRTC 330 s, the
# CPU backend's 180 s, real models 160 s). A faster 2-core machine took 976 s (stop 38).
# Stop 41 (the same VM class): the compiler is clang 16 (.bazelrc): a cold `bazel build //...`
# 1,659 s (2,729 s of compiling, 402 s linking) against GCC's 2,460 s, the sanitized phase
# cold 317 s against 493 s; the conformance suites' pass-rate cases no longer run their whole
# suite again inside one shard (tests/onnx_conformance/unsupported.txt: ~230 s of test CPU).
# A cold clone's CI then took 2,811 s (default 2,410 + sanitized 401) against 3,295 s at stop 40.
# Stop 42 (same VM, relinking all of //... after a full build): gold 325 s of linking (370
# links), lld 254 s (-22%, ~35 s of CI wall: not adopted, it would add lld-16 and a linker flag
# that the fuzz configuration, on clang 14, must undo); fully static test binaries
# (--dynamic_mode=off) 380 s for 219 links, worse. CI stood at 2,722 s (stop 41's run). A cold
# clone of stop 42's 6b9527d on this VM: 36103 passed in 2,876 s (default 2,497 + sanitized 379).
# CI must finish in under 30 minutes on 2 cores; each phase's wall time is printed.
# Test cases are counted per run from Bazel's XML reports.
# Usage: tools/test.sh [--no-asan] [extra bazel test flags]
set -uo pipefail
cd "$(dirname "$0")/.."

asan=1
if [ "${1:-}" = "--no-asan" ]; then asan=0; shift; fi

bash tools/setup.sh || exit 1

# Fixed job counts: the machines have 2 cores; more local jobs only thrash.
common=(--jobs=2 --local_test_jobs=2 --test_output=errors --keep_going)
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
  fuzzers='//ir/fuzz:graph_fuzzer_regression_test + //capture/onnx/fuzz:onnx_fuzzer_regression_test + //runtime/fuzz:schedule_fuzzer_regression_test'
  stages='//ir/... + //runtime/... + //capture/onnx/... + //inspector_web/core/...'
  # Libraries the fuzzers do not build (test-only helpers and third_party aside): a test that
  # needs one stays in the default run. Query operators are left-associative with equal
  # precedence: every group is parenthesized. sym_expr_z3_test is arithmetic, not outside
  # bytes (60 s under ASan).
  other_libs="((kind('cc_library', //...) except //third_party/...) except attr(testonly, 1, //...)) except deps($fuzzers)"
  query="((attr(size, '^(small|medium)$', kind('.*_test', $stages)) except rdeps(//..., $other_libs)) + ($fuzzers)) except //ir:sym_expr_z3_test"
  mapfile -t asan_targets < <(bazel query --keep_going "$query" 2>/dev/null | sort)
  echo "test.sh: ${#asan_targets[@]} test targets under ASan + UBSan"
  if [ ${#asan_targets[@]} -lt 10 ]; then
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
  bazel test "${common[@]}" --config=asan --build_tests_only "$@" -- "${asan_targets[@]}" 2>&1 | tee /tmp/coil_test_asan.log
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
