// TensorStorage: alignment, zero fill, recycling of large blocks (same rounded size only, never
// while a tensor still holds the block), the cache's byte limit, and HostTensor on top of it.
#include "runtime/tensor_storage.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/host_tensor.h"

namespace coil {
namespace {

bool Aligned(const void* p) {
  return reinterpret_cast<uintptr_t>(p) % TensorStorage::kAlignment == 0;
}

TEST(TensorStorageTest, EveryBlockIsAlignedAndSized) {
  for (size_t bytes : {size_t{0}, size_t{1}, size_t{63}, size_t{64}, size_t{1000},
                       TensorStorage::kLargeBlockBytes + 4}) {
    std::shared_ptr<TensorStorage> s = TensorStorage::Allocate(bytes, TensorStorage::kZero);
    ASSERT_NE(s->data(), nullptr) << bytes;
    EXPECT_TRUE(Aligned(s->data())) << bytes;
    EXPECT_EQ(s->size(), bytes);
  }
}

TEST(TensorStorageTest, ZeroFillsEvenARecycledBlock) {
  TrimStorageCache();
  const size_t n = 3 * TensorStorage::kLargeBlockBytes;
  uint8_t* first = nullptr;
  {
    std::shared_ptr<TensorStorage> s = TensorStorage::Allocate(n, TensorStorage::kZero);
    first = s->data();
    std::memset(s->data(), 0x5A, n);
  }
  std::shared_ptr<TensorStorage> again = TensorStorage::Allocate(n, TensorStorage::kZero);
  EXPECT_EQ(again->data(), first);  // recycled...
  const std::vector<uint8_t> zeros(n, 0);
  EXPECT_EQ(std::memcmp(again->data(), zeros.data(), n), 0);  // ...and zeroed
}

TEST(TensorStorageTest, RecyclesOnlyFreedBlocksOfTheSameRoundedSize) {
  TrimStorageCache();
  const size_t n = 5 * TensorStorage::kLargeBlockBytes;
  std::shared_ptr<TensorStorage> a = TensorStorage::Allocate(n, TensorStorage::kUninitialized);
  std::shared_ptr<TensorStorage> b = TensorStorage::Allocate(n, TensorStorage::kUninitialized);
  EXPECT_NE(a->data(), b->data());  // a is still held: never handed out twice
  EXPECT_EQ(GetStorageCacheStats().misses, 2);
  uint8_t* freed = a->data();
  a.reset();
  EXPECT_EQ(GetStorageCacheStats().cached_bytes, static_cast<int64_t>(6 << 20));  // 2 MiB pages
  // A size in another 2 MiB class does not take it...
  std::shared_ptr<TensorStorage> other =
      TensorStorage::Allocate(9 * TensorStorage::kLargeBlockBytes, TensorStorage::kZero);
  EXPECT_NE(other->data(), freed);
  // ...a size in the same class (5.5 MiB rounds to 6 MiB too) does.
  std::shared_ptr<TensorStorage> same = TensorStorage::Allocate(
      5 * TensorStorage::kLargeBlockBytes + TensorStorage::kLargeBlockBytes / 2,
      TensorStorage::kUninitialized);
  EXPECT_EQ(same->data(), freed);
  const StorageCacheStats stats = GetStorageCacheStats();
  EXPECT_EQ(stats.hits, 1);
  EXPECT_EQ(stats.misses, 3);
  EXPECT_EQ(stats.cached_bytes, 0);
}

TEST(TensorStorageTest, SmallBlocksAreNotCached) {
  TrimStorageCache();
  { std::shared_ptr<TensorStorage> s = TensorStorage::Allocate(4096, TensorStorage::kZero); }
  const StorageCacheStats stats = GetStorageCacheStats();
  EXPECT_EQ(stats.hits + stats.misses, 0);
  EXPECT_EQ(stats.cached_bytes, 0);
}

TEST(TensorStorageTest, TheCacheHoldsAtMostItsLimit) {
  TrimStorageCache();
  const int64_t mib2 = 2 << 20;
  SetStorageCacheLimit(5 * mib2);
  // Three 2 MiB blocks... and a 4 MiB one that would exceed the limit of 10 MiB.
  std::vector<std::shared_ptr<TensorStorage>> blocks;
  for (int i = 0; i < 3; ++i) {
    blocks.push_back(TensorStorage::Allocate(mib2, TensorStorage::kUninitialized));
  }
  blocks.push_back(TensorStorage::Allocate(2 * mib2, TensorStorage::kUninitialized));
  blocks.push_back(TensorStorage::Allocate(2 * mib2, TensorStorage::kUninitialized));
  for (auto& b : blocks) b.reset();  // in order: 2 + 2 + 2 + 4 MiB fit; the last 4 MiB not
  EXPECT_EQ(GetStorageCacheStats().cached_bytes, 5 * mib2);
  // Lowering the limit returns blocks, the largest first.
  SetStorageCacheLimit(3 * mib2);
  EXPECT_EQ(GetStorageCacheStats().cached_bytes, 3 * mib2);
  SetStorageCacheLimit(0);  // recycling off
  EXPECT_EQ(GetStorageCacheStats().cached_bytes, 0);
  { std::shared_ptr<TensorStorage> s = TensorStorage::Allocate(mib2, TensorStorage::kZero); }
  EXPECT_EQ(GetStorageCacheStats().cached_bytes, 0);
  SetStorageCacheLimit(size_t{1} << 30);
  TrimStorageCache();
}

TEST(TensorStorageTest, HostTensorsAreAlignedAndZerosIsZero) {
  HostTensor z = HostTensor::Zeros(proto::FLOAT32, {3, 5});
  EXPECT_TRUE(Aligned(z.RawData()));
  for (int64_t i = 0; i < 3; ++i) {
    for (int64_t j = 0; j < 5; ++j) EXPECT_EQ(z.GetDouble({i, j}), 0.0);
  }
  HostTensor e = HostTensor::Empty(proto::FLOAT32, {1 << 19});  // 2 MiB: a large block
  EXPECT_TRUE(Aligned(e.RawData()));
  EXPECT_EQ(e.numel(), 1 << 19);
  e.SetDouble({7}, 1.5);
  EXPECT_EQ(e.GetDouble({7}), 1.5);
}

}  // namespace
}  // namespace coil
