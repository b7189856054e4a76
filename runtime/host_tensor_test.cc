// HostTensor::ByteSize and HostTensor::Allocate: sizes fed by user input are errors, never
// crashes. One expected-error test per bad size.
#include "runtime/host_tensor.h"

#include <memory>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace coil {
namespace {

TEST(HostTensorAllocate, Contiguous) {
  absl::StatusOr<HostTensor> t = HostTensor::Allocate(proto::FLOAT32, {2, 3}, TensorStorage::kZero);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->TypeString(), "f32[2, 3]");
  EXPECT_EQ(t->strides(), (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(t->GetDouble({1, 2}), 0.0);
  EXPECT_EQ(*HostTensor::ByteSize(proto::FLOAT32, {2, 3}), 24);
  EXPECT_EQ(*HostTensor::ByteSize(proto::FLOAT32, {0, INT64_MAX}), 0);
}

TEST(HostTensorAllocateErrors, ElementCountOverflows) {
  // --dim s=4294967296 on f32[s, s]: the element count overflowed int64 (a segfault).
  absl::StatusOr<HostTensor> t = HostTensor::Allocate(
      proto::FLOAT32, {int64_t{1} << 32, int64_t{1} << 32}, TensorStorage::kUninitialized);
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(t.status().message(),
            "f32[4294967296, 4294967296] is too large: its size overflows int64");
}

TEST(HostTensorAllocateErrors, ByteSizeOverflows) {
  // 2^61 elements fit in int64, their 4-byte size does not.
  EXPECT_EQ(HostTensor::ByteSize(proto::FLOAT32, {int64_t{1} << 61}).status().message(),
            "f32[2305843009213693952] is too large: its size overflows int64");
}

TEST(HostTensorAllocateErrors, NegativeDimension) {
  EXPECT_EQ(HostTensor::ByteSize(proto::INT64, {3, -1}).status().message(),
            "i64[3, -1] has a negative dimension -1");
}

TEST(HostTensorAllocateErrors, MoreMemoryThanTheSystemGrants) {
  // --dim s=1048576 on f32[s, s]: 4 TiB used to abort "out of memory".
  absl::StatusOr<HostTensor> t = HostTensor::Allocate(
      proto::FLOAT32, {int64_t{1} << 20, int64_t{1} << 20}, TensorStorage::kUninitialized);
  EXPECT_EQ(t.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(t.status().message(),
            "cannot allocate f32[1048576, 1048576] (4398046511104 bytes): out of memory");
}

TEST(HostTensorAllocateErrors, NoDtype) {
  EXPECT_EQ(HostTensor::Allocate(proto::DTYPE_UNSPECIFIED, {1}, TensorStorage::kZero)
                .status()
                .message(),
            "tensor has no valid dtype");
}

// HostTensor::AdoptStorage / RawData (the CPU runtime's outputs adopt its arena storage).
TEST(HostTensorAdoptTest, AdoptsWithoutCopyAndChecksSize) {
  std::shared_ptr<TensorStorage> storage = TensorStorage::Allocate(24, TensorStorage::kZero);
  absl::StatusOr<HostTensor> t = HostTensor::AdoptStorage(proto::FLOAT32, {2, 3}, storage);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->RawData(), storage->data());
  EXPECT_TRUE(t->IsContiguous());
  reinterpret_cast<float*>(storage->data())[4] = 2.5f;
  EXPECT_EQ(t->GetDouble({1, 1}), 2.5);
  EXPECT_FALSE(HostTensor::AdoptStorage(proto::FLOAT32, {2, 4}, storage).ok());
  EXPECT_FALSE(HostTensor::AdoptStorage(proto::FLOAT32, {2, 3}, nullptr).ok());
  HostTensor v = t->View({2}, {1}, 3);
  EXPECT_EQ(v.RawData(), storage->data() + 12);
  EXPECT_EQ(HostTensor().RawData(), nullptr);
}

}  // namespace
}  // namespace coil
