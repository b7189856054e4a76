// Data-dependent errors of the reduction family's reference kernels: sizes that are symbolic
// when the meta function runs and turn out wrong at run time. Values are checked against
// PyTorch by //tests/torch_oracle:reduction_oracle_test.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/builder.h"
#include "runtime/interpreter.h"

namespace coil {
namespace {

using ::testing::HasSubstr;

const SymExpr kS = SymExpr::Symbol("s");
const SymExpr kT = SymExpr::Symbol("t");

// Runs one op over graph inputs of `types` fed with `values`; returns the outputs or the error.
absl::StatusOr<std::vector<HostTensor>> RunOp(const std::string& op,
                                            const std::vector<TensorType>& types,
                                            const std::vector<HostTensor>& values,
                                            AttrMap attrs = {}) {
  Graph g("test");
  GraphBuilder b(g);
  std::vector<Value*> args;
  for (const TensorType& t : types) args.push_back(b.Input(t));
  absl::StatusOr<std::vector<Value*>> outs = b.OpMulti(op, args, std::move(attrs));
  if (!outs.ok()) return outs.status();
  g.SetOutputs(*outs);
  return Interpret(g, values);
}

HostTensor Ones(std::vector<int64_t> shape) {
  HostTensor t = HostTensor::Zeros(proto::FLOAT32, shape);
  ForEachIndex(shape, [&](absl::Span<const int64_t> i) { t.SetDouble(i, 1.0); });
  return t;
}

std::string ErrorOf(const absl::StatusOr<std::vector<HostTensor>>& r) {
  EXPECT_FALSE(r.ok());
  return std::string(r.status().message());
}

TEST(ReductionKernels, SymbolicDimThatIsEmptyAtRunTime) {
  TensorType x(proto::FLOAT32, {kS, 3});
  EXPECT_THAT(ErrorOf(RunOp("aten.amax", {x}, {Ones({0, 3})}, {{"dim", IntList{0}}})),
              HasSubstr("amax(): expected reduction dim 0 to have non-zero size, input is "
                        "f32[0, 3]"));
  EXPECT_THAT(ErrorOf(RunOp("aten.max_dim", {x}, {Ones({0, 3})}, {{"dim", int64_t{0}}})),
              HasSubstr("max(): expected reduction dim 0"));
  EXPECT_THAT(ErrorOf(RunOp("aten.argmin", {x}, {Ones({0, 3})})),
              HasSubstr("argmin(): expected reduction dim 0"));
  // Empty in the kept dims too: still an error, as in PyTorch.
  TensorType y(proto::FLOAT32, {kS, kT});
  EXPECT_THAT(ErrorOf(RunOp("aten.amin", {y}, {Ones({0, 0})}, {{"dim", IntList{1}}})),
              HasSubstr("amin(): expected reduction dim 1"));
  // Reducing the other dim is fine; sums of nothing are 0.
  absl::StatusOr<std::vector<HostTensor>> r =
      RunOp("aten.amax", {x}, {Ones({0, 3})}, {{"dim", IntList{1}}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].shape(), std::vector<int64_t>{0});
  r = RunOp("aten.sum", {x}, {Ones({0, 3})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].ToDoubles(), std::vector<double>{0.0});
}

TEST(ReductionKernels, ParameterSizesCheckedAtRunTime) {
  EXPECT_THAT(ErrorOf(RunOp("aten.layer_norm", {TensorType(proto::FLOAT32, {2, kT})},
                          {Ones({2, 3})}, {{"normalized_shape", IntList{4}}})),
              HasSubstr("input of shape [2, 3] does not end with normalized_shape dim 4"));
  EXPECT_THAT(ErrorOf(RunOp("aten.layer_norm",
                          {TensorType(proto::FLOAT32, {2, kT}), TensorType(proto::FLOAT32, {kS})},
                          {Ones({2, 3}), Ones({4})}, {{"normalized_shape", SymList{kT}}})),
              HasSubstr("weight has shape [4], expected [3]"));
  EXPECT_THAT(ErrorOf(RunOp("aten.batch_norm",
                          {TensorType(proto::FLOAT32, {2, kS}), TensorType(proto::FLOAT32, {kT}),
                           TensorType(proto::FLOAT32, {kT})},
                          {Ones({2, 3}), Ones({4}), Ones({4})})),
              HasSubstr("running_mean has shape [4], expected [3]"));
  EXPECT_THAT(ErrorOf(RunOp("aten.group_norm", {TensorType(proto::FLOAT32, {2, kS})},
                          {Ones({2, 5})}, {{"num_groups", int64_t{2}}})),
              HasSubstr("expected the number of channels (5) to be divisible by num_groups=2"));
}

TEST(ReductionKernels, IntegerSumsWrapWithoutUndefinedBehavior) {
  HostTensor x = HostTensor::Zeros(proto::INT64, {2});
  x.SetInt({0}, std::numeric_limits<int64_t>::max());
  x.SetInt({1}, 1);
  absl::StatusOr<std::vector<HostTensor>> r =
      RunOp("aten.sum", {TensorType(proto::INT64, {2})}, {x});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].GetInt({}), std::numeric_limits<int64_t>::min());
  r = RunOp("aten.cumprod", {TensorType(proto::INT64, {2})}, {x}, {{"dim", int64_t{0}}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].GetInt({1}), std::numeric_limits<int64_t>::max());
}

TEST(ReductionKernels, FloatToIntSumOfNonFiniteValuesIsDefined) {
  HostTensor x = HostTensor::FromDoubles(
      proto::FLOAT32, {3}, {std::numeric_limits<double>::quiet_NaN(), 1e30, 2.5});
  absl::StatusOr<std::vector<HostTensor>> r =
      RunOp("aten.sum", {TensorType(proto::FLOAT32, {3})}, {x}, {{"dtype", proto::INT32}});
  ASSERT_TRUE(r.ok()) << r.status();  // the value is unspecified, as in PyTorch
}

TEST(ReductionKernels, RmsNormDefaultEpsIsTheDTypeEpsilon) {
  // x = 0: y = 0 * rsqrt(0 + eps) = 0 whatever eps; x = tiny: eps dominates.
  HostTensor x = HostTensor::FromDoubles(proto::FLOAT32, {1, 2}, {1e-4, 1e-4});
  absl::StatusOr<std::vector<HostTensor>> r =
      RunOp("aten.rms_norm", {TensorType(proto::FLOAT32, {1, 2})}, {x},
          {{"normalized_shape", IntList{2}}});
  ASSERT_TRUE(r.ok()) << r.status();
  double eps = std::numeric_limits<float>::epsilon();
  double xf = static_cast<double>(1e-4f);
  double want = xf / std::sqrt(xf * xf + eps);  // 0.0917; with eps = 1e-5 it would be 0.0316
  EXPECT_NEAR((*r)[0].GetDouble({0, 0}), want, 1e-6);
}

}  // namespace
}  // namespace coil
