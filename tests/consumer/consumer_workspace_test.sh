#!/usr/bin/env bash
# Builds tests/external_workspace (a separate Bazel workspace that depends on @coil through
# local_repository) with its own Bazel output base, runs its three one-stage programs, and
# checks from their symbols what they link: the prims and inductor programs no LLVM, no oneDNN,
# no CUDA and no reference interpreter; the ONNX importer program no LLVM.
#
# Tagged local + external (tests/consumer/BUILD): it runs Bazel itself, on the real source
# tree. The nested output base is $COIL_CONSUMER_OUTPUT_BASE, else in the test's temporary
# folder (a cold build: about 4 minutes on 2 cores, alone).
set -uo pipefail
root=$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)
ws="$root/tests/external_workspace"
scratch=${TEST_TMPDIR:-${TMPDIR:-/tmp}}
base=${COIL_CONSUMER_OUTPUT_BASE:-$scratch/bazel_coil_consumer}
data=/usr/share/libonnx-testdata/data
fails=0
passes=0
pass() { echo "ok   $1"; passes=$((passes + 1)); }
fail() { echo "FAIL $1: $2"; fails=$((fails + 1)); }

cd "$ws" || exit 1
# A short-lived server: nothing is left running after the test.
# Its own user root too, so that no HOME (or an unwritable one) is needed.
bazel_() {
  bazel --output_user_root="$scratch/bazel_user_root" --output_base="$base" --max_idle_secs=15 "$@"
}
if ! out=$(bazel_ build --jobs=2 //:all 2>&1); then
  echo "$out" | tail -40
  fail build "the consumer workspace does not build"
  echo "consumer_workspace_test: $passes passed, $fails failed"
  exit 1
fi
pass build
bin=$(bazel_ info bazel-bin 2>/dev/null)

# The programs work.
out=$("$bin/decompose_only" "$root/inductor/testdata/softmax_rows.txt" 2>&1)
if grep -q '= prims\.' <<<"$out" && ! grep -q '= aten\.softmax' <<<"$out"; then
  pass decompose_only_runs
else
  fail decompose_only_runs "$out"
fi
out=$("$bin/schedule_only" "$root/inductor/testdata/layer_norm_gelu.txt" 2>&1)
grep -qE '^[1-9][0-9]* kernels$' <<<"$out" && pass schedule_only_runs || fail schedule_only_runs "$out"
out=$("$bin/onnx_import_only" "$data/node/test_relu/model.onnx" 2>&1)
grep -q 'aten.relu' <<<"$out" && pass onnx_import_only_runs || fail onnx_import_only_runs "$out"
out=$("$bin/decompose_only" /nonexistent.txt 2>&1); status=$?
[ "$status" -ne 0 ] && pass bad_input_fails || fail bad_input_fails "status $status: $out"

# What they link. Demangled defined symbols; a pattern that matches names a forbidden library.
forbid() {  # forbid NAME BINARY REGEX WHAT
  local hits
  hits=$(nm -C --defined-only "$2" | grep -E -- "$3" | head -3)
  if [ -n "$hits" ]; then fail "$1" "$4 linked: $hits"; else pass "$1"; fi
}
llvm='llvm::|LLVM[A-Z][a-zA-Z]+\b'
dnnl='dnnl_|dnnl::'
cuda=' (cu[A-Z][A-Za-z]+|cublas[A-Za-z]*|cudnn[A-Za-z]*|nvrtc[A-Za-z]*)$|coil::cuda'
reference='coil::Interpret\(|coil::HostTensor::|RegisterReference'
for p in decompose_only schedule_only; do
  forbid "${p}_links_no_llvm" "$bin/$p" "$llvm" LLVM
  forbid "${p}_links_no_onednn" "$bin/$p" "$dnnl" oneDNN
  forbid "${p}_links_no_cuda" "$bin/$p" "$cuda" CUDA
  forbid "${p}_links_no_reference_interpreter" "$bin/$p" "$reference" "the reference interpreter"
done
forbid onnx_import_only_links_no_llvm "$bin/onnx_import_only" "$llvm" LLVM
# The patterns do match such names (they are not vacuous): demangled lines as nm prints them.
controls=$(printf '%s\n' "0000000000401000 T llvm::Module::Module(llvm::StringRef, llvm::LLVMContext&)" \
  "0000000000401000 T dnnl_primitive_execute" "0000000000401000 T cuLaunchKernel" \
  "0000000000401000 T coil::Interpret(coil::Graph const&, std::vector<coil::HostTensor> const&)")
for p in "$llvm" "$dnnl" "$cuda" "$reference"; do
  grep -qE -- "$p" <<<"$controls" && pass "pattern matches: $p" || fail "pattern matches nothing: $p" ""
done
echo "sizes: $(cd "$bin" && du -k decompose_only schedule_only onnx_import_only | awk '{printf "%s %d KiB; ", $2, $1}')"
echo "consumer_workspace_test: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
