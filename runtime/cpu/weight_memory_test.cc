// AllocateWeights (internal/weight_memory.h): large matmul weights 2 MB-aligned (where huge
// pages may back them), everything else 64-byte aligned, all of it writable to the last byte.
// Whether the kernel then backs the memory with huge pages is its THP setting's, not tested.
#include "runtime/cpu/internal/weight_memory.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "gtest/gtest.h"

namespace coil::cpu::internal {
namespace {

TEST(WeightMemoryTest, AlignmentBySizeAndUse) {
  struct Case {
    size_t bytes;
    bool huge;
    size_t alignment;
  };
  for (const Case& c : {Case{100, true, 64}, Case{kWeightHugePageBytes - 4, true, 64},
                        Case{kWeightHugePageBytes, true, kWeightHugePageBytes},
                        Case{3 * kWeightHugePageBytes + 12345, true, kWeightHugePageBytes},
                        Case{3 * kWeightHugePageBytes + 12345, false, 64}}) {
    void* p = AllocateWeights(c.bytes, c.huge);
    ASSERT_NE(p, nullptr) << c.bytes;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % c.alignment, 0u) << c.bytes << " " << c.huge;
    std::memset(p, 0x5a, c.bytes);
    EXPECT_EQ(static_cast<unsigned char*>(p)[c.bytes - 1], 0x5a);
    std::free(p);
  }
}

}  // namespace
}  // namespace coil::cpu::internal
