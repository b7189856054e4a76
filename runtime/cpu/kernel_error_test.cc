// KernelErrorStatus: one message per error kind (the reference kernels' wording).
#include "runtime/cpu/kernel_error.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace coil::cpu {
namespace {

using ::testing::HasSubstr;

TEST(KernelErrorTest, NoFailureIsOk) {
  CoilKernelError e{};
  EXPECT_TRUE(KernelErrorStatus(e, "kernel 1 'k'").ok());
}

TEST(KernelErrorTest, IndexOutOfBounds) {
  CoilKernelError e{1, COIL_KERNEL_INDEX_OUT_OF_BOUNDS, 4, 4, 0, "expr 2 (LOAD) of buffer 2"};
  absl::Status s = KernelErrorStatus(e, "kernel 6 'k6_gather'");
  EXPECT_EQ(s.code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(s.message(),
            "kernel 6 'k6_gather': index 4 is out of bounds for dimension 0 with size 4 "
            "(expr 2 (LOAD) of buffer 2)");
}

TEST(KernelErrorTest, WrappedNegativeIndexIsReportedAsGiven) {
  // index_tensor wrapped -5 into -5 + 4 = -1.
  CoilKernelError e{1, COIL_KERNEL_WRAPPED_INDEX_OUT_OF_BOUNDS, -1, 4, 0, nullptr};
  EXPECT_THAT(KernelErrorStatus(e, "k").message(),
              HasSubstr("index -5 is out of bounds for dimension 0 with size 4"));
  // A too large index was not wrapped.
  e.value = 9;
  EXPECT_THAT(KernelErrorStatus(e, "k").message(),
              HasSubstr("index 9 is out of bounds for dimension 0 with size 4"));
}

TEST(KernelErrorTest, DivisionByZero) {
  CoilKernelError e{1, COIL_KERNEL_INT_DIV_BY_ZERO, 0, 0, 0, "expr 4 (prims.div)"};
  absl::Status s = KernelErrorStatus(e, "kernel 5 'k5_div'");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "kernel 5 'k5_div': integer division by zero (expr 4 (prims.div))");
  // remainder and fmod as the reference interpreter words them; `what` names the prim.
  e.kind = COIL_KERNEL_INT_REM_BY_ZERO;
  e.what = "expr 4 (prims.remainder)";
  EXPECT_EQ(KernelErrorStatus(e, "k").message(),
            "k: integer division by zero (expr 4 (prims.remainder))");
  e.kind = COIL_KERNEL_INT_FMOD_BY_ZERO;
  EXPECT_THAT(KernelErrorStatus(e, "k").message(), HasSubstr("integer division by zero"));
}

TEST(KernelErrorTest, UnknownKindIsABug) {
  CoilKernelError e{1, 99, 0, 0, 0, nullptr};
  absl::Status s = KernelErrorStatus(e, "k");
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(s.message(), HasSubstr("coil bug"));
}

}  // namespace
}  // namespace coil::cpu
