// HostTensor::ByteSize and HostTensor::Allocate: sizes fed by user input are errors, never
// crashes. One expected-error test per bad size.
#include "runtime/host_tensor.h"

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

}  // namespace
}  // namespace coil
