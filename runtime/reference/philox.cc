// Philox4x32-10 and philox_uniform's element value.
#include "runtime/reference/philox.h"

namespace coil {
namespace prims_internal {

std::array<uint32_t, 4> Philox4x32_10(std::array<uint32_t, 4> ctr, std::array<uint32_t, 2> key) {
  constexpr uint32_t kM0 = 0xD2511F53, kM1 = 0xCD9E8D57;
  constexpr uint32_t kW0 = 0x9E3779B9, kW1 = 0xBB67AE85;
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      key[0] += kW0;
      key[1] += kW1;
    }
    uint64_t p0 = static_cast<uint64_t>(kM0) * ctr[0];
    uint64_t p1 = static_cast<uint64_t>(kM1) * ctr[2];
    uint32_t hi0 = static_cast<uint32_t>(p0 >> 32), lo0 = static_cast<uint32_t>(p0);
    uint32_t hi1 = static_cast<uint32_t>(p1 >> 32), lo1 = static_cast<uint32_t>(p1);
    ctr = {hi1 ^ ctr[1] ^ key[0], lo1, hi0 ^ ctr[3] ^ key[1], lo0};
  }
  return ctr;
}

}  // namespace prims_internal

double PhiloxUniformAt(int64_t seed, int64_t counter) {
  uint64_t s = static_cast<uint64_t>(seed), c = static_cast<uint64_t>(counter);
  std::array<uint32_t, 4> r = prims_internal::Philox4x32_10(
      {static_cast<uint32_t>(c), static_cast<uint32_t>(c >> 32), 0, 0},
      {static_cast<uint32_t>(s), static_cast<uint32_t>(s >> 32)});
  return static_cast<double>(r[0] >> 8) * 0x1p-24;
}

}  // namespace coil
