#!/bin/bash
# The AOT link test binary (tests/aot:aot_link_test, linked statically from its own libraries)
# must contain no LLVM: AOT packages run with //runtime/cpu:aot_runtime alone. Also checks that
# each package exported its descriptor and kept its kernels local.
set -euo pipefail
bin="$1"
[[ -x "$bin" ]] || { echo "FAIL: no test binary at $bin"; exit 1; }
syms="$(nm -C "$bin")"
fail=0

llvm="$(grep -E ' llvm::|LLVMInitialize|LLVMContext' <<<"$syms" || true)"
if [[ -n "$llvm" ]]; then
  echo "FAIL: LLVM symbols in $bin:"; head -5 <<<"$llvm"; fail=1
fi
if readelf -d "$bin" | grep -q 'NEEDED.*LLVM'; then
  echo "FAIL: $bin needs a shared LLVM library"; fail=1
fi
for pkg in mlp conv foreign; do
  if ! grep -qE " [DR] coil_aot_${pkg}_package$" <<<"$syms"; then
    echo "FAIL: coil_aot_${pkg}_package is not a defined data symbol"; fail=1
  fi
done
# Kernels of the packages are local text symbols ('t'), never global ('T').
if grep -qE ' T coil_k[0-9]+_' <<<"$syms"; then
  echo "FAIL: a kernel symbol is global:"; grep -E ' T coil_k[0-9]+_' <<<"$syms" | head -3; fail=1
fi
if ! grep -qE ' t coil_k[0-9]+_' <<<"$syms"; then
  echo "FAIL: no local kernel symbols found (did the packages link?)"; fail=1
fi
[[ $fail -eq 0 ]] && echo "PASS: no LLVM in $(basename "$bin"); 3 packages, kernels local"
exit $fail
