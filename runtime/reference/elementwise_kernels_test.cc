// Elementwise reference kernels: data-dependent errors and the shared kernel_util helpers.
// Values are checked against torch by tests/torch_oracle/elementwise_cases.py.
#include <cmath>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/builder.h"
#include "runtime/interpreter.h"
#include "runtime/reference/kernel_util.h"

namespace coil {
namespace {

using ::testing::HasSubstr;

// Runs one op on the given inputs (static shapes).
absl::StatusOr<std::vector<HostTensor>> RunOp(absl::string_view op,
                                              std::vector<HostTensor> inputs, AttrMap attrs = {}) {
  Graph g("t");
  GraphBuilder b(g);
  std::vector<Value*> args;
  for (const HostTensor& t : inputs) {
    std::vector<SymExpr> shape(t.shape().begin(), t.shape().end());
    args.push_back(b.Input(TensorType(t.dtype(), shape)));
  }
  absl::StatusOr<Value*> out = b.Op(op, args, std::move(attrs));
  if (!out.ok()) return out.status();
  g.SetOutputs({*out});
  return Interpret(g, inputs);
}

HostTensor Ints(DType t, std::vector<double> v) {
  return HostTensor::FromDoubles(t, {static_cast<int64_t>(v.size())}, v);
}

TEST(ElementwiseKernelsTest, IntegerDivisionByZeroIsAnError) {
  HostTensor a = Ints(proto::INT64, {5, -5});
  HostTensor z = Ints(proto::INT64, {1, 0});
  for (const char* mode : {"trunc", "floor"}) {
    absl::StatusOr<std::vector<HostTensor>> r =
        RunOp("aten.div", {a, z}, {{"rounding_mode", std::string(mode)}});
    ASSERT_FALSE(r.ok());
    EXPECT_THAT(r.status().message(), HasSubstr("integer division by zero"));
  }
  for (const char* op : {"aten.remainder", "aten.fmod", "aten.floor_divide"}) {
    absl::StatusOr<std::vector<HostTensor>> r = RunOp(op, {a, z});
    ASSERT_FALSE(r.ok()) << op;
    EXPECT_THAT(r.status().message(), HasSubstr("integer division by zero"));
  }
  absl::StatusOr<std::vector<HostTensor>> r =
      RunOp("aten.remainder_scalar", {Ints(proto::INT32, {3})}, {{"other", int64_t{0}}});
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("integer division by zero"));
  // True division of integers is floating: inf, no error.
  r = RunOp("aten.div", {a, z});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].ToDoubles(), (std::vector<double>{5, -INFINITY}));
  // Empty outputs never divide.
  r = RunOp("aten.fmod", {HostTensor::Zeros(proto::INT64, {0}), Ints(proto::INT64, {0})});
  EXPECT_TRUE(r.ok()) << r.status();
}

// fmax / fmin of signed zeros keep the first operand, as torch 1.13 (torch.fmax of [-0., 0.]
// and [0., -0.] is [-0., 0.], likewise fmin); NaN is ignored. Found by the CPU differential
// fuzzer through rsqrt (-inf where the reference had inf). The oracle compares -0. == 0.,
// so the signs are checked here.
TEST(ElementwiseKernelsTest, FmaxFminOfSignedZerosKeepTheFirstOperand) {
  HostTensor a = HostTensor::FromDoubles(proto::FLOAT32, {3}, {-0.0, 0.0, NAN});
  HostTensor b = HostTensor::FromDoubles(proto::FLOAT32, {3}, {0.0, -0.0, 2.0});
  for (const char* op : {"aten.fmax", "aten.fmin"}) {
    absl::StatusOr<std::vector<HostTensor>> r = RunOp(op, {a, b});
    ASSERT_TRUE(r.ok()) << r.status();
    std::vector<double> v = (*r)[0].ToDoubles();
    EXPECT_TRUE(v[0] == 0 && std::signbit(v[0])) << op << ": " << v[0];
    EXPECT_TRUE(v[1] == 0 && !std::signbit(v[1])) << op << ": " << v[1];
    EXPECT_EQ(v[2], 2.0) << op;
  }
}

TEST(ElementwiseKernelsTest, Int64MinOverMinusOneWraps) {
  HostTensor a = HostTensor::Zeros(proto::INT64, {1});
  a.StoreInt(0, INT64_MIN);
  absl::StatusOr<std::vector<HostTensor>> r =
      RunOp("aten.div", {a, Ints(proto::INT64, {-1})}, {{"rounding_mode", std::string("floor")}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].GetInt({0}), INT64_MIN);
}

TEST(KernelUtilTest, BroadcastStridesAndOffsets) {
  // A [3, 1] column viewed from storage offset 2 with stride 2, broadcast to [2, 3, 4].
  HostTensor base = HostTensor::FromDoubles(proto::FLOAT32, {8}, {0, 1, 2, 3, 4, 5, 6, 7});
  HostTensor col = base.View({3, 1}, {2, 1}, 2);
  EXPECT_EQ(BroadcastStrides(col, {2, 3, 4}), (std::vector<int64_t>{0, 2, 0}));
  std::vector<double> seen;
  HostTensor cols[] = {col};
  ForEachBroadcast(cols, {2, 3, 4}, [&](int64_t flat, absl::Span<const int64_t> offs) {
    EXPECT_EQ(flat, static_cast<int64_t>(seen.size()));
    seen.push_back(col.LoadDouble(offs[0]));
  });
  ASSERT_EQ(seen.size(), 24u);
  EXPECT_EQ(seen[0], 2);
  EXPECT_EQ(seen[4], 4);
  EXPECT_EQ(seen[23], 6);
}

TEST(KernelUtilTest, Casts) {
  EXPECT_EQ(CastInt(300, proto::UINT8), 44);
  EXPECT_EQ(CastInt(-1, proto::UINT8), 255);
  EXPECT_EQ(CastInt(200, proto::INT8), -56);
  EXPECT_EQ(CastInt(7, proto::BOOL), 1);
  EXPECT_EQ(CastDouble(-1.5, proto::UINT8), 255);
  EXPECT_EQ(CastDouble(0.1, proto::FLOAT32), static_cast<double>(0.1f));
  EXPECT_EQ(CastDouble(65520.0, proto::FLOAT16), INFINITY);
  EXPECT_EQ(CastDouble(NAN, proto::BOOL), 1.0);
  EXPECT_EQ(ScalarAsInt(Attribute(0.5), proto::BOOL), 1);
  EXPECT_EQ(ScalarAsInt(Attribute(-2.7), proto::INT32), -2);
  EXPECT_EQ(WrapMul(INT64_MAX, 2), -2);
}

}  // namespace
}  // namespace coil
