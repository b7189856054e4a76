// In-place kernels and view aliasing in the reference interpreter, against PyTorch 1.13
// (expected values and messages computed with Debian's torch when this test was written).
// Functionalization of the same semantics is tested in prims/functionalize_test.
#include <vector>

#include "gtest/gtest.h"
#include "ir/builder.h"
#include "runtime/interpreter.h"

namespace coil {
namespace {

HostTensor Arange(DType dtype, std::vector<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(static_cast<double>(i));
  return HostTensor::FromDoubles(dtype, std::move(shape), v);
}

Value* Op(GraphBuilder& b, const char* op, std::vector<Value*> in, AttrMap attrs = {}) {
  absl::StatusOr<Value*> v = b.Op(op, std::move(in), std::move(attrs));
  EXPECT_TRUE(v.ok()) << v.status();
  return v.ok() ? *v : nullptr;
}

// Runs g on x (and more inputs); returns x's final contents and checks output 0 aliases it.
std::vector<double> RunAndRead(const Graph& g, std::vector<HostTensor> inputs) {
  absl::StatusOr<std::vector<HostTensor>> out = Interpret(g, inputs);
  EXPECT_TRUE(out.ok()) << out.status();
  return inputs[0].ToDoubles();
}

TEST(InplaceKernels, AddScalarOnSliceWritesThroughToTheBase) {
  // x = arange(6.).reshape(2, 3); x[:, 1:].add_(1.0)
  Graph g("f");
  GraphBuilder b(g);
  Value* x = b.Input(TensorType(proto::FLOAT32, {2, 3}), "x");
  Value* s = Op(b, "aten.slice", {x}, {{"dim", int64_t{1}}, {"start", SymExpr(1)}});
  g.SetOutputs({Op(b, "aten.add_scalar_", {s}, {{"other", 1.0}})});
  EXPECT_EQ(RunAndRead(g, {Arange(proto::FLOAT32, {2, 3})}),
            (std::vector<double>{0, 2, 3, 3, 5, 6}));
}

TEST(InplaceKernels, BoolResultIsCastToSelf) {
  // x.lt_(torch.full((2, 3), 2.5))
  Graph g("f");
  GraphBuilder b(g);
  Value* x = b.Input(TensorType(proto::FLOAT32, {2, 3}), "x");
  Value* y = b.Input(TensorType(proto::FLOAT32, {2, 3}), "y");
  g.SetOutputs({Op(b, "aten.lt_", {x, y})});
  HostTensor y_val = HostTensor::FromDoubles(proto::FLOAT32, {2, 3}, {2.5, 2.5, 2.5, 2.5, 2.5, 2.5});
  EXPECT_EQ(RunAndRead(g, {Arange(proto::FLOAT32, {2, 3}), y_val}),
            (std::vector<double>{1, 1, 1, 0, 0, 0}));
}

TEST(InplaceKernels, FillTruncatesForIntegers) {
  // x = arange(4).reshape(2, 2); x[1].fill_(2.7)
  Graph g("f");
  GraphBuilder b(g);
  Value* x = b.Input(TensorType(proto::INT64, {2, 2}), "x");
  Value* r = Op(b, "aten.select", {x}, {{"dim", int64_t{0}}, {"index", SymExpr(1)}});
  g.SetOutputs({Op(b, "aten.fill_", {r}, {{"value", 2.7}})});
  EXPECT_EQ(RunAndRead(g, {Arange(proto::INT64, {2, 2})}), (std::vector<double>{0, 1, 2, 2}));
}

TEST(InplaceKernels, ReshapeOfTransposeIsACopy) {
  // r = x.t().reshape(6); r.add_(1.0): x unchanged, r = [1, 4, 2, 5, 3, 6]
  Graph g("f");
  GraphBuilder b(g);
  Value* x = b.Input(TensorType(proto::FLOAT32, {2, 3}), "x");
  Value* r = Op(b, "aten.reshape", {Op(b, "aten.t", {x})}, {{"shape", SymList{SymExpr(6)}}});
  g.SetOutputs({Op(b, "aten.add_scalar_", {r}, {{"other", 1.0}})});
  std::vector<HostTensor> in = {Arange(proto::FLOAT32, {2, 3})};
  absl::StatusOr<std::vector<HostTensor>> out = Interpret(g, in);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].ToDoubles(), (std::vector<double>{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(in[0].ToDoubles(), (std::vector<double>{0, 1, 2, 3, 4, 5}));
}

TEST(InplaceKernels, ZeroThroughUnsqueezeOfTranspose) {
  // x.t().unsqueeze(0).zero_() is a view: x becomes zeros. Also in float64 mode.
  for (bool float64 : {false, true}) {
    Graph g("f");
    GraphBuilder b(g);
    Value* x = b.Input(TensorType(proto::FLOAT32, {2, 3}), "x");
    Value* r = Op(b, "aten.unsqueeze", {Op(b, "aten.t", {x})}, {{"dim", int64_t{0}}});
    g.SetOutputs({Op(b, "aten.zero_", {r})});
    std::vector<HostTensor> in = {Arange(proto::FLOAT32, {2, 3})};
    InterpreterOptions options;
    options.float64 = float64;
    ASSERT_TRUE(Interpret(g, in, options).ok());
    EXPECT_EQ(in[0].ToDoubles(), (std::vector<double>(6, 0.0)));
  }
}

TEST(InplaceMeta, TorchErrors) {
  Graph g("f");
  GraphBuilder b(g);
  Value* xi = b.Input(TensorType(proto::INT64, {2, 3}), "xi");
  Value* x3 = b.Input(TensorType(proto::FLOAT32, {3}), "x3");
  Value* y = b.Input(TensorType(proto::FLOAT32, {2, 3}), "y");
  absl::StatusOr<Value*> cast = b.Op("aten.add_scalar_", {xi}, {{"other", 1.5}});
  ASSERT_FALSE(cast.ok());
  EXPECT_NE(cast.status().message().find(
                "result type Float can't be cast to the desired output type Long"),
            absl::string_view::npos)
      << cast.status();
  absl::StatusOr<Value*> shape = b.Op("aten.add_", {x3, y});
  ASSERT_FALSE(shape.ok());
  EXPECT_NE(shape.status().message().find(
                "output with shape [3] doesn't match the broadcast shape [2, 3]"),
            absl::string_view::npos)
      << shape.status();
}

}  // namespace
}  // namespace coil

namespace coil {
namespace {

// x = arange(9.).reshape(3, 3); x.t().copy_(x), x.t().add_(x), x[0:2].copy_(x[1:3]): PyTorch
// refuses writes whose input covers some of the written elements differently.
TEST(InplaceKernels, PartialOverlapWithTheWrittenTensorIsRefused) {
  const std::string want =
      "unsupported operation: some elements of the input tensor and the written-to tensor "
      "refer to a single memory location. Please clone() the tensor before performing the "
      "operation.";
  auto refused = [&](const char* op, bool slices) {
    Graph g("f");
    GraphBuilder b(g);
    Value* x = b.Input(TensorType(proto::FLOAT32, {3, 3}), "x");
    Value* self = slices ? Op(b, "aten.slice", {x}, {{"dim", int64_t{0}}, {"start", SymExpr(0)},
                                                     {"end", SymExpr(2)}})
                         : Op(b, "aten.t", {x});
    Value* src = slices ? Op(b, "aten.slice", {x}, {{"dim", int64_t{0}}, {"start", SymExpr(1)},
                                                    {"end", SymExpr(3)}})
                        : x;
    AttrMap attrs;
    if (std::string(op) == "aten.add_") attrs = {{"alpha", 1.0}};
    g.SetOutputs({Op(b, op, {self, src}, attrs)});
    HostTensor in = Arange(proto::FLOAT32, {3, 3});
    absl::StatusOr<std::vector<HostTensor>> out = Interpret(g, {in});
    EXPECT_FALSE(out.ok()) << op;
    if (!out.ok()) EXPECT_NE(out.status().message().find(want), std::string::npos) << out.status();
    EXPECT_EQ(in.ToDoubles(), Arange(proto::FLOAT32, {3, 3}).ToDoubles()) << op << ": written";
  };
  refused("aten.copy_", false);
  refused("aten.add_", false);
  refused("aten.copy_", true);
}

// What PyTorch allows: the same tensor (x.add_(x)), disjoint slices of one storage, a clone.
// (An expanded input over the written tensor is not checked by PyTorch and its result depends
// on its iteration order: not asserted.)
TEST(InplaceKernels, OverlapPyTorchAllows) {
  {  // x = arange(12.).reshape(4, 3); x[0:2].copy_(x[2:4]); x.add_(x)
    Graph g("f");
    GraphBuilder b(g);
    Value* x = b.Input(TensorType(proto::FLOAT32, {4, 3}), "x");
    Value* top = Op(b, "aten.slice", {x}, {{"dim", int64_t{0}}, {"start", SymExpr(0)},
                                           {"end", SymExpr(2)}});
    Value* bottom = Op(b, "aten.slice", {x}, {{"dim", int64_t{0}}, {"start", SymExpr(2)},
                                              {"end", SymExpr(4)}});
    Op(b, "aten.copy_", {top, bottom});
    g.SetOutputs({Op(b, "aten.add_", {x, x}, {{"alpha", 1.0}})});
    EXPECT_EQ(RunAndRead(g, {Arange(proto::FLOAT32, {4, 3})}),
              (std::vector<double>{12, 14, 16, 18, 20, 22, 12, 14, 16, 18, 20, 22}));
  }
  {  // x = arange(9.).reshape(3, 3); x.t().copy_(x.clone())
    Graph g("f");
    GraphBuilder b(g);
    Value* x = b.Input(TensorType(proto::FLOAT32, {3, 3}), "x");
    g.SetOutputs({Op(b, "aten.copy_", {Op(b, "aten.t", {x}), Op(b, "aten.clone", {x})})});
    EXPECT_EQ(RunAndRead(g, {Arange(proto::FLOAT32, {3, 3})}),
              (std::vector<double>{0, 3, 6, 1, 4, 7, 2, 5, 8}));
  }
}

}  // namespace
}  // namespace coil
