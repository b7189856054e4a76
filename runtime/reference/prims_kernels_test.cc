// Reference kernels of the prims opset: Philox4x32-10 against Random123's known-answer vectors
// and philox_uniform built on it, copy_to's write into dst, integer div/remainder/fmod signs
// and errors, pad with negative (cropping) amounts, scatter with repeated indices, and the
// data-dependent errors. Ordinary values are checked against PyTorch by
// //tests/torch_oracle:prims_oracle_test.
#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/builder.h"
#include "runtime/interpreter.h"
#include "runtime/reference/kernel_registry.h"

namespace coil {
namespace prims_internal {
// Defined in philox.cc (declared in philox.h, a header of //runtime:prims_scalar).
std::array<uint32_t, 4> Philox4x32_10(std::array<uint32_t, 4> ctr, std::array<uint32_t, 2> key);
}  // namespace prims_internal

namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// One node over graph inputs of the given types, run on `args`.
absl::StatusOr<std::vector<HostTensor>> RunOp(const std::string& op,
                                              const std::vector<HostTensor>& args,
                                              AttrMap attrs = {}) {
  Graph g("test");
  GraphBuilder b(g);
  std::vector<Value*> in;
  for (const HostTensor& t : args) {
    std::vector<SymExpr> shape(t.shape().begin(), t.shape().end());
    in.push_back(b.Input(TensorType(t.dtype(), shape)));
  }
  absl::StatusOr<std::vector<Value*>> outs = b.OpMulti(op, in, std::move(attrs));
  if (!outs.ok()) return outs.status();
  g.SetOutputs(*outs);
  return Interpret(g, args);
}

std::vector<double> Values(const std::string& op, const std::vector<HostTensor>& args,
                           AttrMap attrs = {}) {
  absl::StatusOr<std::vector<HostTensor>> r = RunOp(op, args, std::move(attrs));
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? (*r)[0].ToDoubles() : std::vector<double>{};
}

std::string RunError(const std::string& op, const std::vector<HostTensor>& args,
                     AttrMap attrs = {}) {
  absl::StatusOr<std::vector<HostTensor>> r = RunOp(op, args, std::move(attrs));
  EXPECT_FALSE(r.ok()) << op << " unexpectedly succeeded";
  return std::string(r.status().message());
}

HostTensor T(DType dt, std::vector<int64_t> shape, std::vector<double> v) {
  return HostTensor::FromDoubles(dt, std::move(shape), v);
}
HostTensor I32(std::vector<double> v) {
  int64_t n = static_cast<int64_t>(v.size());
  return T(proto::INT32, {n}, std::move(v));
}

// --- philox ----------------------------------------------------------------------------------

TEST(PrimsKernels, PhiloxMatchesRandom123KnownAnswers) {
  using prims_internal::Philox4x32_10;
  EXPECT_EQ(Philox4x32_10({0, 0, 0, 0}, {0, 0}),
            (std::array<uint32_t, 4>{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(Philox4x32_10({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
                          {0xffffffff, 0xffffffff}),
            (std::array<uint32_t, 4>{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(Philox4x32_10({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
                          {0xa4093822, 0x299f31d0}),
            (std::array<uint32_t, 4>{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

TEST(PrimsKernels, PhiloxUniformUsesSeedAsKeyAndOffsetPlusIAsCounter) {
  using prims_internal::Philox4x32_10;
  // Attributes are limited to [-2^40, 2^40] by the registry (op_registry.cc, kMaxSizeAttr).
  const int64_t seed = 0x12a4093822;  // key words lo = a4093822, hi = 12
  const int64_t offset = 0x7f243f6a88;  // counter words 243f6a88, 7f
  absl::StatusOr<std::vector<HostTensor>> r =
      RunOp("prims.philox_uniform", {},
            {{"shape", SymList{2, 3}}, {"seed", seed}, {"offset", int64_t{5}},
             {"dtype", proto::FLOAT64}});
  ASSERT_TRUE(r.ok()) << r.status();
  std::vector<double> got = (*r)[0].ToDoubles();
  ASSERT_EQ(got.size(), 6u);
  for (uint32_t i = 0; i < 6; ++i) {
    uint32_t u = Philox4x32_10({5 + i, 0, 0, 0}, {0xa4093822, 0x12})[0];
    EXPECT_EQ(got[i], std::ldexp(static_cast<double>(u >> 8), -24)) << i;
    EXPECT_GE(got[i], 0.0);
    EXPECT_LT(got[i], 1.0);
  }
  // Counter 0, key 0: the first known-answer word.
  EXPECT_EQ(Values("prims.philox_uniform", {},
                   {{"shape", SymList{1}}, {"seed", int64_t{0}}, {"offset", int64_t{0}},
                    {"dtype", proto::FLOAT64}}),
            std::vector<double>{std::ldexp(static_cast<double>(0x6627e8d5u >> 8), -24)});
  // The counter's low 64 bits are offset + i: the second word of the counter is offset's high
  // half.
  r = RunOp("prims.philox_uniform", {},
            {{"shape", SymList{1}}, {"seed", int64_t{0}}, {"offset", offset},
             {"dtype", proto::FLOAT32}});
  ASSERT_TRUE(r.ok()) << r.status();
  uint32_t u = Philox4x32_10({0x243f6a88, 0x7f, 0, 0}, {0, 0})[0];
  EXPECT_EQ((*r)[0].ToDoubles()[0], std::ldexp(static_cast<double>(u >> 8), -24));
}

// --- copy_to ---------------------------------------------------------------------------------

TEST(PrimsKernels, CopyToWritesIntoDst) {
  const ReferenceKernel* k = ReferenceKernels::Global().Find("prims.copy_to");
  ASSERT_NE(k, nullptr);
  HostTensor dst = T(proto::INT32, {2, 2}, {0, 0, 0, 0});
  HostTensor src = T(proto::FLOAT32, {2, 2}, {1.5, -2.7, 3, 4});
  std::vector<HostTensor> inputs = {dst, src};
  AttrMap attrs;
  std::vector<std::vector<int64_t>> shapes = {{2, 2}};
  std::vector<DType> dtypes = {proto::INT32};
  absl::StatusOr<std::vector<HostTensor>> r = (*k)(KernelContext{inputs, attrs, shapes, dtypes});
  ASSERT_TRUE(r.ok()) << r.status();
  // Converted to dst's dtype (truncation), written through dst's storage.
  EXPECT_THAT(dst.ToDoubles(), ElementsAre(1, -2, 3, 4));
  EXPECT_THAT((*r)[0].ToDoubles(), ElementsAre(1, -2, 3, 4));
  // A transposed dst view is written through its strides.
  HostTensor base = T(proto::FLOAT32, {2, 2}, {0, 0, 0, 0});
  HostTensor view = base.View({2, 2}, {1, 2}, 0);
  inputs = {view, src};
  dtypes = {proto::FLOAT32};
  r = (*k)(KernelContext{inputs, attrs, shapes, dtypes});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(base.ToDoubles(), ElementsAre(1.5, 3, -2.7f, 4));
}

// --- integer arithmetic ----------------------------------------------------------------------

TEST(PrimsKernels, IntegerDivRemainderFmodSigns) {
  HostTensor a = I32({7, -7, 7, -7, 0, -2147483648.0});
  HostTensor b = I32({2, 2, -2, -2, 5, -1});
  EXPECT_THAT(Values("prims.div", {a, b}), ElementsAre(3, -3, -3, 3, 0, -2147483648.0));
  EXPECT_THAT(Values("prims.remainder", {a, b}), ElementsAre(1, 1, -1, -1, 0, 0));
  EXPECT_THAT(Values("prims.fmod", {a, b}), ElementsAre(1, -1, 1, -1, 0, 0));
  HostTensor x = T(proto::INT64, {1}, {-9223372036854775808.0});
  HostTensor m1 = T(proto::INT64, {1}, {-1});
  EXPECT_THAT(Values("prims.div", {x, m1}), ElementsAre(-9223372036854775808.0));
  EXPECT_THAT(Values("prims.remainder", {x, m1}), ElementsAre(0));
}

TEST(PrimsKernels, IntegerErrors) {
  HostTensor a = I32({1, 2}), z = I32({1, 0});
  EXPECT_THAT(RunError("prims.div", {a, z}), HasSubstr("prims.div: integer division by zero"));
  EXPECT_THAT(RunError("prims.remainder", {a, z}), HasSubstr("integer remainder by zero"));
  EXPECT_THAT(RunError("prims.fmod", {a, z}), HasSubstr("integer fmod by zero"));
  EXPECT_THAT(RunError("prims.pow", {a, I32({2, -1})}),
              HasSubstr("prims.pow: integer 2 to the negative power -1 is not allowed"));
  EXPECT_THAT(Values("prims.pow", {I32({3, -2, 5}), I32({4, 3, 0})}), ElementsAre(81, -8, 1));
  // Float division by zero is IEEE.
  HostTensor f = T(proto::FLOAT32, {2}, {1, -1}), fz = T(proto::FLOAT32, {2}, {0, 0});
  EXPECT_THAT(Values("prims.div", {f, fz}), ElementsAre(INFINITY, -INFINITY));
}

// --- pad, scatter, gather, slice, broadcast --------------------------------------------------

TEST(PrimsKernels, PadWithNegativeAmountsCrops) {
  HostTensor x = T(proto::FLOAT32, {5}, {0, 1, 2, 3, 4});
  EXPECT_THAT(Values("prims.pad", {x}, {{"low", IntList{-2}}, {"high", IntList{1}}, {"value", 9.0}}),
              ElementsAre(2, 3, 4, 9));
  EXPECT_THAT(Values("prims.pad", {x}, {{"low", IntList{1}}, {"high", IntList{-3}}, {"value", -1.0}}),
              ElementsAre(-1, 0, 1));
  HostTensor m = T(proto::INT64, {2, 3}, {0, 1, 2, 3, 4, 5});
  EXPECT_THAT(Values("prims.pad", {m},
                     {{"low", IntList{-1, 1}}, {"high", IntList{0, -2}}, {"value", int64_t{7}}}),
              ElementsAre(7, 3));
}

TEST(PrimsKernels, ScatterWithRepeatedIndices) {
  HostTensor x = T(proto::FLOAT32, {4}, {0, 0, 0, 0});
  HostTensor idx = T(proto::INT64, {4}, {1, 3, 1, 1});
  HostTensor src = T(proto::FLOAT32, {4}, {10, 20, 30, 40});
  // "none": the last write in row-major order wins.
  EXPECT_THAT(Values("prims.scatter", {x, idx, src},
                     {{"dim", int64_t{0}}, {"reduce", std::string("none")}}),
              ElementsAre(0, 40, 0, 20));
  EXPECT_THAT(Values("prims.scatter", {x, idx, src},
                     {{"dim", int64_t{0}}, {"reduce", std::string("add")}}),
              ElementsAre(0, 80, 0, 20));
  EXPECT_THAT(x.ToDoubles(), ElementsAre(0, 0, 0, 0));  // the input is not modified
  HostTensor bad = T(proto::INT64, {4}, {0, 4, 0, 0});
  EXPECT_THAT(RunError("prims.scatter", {x, bad, src},
                       {{"dim", int64_t{0}}, {"reduce", std::string("none")}}),
              HasSubstr("prims.scatter: index 4 is out of bounds for dimension 0 with size 4"));
}

TEST(PrimsKernels, GatherRejectsNegativeIndices) {
  HostTensor x = T(proto::FLOAT32, {3}, {1, 2, 3});
  EXPECT_THAT(Values("prims.gather", {x, T(proto::INT32, {2}, {2, 0})}, {{"dim", int64_t{0}}}),
              ElementsAre(3, 1));
  EXPECT_THAT(RunError("prims.gather", {x, T(proto::INT64, {1}, {-1})}, {{"dim", int64_t{0}}}),
              HasSubstr("prims.gather: index -1 is out of bounds for dimension 0 with size 3"));
}

TEST(PrimsKernels, SymbolicRelationsAreRecheckedOnConcreteSizes) {
  const SymExpr s = SymExpr::Symbol("s");
  // broadcast_in_dim of a symbolic dim to 4: fine for s = 1 and s = 4, an error for s = 3.
  auto run = [&](int64_t n) {
    Graph g("test");
    GraphBuilder b(g);
    Value* x = b.Input(TensorType(proto::FLOAT32, {s}));
    absl::StatusOr<std::vector<Value*>> outs =
        b.OpMulti("prims.broadcast_in_dim", {x},
                  {{"shape", SymList{2, 4}}, {"broadcast_dimensions", IntList{1}}});
    EXPECT_TRUE(outs.ok()) << outs.status();
    g.SetOutputs(*outs);
    std::vector<double> v(n, 1.0);
    return Interpret(g, {T(proto::FLOAT32, {n}, v)});
  };
  EXPECT_TRUE(run(1).ok());
  EXPECT_TRUE(run(4).ok());
  absl::StatusOr<std::vector<HostTensor>> r = run(3);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(),
              HasSubstr("input dim 0 of size 3 cannot broadcast to output dim 1 of size 4"));
}

TEST(PrimsKernels, AmaxOfARuntimeEmptyDimIsAnError) {
  const ReferenceKernel* k = ReferenceKernels::Global().Find("prims.amax");
  ASSERT_NE(k, nullptr);
  std::vector<HostTensor> inputs = {HostTensor::Zeros(proto::FLOAT32, {0, 2})};
  AttrMap attrs = {{"dims", IntList{0}}};
  std::vector<std::vector<int64_t>> shapes = {{2}};
  std::vector<DType> dtypes = {proto::FLOAT32};
  absl::StatusOr<std::vector<HostTensor>> r = (*k)(KernelContext{inputs, attrs, shapes, dtypes});
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("prims.amax: cannot reduce over dim 0 of size 0"));
}

}  // namespace
}  // namespace coil
