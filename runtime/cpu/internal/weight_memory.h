// Memory for a call site's packed or reordered constant weights. A matmul's weights are
// streamed in full on every call: at batch 1 a transformer's projections read 2.4-9.4 MB each,
// and the model's weights (BERT-base: 340 MB) do not stay in the caches between calls, so every
// run reads them from memory, through 4 KB pages a TLB miss per page. Those (`huge`) buffers of
// at least kWeightHugePageBytes are 2 MB-aligned and advised as transparent huge pages
// (madvise(MADV_HUGEPAGE); where the kernel's THP setting is `madvise`, as on the 16-core Xeon,
// only advised memory gets them); the rest is 64-byte aligned (a convolution reuses each weight
// over many pixels: resnet50 at batch 1 measured no faster with them, docs/benchmarks.md).
// COIL_WEIGHT_HUGEPAGES=0 (read once per process) turns the advice off, for A/B measurements.
// Not an API: used by dnnl_plans.cc, gemv.cc and own_gemm.cc.
#ifndef COIL_RUNTIME_CPU_INTERNAL_WEIGHT_MEMORY_H_
#define COIL_RUNTIME_CPU_INTERNAL_WEIGHT_MEMORY_H_

#include <cstddef>

namespace coil::cpu::internal {

inline constexpr size_t kWeightHugePageBytes = size_t{2} << 20;

// `bytes` (> 0) of uninitialized memory, freed with std::free; nullptr when it cannot be had.
void* AllocateWeights(size_t bytes, bool huge);

}  // namespace coil::cpu::internal

#endif  // COIL_RUNTIME_CPU_INTERNAL_WEIGHT_MEMORY_H_
