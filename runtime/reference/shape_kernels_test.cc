// Shape and indexing kernels through the interpreter: symbolic attributes bound at run time
// (slice bounds, select index, split sizes) and data-dependent errors (out-of-range indices,
// symbolic sizes that turn out wrong). Values of ordinary cases are checked against PyTorch by
// //tests/torch_oracle:shape_oracle_test and :indexing_oracle_test.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/builder.h"
#include "runtime/interpreter.h"

namespace coil {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const SymExpr kS = SymExpr::Symbol("s");

std::vector<double> Iota(int64_t n) {
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<double>(i);
  return v;
}

// One node over graph inputs of the given types, run on `args`.
absl::StatusOr<std::vector<HostTensor>> RunOp(const std::string& op,
                                              const std::vector<TensorType>& types,
                                              const std::vector<HostTensor>& args, AttrMap attrs) {
  Graph g("test");
  GraphBuilder b(g);
  std::vector<Value*> in;
  for (const TensorType& t : types) in.push_back(b.Input(t));
  absl::StatusOr<std::vector<Value*>> outs = b.OpMulti(op, in, std::move(attrs));
  if (!outs.ok()) return outs.status();
  g.SetOutputs(*outs);
  return Interpret(g, args);
}

std::string RunError(const std::string& op, const std::vector<TensorType>& types,
                     const std::vector<HostTensor>& args, AttrMap attrs) {
  absl::StatusOr<std::vector<HostTensor>> r = RunOp(op, types, args, std::move(attrs));
  EXPECT_FALSE(r.ok()) << op << " unexpectedly succeeded";
  return std::string(r.status().message());
}

HostTensor F32(std::vector<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return HostTensor::FromDoubles(proto::FLOAT32, shape, Iota(n));
}
HostTensor I64(std::vector<int64_t> shape, std::vector<double> values) {
  return HostTensor::FromDoubles(proto::INT64, std::move(shape), values);
}

TEST(ShapeKernels, SliceWithSymbolicEnd) {
  // x[1:s-1] of a [s] input, run with s = 5.
  absl::StatusOr<std::vector<HostTensor>> r =
      RunOp("aten.slice", {TensorType(proto::FLOAT32, {kS})}, {F32({5})},
            {{"start", int64_t{1}}, {"end", kS - 1}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT((*r)[0].ToDoubles(), ElementsAre(1, 2, 3));
}

TEST(ShapeKernels, SelectAndNarrowWithSymbolicAttrs) {
  absl::StatusOr<std::vector<HostTensor>> r =
      RunOp("aten.select", {TensorType(proto::FLOAT32, {kS, 2})}, {F32({3, 2})},
            {{"dim", int64_t{0}}, {"index", kS - 1}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT((*r)[0].ToDoubles(), ElementsAre(4, 5));
  r = RunOp("aten.narrow", {TensorType(proto::FLOAT32, {kS})}, {F32({4})},
            {{"dim", int64_t{0}}, {"start", int64_t{1}}, {"length", kS - 2}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT((*r)[0].ToDoubles(), ElementsAre(1, 2));
  EXPECT_THAT(RunError("aten.select", {TensorType(proto::FLOAT32, {kS})}, {F32({3})},
                       {{"dim", int64_t{0}}, {"index", kS}}),
              HasSubstr("select(): index 3 out of range for tensor of size [3] at dimension 0"));
}

TEST(ShapeKernels, SplitWithSymbolicSizes) {
  absl::StatusOr<std::vector<HostTensor>> r =
      RunOp("aten.split", {TensorType(proto::FLOAT32, {kS})}, {F32({4})},
            {{"sizes", SymList{kS - 1, 1}}});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_THAT((*r)[0].ToDoubles(), ElementsAre(0, 1, 2));
  EXPECT_THAT((*r)[1].ToDoubles(), ElementsAre(3));
}

TEST(ShapeKernels, SymbolicSizesThatTurnOutWrong) {
  // reshape [s] -> [3]: fine for s = 3, an error for s = 4.
  EXPECT_THAT(RunError("aten.reshape", {TensorType(proto::FLOAT32, {kS})}, {F32({4})},
                       {{"shape", IntList{3}}}),
              HasSubstr("cannot reshape f32[4] (4 elements) into [3] (3 elements)"));
  EXPECT_THAT(RunError("aten.expand", {TensorType(proto::FLOAT32, {kS})}, {F32({2})},
                       {{"size", IntList{2, 3}}}),
              HasSubstr("must match the existing size (2) at non-singleton dimension 1"));
  EXPECT_THAT(RunError("aten.cat",
                       {TensorType(proto::FLOAT32, {2, kS}), TensorType(proto::FLOAT32, {2, 3})},
                       {F32({2, 4}), F32({2, 3})}, {}),
              HasSubstr("Sizes of tensors must match except in dimension 0"));
  EXPECT_THAT(RunError("aten.pad", {TensorType(proto::FLOAT32, {1, kS})}, {F32({1, 2})},
                       {{"pad", IntList{2, 0}}, {"mode", std::string("reflect")}}),
              HasSubstr("reflect padding must be less than the corresponding input dimension"));
}

// Ops whose meta functions assume a relation of symbolic sizes that the reference kernel then
// checks, with torch 1.13's messages (read from torch.bmm, F.pixel_shuffle, F.pixel_unshuffle
// on the same shapes).
TEST(ShapeKernels, SymbolicSizesThatTurnOutWrongTorchWording) {
  TensorType a(proto::FLOAT32, {kS, 2, 3}), b(proto::FLOAT32, {1, 3, 2});
  EXPECT_THAT(RunError("aten.bmm", {a, b}, {F32({4, 2, 3}), F32({1, 3, 2})}, {}),
              HasSubstr("Expected size for first two dimensions of batch2 tensor to be: [4, 3] "
                        "but got: [1, 3]."));
  EXPECT_THAT(RunError("aten.baddbmm", {TensorType(proto::FLOAT32, {1, 2, 2}), a, b},
                       {F32({1, 2, 2}), F32({4, 2, 3}), F32({1, 3, 2})}, {}),
              HasSubstr("Expected size for first two dimensions of batch2 tensor to be: [4, 3] "
                        "but got: [1, 3]."));
  EXPECT_THAT(RunError("aten.pixel_shuffle", {TensorType(proto::FLOAT32, {1, kS, 2, 2})},
                       {F32({1, 5, 2, 2})}, {{"upscale_factor", int64_t{2}}}),
              HasSubstr("pixel_shuffle expects its input's 'channel' dimension to be divisible "
                        "by the square of upscale_factor, but input.size(-3)=5 is not divisible "
                        "by 4"));
  EXPECT_THAT(RunError("aten.pixel_unshuffle", {TensorType(proto::FLOAT32, {1, 5, kS, 2})},
                       {F32({1, 5, 3, 2})}, {{"downscale_factor", int64_t{2}}}),
              HasSubstr("pixel_unshuffle expects height to be divisible by downscale_factor, but "
                        "input.size(-2)=3 is not divisible by 2"));
  // Sizes that do fit still run.
  absl::StatusOr<std::vector<HostTensor>> r =
      RunOp("aten.bmm", {a, TensorType(proto::FLOAT32, {kS, 3, 2})},
            {F32({1, 2, 3}), F32({1, 3, 2})}, {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT((*r)[0].ToDoubles(), ElementsAre(10, 13, 28, 40));
}

TEST(IndexingKernels, OutOfRangeIndices) {
  TensorType x(proto::FLOAT32, {3, 4});
  EXPECT_THAT(RunError("aten.gather", {x, TensorType(proto::INT64, {3, 1})},
                       {F32({3, 4}), I64({3, 1}, {0, 4, 1})}, {{"dim", int64_t{1}}}),
              HasSubstr("gather: index 4 is out of bounds for dimension 1 with size 4"));
  EXPECT_THAT(RunError("aten.gather", {x, TensorType(proto::INT64, {1, 1})},
                       {F32({3, 4}), I64({1, 1}, {-1})}, {{"dim", int64_t{0}}}),
              HasSubstr("gather: index -1 is out of bounds for dimension 0 with size 3"));
  EXPECT_THAT(RunError("aten.scatter", {x, TensorType(proto::INT64, {1, 2}), x},
                       {F32({3, 4}), I64({1, 2}, {0, 3}), F32({3, 4})}, {{"dim", int64_t{0}}}),
              HasSubstr("scatter: index 3 is out of bounds for dimension 0 with size 3"));
  EXPECT_THAT(RunError("aten.scatter_add", {x, TensorType(proto::INT64, {1, 1}), x},
                       {F32({3, 4}), I64({1, 1}, {-7}), F32({3, 4})}, {{"dim", int64_t{1}}}),
              HasSubstr("scatter_add: index -7 is out of bounds for dimension 1 with size 4"));
  EXPECT_THAT(RunError("aten.index_select", {x, TensorType(proto::INT64, {2})},
                       {F32({3, 4}), I64({2}, {1, 9})}, {{"dim", int64_t{0}}}),
              HasSubstr("index_select: index 9 is out of bounds for dimension 0 with size 3"));
  EXPECT_THAT(RunError("aten.embedding", {x, TensorType(proto::INT64, {2})},
                       {F32({3, 4}), I64({2}, {3, 0})}, {}),
              HasSubstr("embedding: index 3 is out of bounds for dimension 0 with size 3"));
  EXPECT_THAT(RunError("aten.index_tensor", {x, TensorType(proto::INT64, {2})},
                       {F32({3, 4}), I64({2}, {-4, 0})}, {{"dim", int64_t{0}}}),
              HasSubstr("index: index -4 is out of bounds for dimension 0 with size 3"));
  EXPECT_THAT(RunError("aten.index_put",
                       {x, TensorType(proto::INT64, {1}), TensorType(proto::FLOAT32, {1})},
                       {F32({3, 4}), I64({1}, {4}), F32({1})}, {{"dim", int64_t{1}}}),
              HasSubstr("index_put: index 4 is out of bounds for dimension 1 with size 4"));
  EXPECT_THAT(RunError("aten.one_hot", {TensorType(proto::INT64, {2})}, {I64({2}, {1, 5})},
                       {{"num_classes", int64_t{5}}}),
              HasSubstr("one_hot: class value 5 is out of range [0, 5)"));
}

TEST(IndexingKernels, IndexIntoEmptyDimension) {
  EXPECT_THAT(RunError("aten.index_select",
                       {TensorType(proto::FLOAT32, {0, 2}), TensorType(proto::INT64, {1})},
                       {F32({0, 2}), I64({1}, {0})}, {{"dim", int64_t{0}}}),
              HasSubstr("index 0 is out of bounds for dimension 0 with size 0"));
  // Empty index tensors read nothing.
  absl::StatusOr<std::vector<HostTensor>> r =
      RunOp("aten.gather", {TensorType(proto::FLOAT32, {0, 2}), TensorType(proto::INT64, {0, 2})},
            {F32({0, 2}), I64({0, 2}, {})}, {{"dim", int64_t{0}}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].numel(), 0);
}

// aten.view of a transposed tensor: PyTorch 1.13 views [4, 3] with strides (1, 4) as
// [4, 1, 3] but refuses [12], which aten.reshape copies.
TEST(ShapeKernels, ViewRefusesALayoutItCannotView) {
  auto run = [](const char* op, SymList shape) {
    Graph g("test");
    GraphBuilder b(g);
    Value* x = b.Input(TensorType(proto::FLOAT32, {3, 4}));
    absl::StatusOr<Value*> t = b.Op("aten.t", {x}, {});
    EXPECT_TRUE(t.ok()) << t.status();
    absl::StatusOr<Value*> v = b.Op(op, {*t}, {{"shape", std::move(shape)}});
    EXPECT_TRUE(v.ok()) << v.status();
    g.SetOutputs({*v});
    return Interpret(g, {F32({3, 4})});
  };
  absl::StatusOr<std::vector<HostTensor>> flat = run("aten.view", {SymExpr(12)});
  ASSERT_FALSE(flat.ok());
  EXPECT_THAT(flat.status().message(),
              HasSubstr("view size is not compatible with input tensor's size and stride"));
  absl::StatusOr<std::vector<HostTensor>> viewed =
      run("aten.view", {SymExpr(4), SymExpr(1), SymExpr(3)});
  ASSERT_TRUE(viewed.ok()) << viewed.status();
  EXPECT_THAT((*viewed)[0].ToDoubles(), ElementsAre(0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11));
  absl::StatusOr<std::vector<HostTensor>> reshaped = run("aten.reshape", {SymExpr(12)});
  ASSERT_TRUE(reshaped.ok()) << reshaped.status();
  EXPECT_THAT((*reshaped)[0].ToDoubles(), ElementsAre(0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11));
}

}  // namespace
}  // namespace coil
