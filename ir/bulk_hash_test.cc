// BulkHash128: pinned values (a format), sensitivity to every byte and to the length,
// independence from the buffer's address, and its throughput (printed, opt builds only
// meaningful).
#include "ir/bulk_hash.h"

#include <set>
#include <string>

#include "gtest/gtest.h"

namespace coil {
namespace {

std::string Pattern(size_t n) {
  std::string s(n, '\0');
  uint32_t x = 12345;
  for (size_t i = 0; i < n; ++i) {
    x = x * 1103515245u + 12345u;
    s[i] = static_cast<char>(x >> 24);
  }
  return s;
}

TEST(BulkHashTest, PinnedValues) {
  // These values are a format (compile-cache keys and checksums on disk): change them only
  // on purpose, with kCompileCacheFormatVersion and a note in bulk_hash.h.
  EXPECT_EQ(BulkHash128("").Hex(), "c5535ae1b917b5c7bef5c1884e4caaad");
  EXPECT_EQ(BulkHash128("coil").Hex(), "ce4161aa4ea88668b01fc142468c8791");
  EXPECT_EQ(BulkHash128(Pattern(1000)).Hex(), "6ebfaa9677293616baa1e28d04002511");
  EXPECT_EQ(BulkHash128(Pattern(1000), 7).Hex(), "2595a6647739fb7c28418ddfac0854b5");
}

TEST(BulkHashTest, EveryByteAndBitCounts) {
  for (size_t n : {1, 7, 8, 9, 31, 32, 33, 63, 64, 65, 200}) {
    const std::string base = Pattern(n);
    std::set<std::string> seen = {BulkHash128(base).Hex()};
    for (size_t i = 0; i < n; ++i) {
      for (int bit : {0, 7}) {
        std::string s = base;
        s[i] = static_cast<char>(s[i] ^ (1 << bit));
        EXPECT_TRUE(seen.insert(BulkHash128(s).Hex()).second) << "n=" << n << " byte " << i;
      }
    }
  }
}

TEST(BulkHashTest, LengthAndTrailingZerosCount) {
  std::set<std::string> seen;
  std::string s;
  for (int n = 0; n <= 80; ++n) {
    EXPECT_TRUE(seen.insert(BulkHash128(s).Hex()).second) << n << " zero bytes";
    s.push_back('\0');
  }
}

TEST(BulkHashTest, SeedAndHalvesDiffer) {
  const std::string s = Pattern(100);
  EXPECT_NE(BulkHash128(s, 0), BulkHash128(s, 1));
  EXPECT_NE(BulkHash128(s).lo, BulkHash128(s).hi);
  EXPECT_EQ(BulkHash128(s).Hex().size(), 32u);
}

TEST(BulkHashTest, IndependentOfAddress) {
  const std::string s = Pattern(301);
  const Hash128 want = BulkHash128(s);
  for (int shift = 1; shift < 8; ++shift) {
    std::string buffer = std::string(shift, 'x') + s;
    EXPECT_EQ(BulkHash128(absl::string_view(buffer).substr(shift)), want) << shift;
  }
}

// A 64 MiB input (the size of a large weight): seeds give unrelated hashes, and one flipped bit
// anywhere changes the hash. Its speed is measured by tools/bench:bulk_hash_bench against a copy.
TEST(BulkHashTest, LargeInputsDependOnEveryBitAndTheSeed) {
  std::string s = Pattern(64 << 20);
  const Hash128 h0 = BulkHash128(s), h1 = BulkHash128(s, 1);
  EXPECT_NE(h0, h1);
  EXPECT_NE(h0.lo, h0.hi);
  for (size_t at : {size_t{0}, s.size() / 2 + 3, s.size() - 1}) {
    s[at] ^= 0x10;
    EXPECT_NE(BulkHash128(s), h0) << at;
    s[at] ^= 0x10;
  }
  EXPECT_EQ(BulkHash128(s), h0);
}

}  // namespace
}  // namespace coil
