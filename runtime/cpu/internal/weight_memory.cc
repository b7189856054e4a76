// AllocateWeights (weight_memory.h).
#include "runtime/cpu/internal/weight_memory.h"

#include <sys/mman.h>

#include <cstdlib>
#include <string>

namespace coil::cpu::internal {

void* AllocateWeights(size_t bytes, bool huge) {
  static const bool allowed = [] {
    const char* v = std::getenv("COIL_WEIGHT_HUGEPAGES");
    return v == nullptr || std::string(v) != "0";
  }();
  if (!huge || !allowed || bytes < kWeightHugePageBytes) {
    return std::aligned_alloc(64, (bytes + 63) / 64 * 64);
  }
  // 2 MB-aligned; only whole 2 MB pages are advised, so that the tail (4 KB pages) costs no
  // more memory than the bytes asked for.
  void* p = nullptr;
  if (posix_memalign(&p, kWeightHugePageBytes, (bytes + 4095) / 4096 * 4096) != 0) return nullptr;
  // Advice only: without THP (or where the kernel refuses) the pages stay 4 KB ones.
  (void)madvise(p, bytes / kWeightHugePageBytes * kWeightHugePageBytes, MADV_HUGEPAGE);
  return p;
}

}  // namespace coil::cpu::internal
