#!/usr/bin/env bash
# What a deployment links: the smallest //:coil_cpu program has no CUDA symbols, the smallest
# //:coil_cuda program no LLVM; both run. Prints each binary's size. (The CUDA runtime still
# links runtime/cpu's host externs, oneDNN through dlopen, for what has no GPU path yet.)
set -uo pipefail
cpu=tests/deployments/cpu_deployment
cuda=tests/deployments/cuda_deployment
fails=0
pass() { echo "ok   $1"; }
fail() { echo "FAIL $1: $2"; fails=$((fails + 1)); }
symbols() { nm -C --defined-only "$1"; }  # (read whole: grep -q would cut nm off mid-pipe)
forbid() {  # forbid NAME BINARY REGEX WHAT
  local hits
  hits=$(symbols "$2" | grep -E -- "$3" | head -3)
  if [ -n "$hits" ]; then fail "$1" "$4 linked: $hits"; else pass "$1"; fi
}
require() {  # require NAME BINARY REGEX WHAT: the control, so that forbid cannot pass vacuously
  local all
  all=$(symbols "$2")
  if grep -qE -- "$3" <<<"$all"; then pass "$1"; else fail "$1" "no $4 symbol found"; fi
}
llvm='llvm::'
cuda_syms='coil::cuda::|coil::codegen_cuda::'

out=$($cpu 2>&1); [ $? -eq 0 ] && grep -q '^ok' <<<"$out" && pass cpu_runs || fail cpu_runs "$out"
out=$($cuda 2>&1); status=$?
[ $status -eq 0 ] && grep -qE '^(ok|skipped)' <<<"$out" && pass "cuda_runs ($out)" || fail cuda_runs "$out"

forbid cpu_links_no_cuda "$cpu" "$cuda_syms" CUDA
require cpu_links_llvm "$cpu" "$llvm" LLVM
forbid cuda_links_no_llvm "$cuda" "$llvm" LLVM
require cuda_links_cuda_runtime "$cuda" "$cuda_syms" CUDA
echo "sizes (fastbuild, unstripped): cpu_deployment $(du -kL "$cpu" | cut -f1) KiB, cuda_deployment $(du -kL "$cuda" | cut -f1) KiB"
[ "$fails" -eq 0 ]
