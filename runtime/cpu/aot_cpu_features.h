// This CPU's instruction-set features, detected with cpuid/xgetbv (no LLVM), under the names
// LLVM uses for them ("avx2", "avx512f", "amx-tile", ...): the AOT loader checks that an AOT
// object's required features (CoilAotPackage.cpu_features) are all present before running it.
//
//   CpuFeatureCheck c = CheckCpuFeatures("+avx,+avx2,+avx512f");
//   if (!c.missing.empty()) ...   // e.g. {"avx512f"} on an AVX2-only machine
//
// A feature counts as present only when the CPU reports it AND the operating system saves the
// register state it needs (YMM for AVX-class features, ZMM/opmask for AVX-512, tile state for
// AMX), as LLVM's own host detection decides (codegen_cpu:aot_test checks the two agree on
// every feature LLVM knows). On non-x86 machines no feature is known.
#ifndef COIL_RUNTIME_CPU_AOT_CPU_FEATURES_H_
#define COIL_RUNTIME_CPU_AOT_CPU_FEATURES_H_

#include <map>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace coil::cpu {

// Every feature this runtime can detect, with whether this CPU has it (computed once).
const std::map<std::string, bool>& HostCpuFeatures();

// The CPU's brand string ("AMD EPYC 9654 96-Core Processor"), or "unknown CPU".
const std::string& HostCpuBrand();

// The "x86_64" / "aarch64" / ... architecture this runtime was compiled for (the first
// component of an LLVM triple).
absl::string_view HostArch();

struct CpuFeatureCheck {
  std::vector<std::string> missing;  // required, detectable, and absent on this CPU
  std::vector<std::string> unknown;  // required but not detectable by this runtime
};

// Checks a feature string in LLVM's form ("+a,+b,-c": '+' entries, and bare names, are
// required; '-' entries and empty items are ignored). Both lists come back sorted.
CpuFeatureCheck CheckCpuFeatures(absl::string_view features);

}  // namespace coil::cpu

#endif  // COIL_RUNTIME_CPU_AOT_CPU_FEATURES_H_
