#!/usr/bin/env bash
# The CUDA AOT package: `coil compile --backend cuda --aot` writes DIR/NAME.coilcuda (NVRTC
# compiles the kernels; no GPU needed), cuda_package_runner loads it (or says it skipped: no
# CUDA driver here), a broken package is refused with the file named, and the runner links no
# LLVM, no NVRTC wrapper and no code generator (nm), while it does link the CUDA runtime.
set -uo pipefail
coil=tools/coil/coil
runner=tests/aot/cuda_package_runner
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
fails=0
pass() { echo "ok   $1"; }
fail() { echo "FAIL $1: $2"; fails=$((fails + 1)); }

out=$($coil compile tests/aot/mlp.ir --backend cuda --aot "$tmp/pkg" --name mlp 2>&1); status=$?
if [ "$status" -ne 0 ] && grep -qi 'nvrtc' <<<"$out"; then
  echo "skipped: NVRTC (the CUDA toolkit) is not on this machine: $out"
  exit 0
fi
[ "$status" -eq 0 ] && [ -s "$tmp/pkg/mlp.coilcuda" ] && pass compile_writes_package ||
  fail compile_writes_package "status $status: $out"
out=$($runner "$tmp/pkg/mlp.coilcuda" 2>&1); status=$?
[ "$status" -eq 0 ] && grep -qE '^(loaded|skipped: .*no CUDA driver)' <<<"$out" && pass "runner ($out)" ||
  fail runner "status $status: $out"
printf 'garbage' > "$tmp/bad.coilcuda"
out=$($runner "$tmp/bad.coilcuda" 2>&1); status=$?
[ "$status" -eq 1 ] && grep -q 'bad.coilcuda: not a CUDA package' <<<"$out" && pass bad_package ||
  fail bad_package "status $status: $out"
syms=$(nm -C --defined-only "$runner")
grep -qE 'llvm::' <<<"$syms" && fail runner_links_no_llvm "$(grep -E 'llvm::' <<<"$syms" | head -2)" ||
  pass runner_links_no_llvm
grep -qE 'coil::codegen_cuda|coil::nvrtc|Nvrtc' <<<"$syms" &&
  fail runner_links_no_codegen "$(grep -E 'coil::codegen_cuda|coil::nvrtc|Nvrtc' <<<"$syms" | head -2)" ||
  pass runner_links_no_codegen
grep -q 'coil::cuda::CudaExecutable::Create' <<<"$syms" && pass runner_links_cuda_runtime ||
  fail runner_links_cuda_runtime "no coil::cuda::CudaExecutable::Create"
[ "$fails" -eq 0 ]
