// BulkHash128: coil's fast, stable 128-bit hash of a byte string, for dense constant data
// (graph_hash.h), compile-cache keys and entry checksums (runtime/compile_cache.h).
//
//   Hash128 h = BulkHash128(bytes);            // seed 0
//   std::string hex = h.Hex();                 // 32 lowercase hex digits, `hi` first
//
// Definition (a format: bulk_hash_test.cc pins values, so it cannot change by accident):
//   - The input is read as little-endian 64-bit words. Four independent lanes absorb words
//     round-robin (word i goes to lane i % 4) with lane = Rotl(lane + w * kP2, 29) * kP1, so the
//     CPU overlaps the four lanes' multiplies (about 10+ GB/s on one core).
//   - The last 0-7 bytes form one more word, zero-padded, XORed with a marker of their count,
//     absorbed by the next lane in turn; the total length is mixed into the finalization, so
//     strings differing only in trailing zero bytes hash differently.
//   - Lanes start from the seed and four fixed constants; the two 64-bit halves are computed
//     from the four lanes with different rotations and constants, each through a full-avalanche
//     finalizer.
// Stable across runs, machines, compilers and builds (no absl::Hash, no std::hash, no
// pointer values, no endianness dependence). Not a cryptographic hash: do not use it against
// adversarial inputs.
#ifndef COIL_IR_BULK_HASH_H_
#define COIL_IR_BULK_HASH_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace coil {

struct Hash128 {
  uint64_t lo = 0;
  uint64_t hi = 0;
  bool operator==(const Hash128& o) const { return lo == o.lo && hi == o.hi; }
  bool operator!=(const Hash128& o) const { return !(*this == o); }
  // 32 lowercase hex digits: hi, then lo.
  std::string Hex() const;
};

Hash128 BulkHash128(absl::string_view bytes, uint64_t seed = 0);

// MurmurHash3's 64-bit finalizer (every input bit affects every output bit); shared by
// graph_hash.cc.
uint64_t HashFmix64(uint64_t k);

}  // namespace coil

#endif  // COIL_IR_BULK_HASH_H_
