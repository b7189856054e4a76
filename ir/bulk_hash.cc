// BulkHash128 (definition in bulk_hash.h).
#include "ir/bulk_hash.h"

#include <cstring>

#include "absl/strings/str_format.h"

namespace coil {
namespace {

constexpr uint64_t kP1 = 0x9E3779B185EBCA87ULL;
constexpr uint64_t kP2 = 0xC2B2AE3D27D4EB4FULL;
constexpr uint64_t kP3 = 0x165667B19E3779F9ULL;
constexpr uint64_t kP4 = 0x85EBCA77C2B2AE63ULL;

inline uint64_t Rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

// Little-endian load (the build targets are little-endian; the byte loop keeps it portable).
inline uint64_t Load64(const unsigned char* p) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  uint64_t w;
  std::memcpy(&w, p, sizeof(w));
  return w;
#else
  uint64_t w = 0;
  for (int i = 0; i < 8; ++i) w |= static_cast<uint64_t>(p[i]) << (8 * i);
  return w;
#endif
}

inline uint64_t Round(uint64_t lane, uint64_t w) { return Rotl(lane + w * kP2, 29) * kP1; }

}  // namespace

uint64_t HashFmix64(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ULL;
  k ^= k >> 33;
  return k;
}

std::string Hash128::Hex() const { return absl::StrFormat("%016x%016x", hi, lo); }

Hash128 BulkHash128(absl::string_view bytes, uint64_t seed) {
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  const size_t n = bytes.size();
  uint64_t lane[4] = {seed + kP1, seed ^ kP2, seed - kP3, Rotl(seed, 32) + kP4};
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    lane[0] = Round(lane[0], Load64(p + i));
    lane[1] = Round(lane[1], Load64(p + i + 8));
    lane[2] = Round(lane[2], Load64(p + i + 16));
    lane[3] = Round(lane[3], Load64(p + i + 24));
  }
  int next = 0;
  for (; i + 8 <= n; i += 8) {
    lane[next] = Round(lane[next], Load64(p + i));
    next = (next + 1) & 3;
  }
  if (i < n) {
    uint64_t w = 0;
    for (size_t k = 0; i + k < n; ++k) w |= static_cast<uint64_t>(p[i + k]) << (8 * k);
    lane[next] = Round(lane[next], w ^ (static_cast<uint64_t>(n - i) << 59));
  }
  const uint64_t len = static_cast<uint64_t>(n);
  uint64_t a = Rotl(lane[0], 1) + Rotl(lane[1], 7) + Rotl(lane[2], 12) + Rotl(lane[3], 18);
  uint64_t b = Rotl(lane[0], 43) ^ Rotl(lane[1], 31) ^ Rotl(lane[2], 23) ^ Rotl(lane[3], 5);
  b += lane[0] * kP3 + lane[2] * kP4;
  Hash128 h;
  h.lo = HashFmix64(a ^ (len * kP1) ^ HashFmix64(b));
  h.hi = HashFmix64(b + (len ^ kP4) * kP2 + HashFmix64(a ^ kP3));
  return h;
}

}  // namespace coil
