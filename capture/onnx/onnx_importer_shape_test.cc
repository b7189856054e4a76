// Operands computed from shapes (issue 15, item 9): Shape -> Gather -> arithmetic -> Concat
// chains fold at import, to constants for static shapes and to SymExprs for symbolic ones, with
// ONNX's integer semantics (Div truncates, Mod's fmod, Reshape's 0 and -1); what a SymExpr
// cannot express is an error naming the node that lost the value and why. Also the single-
// assignment checks (a name written twice). Models are built in C++; values are checked with
// the reference interpreter against hand-computed results.
#include <algorithm>
#include <string>
#include <vector>

#include "capture/onnx/internal/model_builder_testing.h"
#include "capture/onnx/onnx_importer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/graph.h"
#include "ir/printer.h"
#include "runtime/host_tensor.h"
#include "runtime/interpreter.h"

namespace coil::onnx {
namespace {

using ::onnx::TensorProto;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using onnx_testing::ModelBuilder;
using onnx_testing::SetAttr;

Graph Import(const ModelBuilder& m) {
  absl::StatusOr<Graph> g = ImportOnnxModelAsGraph(m.Bytes());
  EXPECT_TRUE(g.ok()) << g.status();
  return g.ok() ? *std::move(g) : Graph();
}

absl::Status ImportError(const ModelBuilder& m) {
  absl::StatusOr<Graph> g = ImportOnnxModelAsGraph(m.Bytes());
  return g.ok() ? absl::InternalError("imported:\n" + PrintGraph(*g)) : g.status();
}

std::vector<double> RunOne(const Graph& g, const HostTensor& x) {
  absl::StatusOr<std::vector<HostTensor>> out = Interpret(g, {x});
  EXPECT_TRUE(out.ok()) << out.status() << "\n" << PrintGraph(g);
  if (!out.ok() || out->size() != 1) return {};
  return (*out)[0].ToDoubles();
}

HostTensor Ones(std::vector<int64_t> shape) {
  HostTensor t = HostTensor::Zeros(proto::FLOAT32, shape);
  std::vector<double> v(t.numel(), 1.0);
  return HostTensor::FromDoubles(proto::FLOAT32, std::move(shape), v);
}

// "d" = dimension `axis` of x as a 0-D int64 (Shape -> Gather), as exporters write it.
void Dim(ModelBuilder& m, const std::string& x, int64_t axis, const std::string& d) {
  m.Node("Shape", {x}, {d + "_shape"});
  m.InitInt64(d + "_axis", {}, {axis});
  m.Node("Gather", {d + "_shape", d + "_axis"}, {d});
}

// 1-D [v] from a 0-D v.
void Unsqueeze0(ModelBuilder& m, const std::string& v, const std::string& out) {
  m.InitInt64(out + "_axes", {1}, {0});
  m.Node("Unsqueeze", {v, out + "_axes"}, {out});
}

// x: [1, h] padded on the right to a multiple of 3: pads = [0, 0, 0, (3 - h % 3) % 3], the
// windowed-attention pattern.
ModelBuilder PadToMultipleOf3(const std::vector<onnx_testing::Dim>& dims) {
  ModelBuilder m(13);
  m.Input("x", TensorProto::FLOAT, dims);
  Dim(m, "x", 1, "h");
  m.InitInt64("three", {}, {3});
  m.Node("Mod", {"h", "three"}, {"r"});
  m.Node("Sub", {"three", "r"}, {"t"});
  m.Node("Mod", {"t", "three"}, {"p"}, "pad_amount");
  Unsqueeze0(m, "p", "p1");
  m.InitInt64("zeros", {3}, {0, 0, 0});
  SetAttr(m.Node("Concat", {"zeros", "p1"}, {"pads"}), "axis", int64_t{0});
  m.InitFloat("value", {}, {-1});
  m.Node("Pad", {"x", "pads", "value"}, {"y"}, "pad");
  m.Output("y");
  return m;
}

TEST(OnnxShapeOperands, PadToMultipleFoldsForStaticShapes) {
  Graph g = Import(PadToMultipleOf3({1, 4}));
  EXPECT_EQ(g.outputs()[0]->type().ToString(), "f32[1, 6]");
  EXPECT_THAT(RunOne(g, Ones({1, 4})), ElementsAre(1, 1, 1, 1, -1, -1));
}

TEST(OnnxShapeOperands, PadToMultipleIsSymbolicForSymbolicShapes) {
  Graph g = Import(PadToMultipleOf3({1, "h"}));
  EXPECT_EQ(g.outputs()[0]->type().ToString(), "f32[1, h + mod(2*h, 3)]");
  // One graph, several sizes: padded by 2, by 0 and by 1.
  EXPECT_THAT(RunOne(g, Ones({1, 4})), ElementsAre(1, 1, 1, 1, -1, -1));
  EXPECT_THAT(RunOne(g, Ones({1, 3})), ElementsAre(1, 1, 1));
  EXPECT_THAT(RunOne(g, Ones({1, 2})), ElementsAre(1, 1, -1));
}

// A negative symbolic pad crops: pads = [0, 0, 0, -(h % 2)].
TEST(OnnxShapeOperands, NegativeSymbolicPadCrops) {
  ModelBuilder m(13);
  m.Input("x", TensorProto::FLOAT, {1, "h"});
  Dim(m, "x", 1, "h");
  m.InitInt64("two", {}, {2});
  m.Node("Mod", {"h", "two"}, {"r"});
  m.Node("Neg", {"r"}, {"p"});
  Unsqueeze0(m, "p", "p1");
  m.InitInt64("zeros", {3}, {0, 0, 0});
  SetAttr(m.Node("Concat", {"zeros", "p1"}, {"pads"}), "axis", int64_t{0});
  m.Node("Pad", {"x", "pads"}, {"y"});
  m.Output("y");
  Graph g = Import(m);
  EXPECT_THAT(RunOne(g, Ones({1, 5})), ElementsAre(1, 1, 1, 1));
  EXPECT_THAT(RunOne(g, Ones({1, 4})), ElementsAre(1, 1, 1, 1));
}

TEST(OnnxShapeOperands, SymbolicPadNeedsConstantMode) {
  ModelBuilder m = PadToMultipleOf3({1, "h"});
  SetAttr(*m.model().mutable_graph()->mutable_node(m.model().graph().node_size() - 1), "mode",
          std::string("reflect"));
  absl::Status s = ImportError(m);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(s.message(), HasSubstr("op Pad: symbolic pads (mod(2*h, 3)) in mode reflect (only "
                                     "constant mode takes pads computed from symbolic shapes) "
                                     "(node 'pad')"));
}

TEST(OnnxShapeOperands, SymbolicPadOfUnknownSign) {
  // pads = [0, 0, 0, 8 - h]: a constant window burned in by tracing; negative for h > 8.
  ModelBuilder m(13);
  m.Input("x", TensorProto::FLOAT, {1, "h"});
  Dim(m, "x", 1, "h");
  m.InitInt64("eight", {}, {8});
  m.Node("Sub", {"eight", "h"}, {"p"});
  Unsqueeze0(m, "p", "p1");
  m.InitInt64("zeros", {3}, {0, 0, 0});
  SetAttr(m.Node("Concat", {"zeros", "p1"}, {"pads"}), "axis", int64_t{0});
  m.Node("Pad", {"x", "pads"}, {"y"}, "pad");
  m.Output("y");
  absl::Status s = ImportError(m);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(s.message(), HasSubstr("op Pad: pad amount -h + 8 on axis 1 may be negative or "
                                     "positive (a symbolic pad must have a known sign) (node 'pad')"));
}

// Reshape to [batch, -1, heads, dim] from Shape + Gather + Concat.
TEST(OnnxShapeOperands, ReshapeTargetFromShapeGatherConcat) {
  ModelBuilder m(13);
  m.Input("x", TensorProto::FLOAT, {"b", "t", 8});
  Dim(m, "x", 0, "b");
  Unsqueeze0(m, "b", "b1");
  m.InitInt64("rest", {3}, {-1, 2, 4});
  SetAttr(m.Node("Concat", {"b1", "rest"}, {"shape"}), "axis", int64_t{0});
  m.Node("Reshape", {"x", "shape"}, {"y"});
  m.Output("y");
  Graph g = Import(m);
  EXPECT_EQ(g.outputs()[0]->type().ToString(), "f32[b, t, 2, 4]");
}

// Reshape's 0 copies the input's dimension, also inside a computed target: [0, h * w].
TEST(OnnxShapeOperands, ReshapeZeroAndProductOfDims) {
  ModelBuilder m(13);
  m.Input("x", TensorProto::FLOAT, {"b", "h", "w"});
  Dim(m, "x", 1, "h");
  Dim(m, "x", 2, "w");
  m.Node("Mul", {"h", "w"}, {"hw"});
  Unsqueeze0(m, "hw", "hw1");
  m.InitInt64("zero", {1}, {0});
  SetAttr(m.Node("Concat", {"zero", "hw1"}, {"shape"}), "axis", int64_t{0});
  m.Node("Reshape", {"x", "shape"}, {"y"});
  m.Output("y");
  Graph g = Import(m);
  EXPECT_EQ(g.outputs()[0]->type().ToString(), "f32[b, h*w]");
}

// Slice bounds from shape arithmetic: x[:, h // 4 : h - h // 4] and x[:, -(h // 2):].
TEST(OnnxShapeOperands, SliceBoundsFromShapeArithmetic) {
  ModelBuilder m(13);
  m.Input("x", TensorProto::FLOAT, {1, "h"});
  Dim(m, "x", 1, "h");
  m.InitInt64("four", {}, {4});
  m.Node("Div", {"h", "four"}, {"q"});
  m.Node("Sub", {"h", "q"}, {"e"});
  Unsqueeze0(m, "q", "starts");
  Unsqueeze0(m, "e", "ends");
  m.InitInt64("axes", {1}, {1});
  m.Node("Slice", {"x", "starts", "ends", "axes"}, {"y"});
  m.Output("y");
  Graph g = Import(m);
  EXPECT_EQ(g.outputs()[0]->type().ToString(), "f32[1, h - 2*floordiv(h, 4)]");
  HostTensor x = HostTensor::FromDoubles(proto::FLOAT32, {1, 9}, {0, 1, 2, 3, 4, 5, 6, 7, 8});
  EXPECT_THAT(RunOne(g, x), ElementsAre(2, 3, 4, 5, 6));
}

// ONNX integer Div truncates toward zero: (1 - h) / 2 at h = 4 is -1 (floor division: -2).
TEST(OnnxShapeOperands, SymbolicDivTruncatesTowardZero) {
  ModelBuilder m(13);
  m.Input("x", TensorProto::FLOAT, {"h"});
  Dim(m, "x", 0, "h");
  m.InitInt64("one", {}, {1});
  m.InitInt64("two", {}, {2});
  m.Node("Sub", {"one", "h"}, {"d"});
  m.Node("Div", {"d", "two"}, {"y"});
  m.Output("y", TensorProto::INT64);
  Graph g = Import(m);
  EXPECT_THAT(RunOne(g, Ones({4})), ElementsAre(-1));
  EXPECT_THAT(RunOne(g, Ones({5})), ElementsAre(-2));
  EXPECT_THAT(RunOne(g, Ones({1})), ElementsAre(0));
}

// Mod with fmod=1 takes the dividend's sign: fmod(1 - h, 4) at h = 7 is -2 (fmod=0: 2).
TEST(OnnxShapeOperands, SymbolicFmodTakesTheDividendsSign) {
  for (int64_t fmod : {0, 1}) {
    ModelBuilder m(13);
    m.Input("x", TensorProto::FLOAT, {"h"});
    Dim(m, "x", 0, "h");
    m.InitInt64("one", {}, {1});
    m.InitInt64("four", {}, {4});
    m.Node("Sub", {"one", "h"}, {"d"});
    SetAttr(m.Node("Mod", {"d", "four"}, {"y"}), "fmod", fmod);
    m.Output("y", TensorProto::INT64);
    Graph g = Import(m);
    EXPECT_THAT(RunOne(g, Ones({7})), ElementsAre(fmod ? -2 : 2)) << "fmod=" << fmod;
  }
}

// Sizes computed in floating point: pad = ceil(h / 4.0) * 4 - h through Cast(float), Div,
// Ceil, Cast(int64), and floor(h * 0.5) as data.
TEST(OnnxShapeOperands, FloatSizeArithmeticThroughCast) {
  ModelBuilder m(13);
  m.Input("x", TensorProto::FLOAT, {1, "h"});
  Dim(m, "x", 1, "h");
  SetAttr(m.Node("Cast", {"h"}, {"hf"}), "to", int64_t{TensorProto::FLOAT});
  m.InitFloat("four_f", {}, {4});
  m.Node("Div", {"hf", "four_f"}, {"q"});
  m.Node("Ceil", {"q"}, {"qc"});
  SetAttr(m.Node("Cast", {"qc"}, {"n"}), "to", int64_t{TensorProto::INT64});
  m.InitInt64("four", {}, {4});
  m.Node("Mul", {"n", "four"}, {"n4"});
  m.Node("Sub", {"n4", "h"}, {"p"});
  Unsqueeze0(m, "p", "p1");
  m.InitInt64("zeros", {3}, {0, 0, 0});
  SetAttr(m.Node("Concat", {"zeros", "p1"}, {"pads"}), "axis", int64_t{0});
  m.Node("Pad", {"x", "pads"}, {"y"});
  m.Output("y");
  m.InitFloat("half", {}, {0.5f});
  m.Node("Mul", {"hf", "half"}, {"hh"});
  m.Node("Floor", {"hh"}, {"z"});
  m.Output("z", TensorProto::FLOAT);
  Graph g = Import(m);
  EXPECT_EQ(g.outputs()[0]->type().ToString(), "f32[1, 4*floordiv(h + 3, 4)]");
  for (int64_t h : {5, 8, 1}) {
    absl::StatusOr<std::vector<HostTensor>> out = Interpret(g, {Ones({1, h})});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].shape(), std::vector<int64_t>({1, (h + 3) / 4 * 4})) << "h=" << h;
    EXPECT_THAT((*out)[1].ToDoubles(), ElementsAre(static_cast<double>(h / 2))) << "h=" << h;
  }
}

// Shape -> Reshape [2, 2] -> Transpose -> Reshape [-1] (exporters reorder F.pad's pads so).
TEST(OnnxShapeOperands, TransposeOfKnownValuesFolds) {
  ModelBuilder m(13);
  m.Input("x", TensorProto::FLOAT, {2, 3, "h", 5});
  m.Node("Shape", {"x"}, {"s"});
  m.InitInt64("square", {2}, {2, 2});
  m.Node("Reshape", {"s", "square"}, {"s2"});
  SetAttr(m.Node("Transpose", {"s2"}, {"t"}), "perm", std::vector<int64_t>{1, 0});
  m.InitInt64("flat", {1}, {-1});
  m.Node("Reshape", {"t", "flat"}, {"target"});
  m.Node("Reshape", {"x", "target"}, {"y"});
  m.Output("y");
  Graph g = Import(m);
  EXPECT_EQ(g.outputs()[0]->type().ToString(), "f32[2, h, 3, 5]");
}

// A Div whose quotient a SymExpr cannot express, consumed as a Reshape target: the error names
// the Div node and why.
TEST(OnnxShapeOperands, UnfoldableDivIsNamedWhereTheShapeIsNeeded) {
  ModelBuilder m(13);
  m.Input("x", TensorProto::FLOAT, {"h"});
  Dim(m, "x", 0, "h");
  m.InitInt64("three", {}, {3});
  m.InitInt64("two", {}, {2});
  m.Node("Sub", {"h", "three"}, {"d"});
  m.Node("Div", {"d", "two"}, {"q"}, "half");
  Unsqueeze0(m, "q", "q1");
  m.InitInt64("rest", {1}, {-1});
  SetAttr(m.Node("Concat", {"q1", "rest"}, {"shape"}), "axis", int64_t{0});
  m.Node("Reshape", {"x", "shape"}, {"y"}, "reshape");
  m.Output("y");
  absl::Status s = ImportError(m);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(s.message(),
              HasSubstr("op Reshape: shape ('shape') are not known at import time: node 'half' "
                        "(Div) cannot be evaluated at import time: the dividend h - 3 may be "
                        "negative or positive, and ONNX integer division truncates toward zero "
                        "where a symbolic floor division rounds down (node 'reshape')"));
}

// An op without an import-time folder on known inputs is named too.
TEST(OnnxShapeOperands, OpWithoutFolderIsNamedWhereTheShapeIsNeeded) {
  ModelBuilder m(13);
  m.Input("x", TensorProto::FLOAT, {"h", 2});
  m.Node("Shape", {"x"}, {"s"});
  m.InitInt64("axis", {}, {0});
  m.Node("CumSum", {"s", "axis"}, {"c"}, "cumsum");
  m.Node("Reshape", {"x", "c"}, {"y"}, "reshape");
  m.Output("y");
  absl::Status s = ImportError(m);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(s.message(), HasSubstr("op Reshape: shape ('c') are not known at import time: node "
                                     "'cumsum' (CumSum) is not evaluated at import time (the "
                                     "importer has no folder for this op) (node 'reshape')"));
}

// Range(h - 3, 2 * h, 2) with a symbolic start: start + 2 * arange(count).
TEST(OnnxShapeOperands, RangeWithSymbolicStart) {
  ModelBuilder m(13);
  m.Input("x", TensorProto::FLOAT, {"h"});
  Dim(m, "x", 0, "h");
  m.InitInt64("three", {}, {3});
  m.InitInt64("two", {}, {2});
  m.Node("Sub", {"h", "three"}, {"start"});
  m.Node("Mul", {"h", "two"}, {"limit"});
  m.Node("Range", {"start", "limit", "two"}, {"y"});
  m.Output("y", TensorProto::INT64);
  Graph g = Import(m);
  EXPECT_THAT(RunOne(g, Ones({4})), ElementsAre(1, 3, 5, 7));
  EXPECT_THAT(RunOne(g, Ones({1})), ElementsAre(-2, 0));
}

// ConstantOfShape, Expand and Tile take shapes computed from another input's shape.
TEST(OnnxShapeOperands, CreationAndBroadcastFromShapes) {
  ModelBuilder m(13);
  m.Input("x", TensorProto::FLOAT, {"b", "n"});
  m.Input("v", TensorProto::FLOAT, {1, "n"});
  m.Node("Shape", {"x"}, {"s"});
  m.Node("ConstantOfShape", {"s"}, {"zeros"});
  m.Node("Expand", {"v", "s"}, {"e"});
  m.Node("Add", {"zeros", "e"}, {"y"});
  m.Output("y");
  m.InitInt64("first", {1}, {0});
  m.InitInt64("second", {1}, {1});
  m.InitInt64("one", {1}, {1});
  m.Node("Slice", {"s", "first", "second"}, {"b1"});
  SetAttr(m.Node("Concat", {"b1", "one"}, {"reps"}), "axis", int64_t{0});
  m.Node("Tile", {"v", "reps"}, {"t"});
  m.Output("t");
  Graph g = Import(m);
  EXPECT_EQ(g.outputs()[0]->type().ToString(), "f32[b, n]");
  EXPECT_EQ(g.outputs()[1]->type().ToString(), "f32[b, n]");
  HostTensor v = HostTensor::FromDoubles(proto::FLOAT32, {1, 2}, {5, 6});
  absl::StatusOr<std::vector<HostTensor>> out = Interpret(g, {Ones({3, 2}), v});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].ToDoubles(), ElementsAre(5, 6, 5, 6, 5, 6));
  EXPECT_THAT((*out)[1].ToDoubles(), ElementsAre(5, 6, 5, 6, 5, 6));
}

// An undecided comparison is an exact 0/1 expression: size = Where(h < 4, 4, h) (max(h, 4)),
// and Where(h % 2 == 0, h, h + 1) rounds h up to even.
TEST(OnnxShapeOperands, UndecidedComparisonsAndWhereFold) {
  ModelBuilder m(13);
  m.Input("x", TensorProto::FLOAT, {"h"});
  Dim(m, "x", 0, "h");
  m.InitInt64("four", {}, {4});
  m.InitInt64("two", {}, {2});
  m.InitInt64("zero", {}, {0});
  m.InitInt64("one", {}, {1});
  m.Node("Less", {"h", "four"}, {"small"});
  m.Node("Where", {"small", "four", "h"}, {"n"});
  Unsqueeze0(m, "n", "n1");
  m.Node("ConstantOfShape", {"n1"}, {"y"});
  m.Output("y");
  m.Node("Mod", {"h", "two"}, {"r"});
  m.Node("Equal", {"r", "zero"}, {"even"});
  m.Node("Add", {"h", "one"}, {"h1"});
  m.Node("Where", {"even", "h", "h1"}, {"z"});
  m.Output("z", TensorProto::INT64);
  Graph g = Import(m);
  for (int64_t h : {2, 5, 6}) {
    absl::StatusOr<std::vector<HostTensor>> out = Interpret(g, {Ones({h})});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].shape(), std::vector<int64_t>({std::max<int64_t>(h, 4)})) << "h=" << h;
    EXPECT_THAT((*out)[1].ToDoubles(), ElementsAre(h % 2 == 0 ? h : h + 1)) << "h=" << h;
  }
}

// ---- single assignment

TEST(OnnxSingleAssignment, TwoNodesWriteOneName) {
  ModelBuilder m;
  m.Input("x", TensorProto::FLOAT, {2});
  m.Node("Relu", {"x"}, {"y"}, "first");
  m.Node("Neg", {"x"}, {"y"}, "second");
  m.Output("y");
  absl::Status s = ImportError(m);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("node 'second' (Neg) writes 'y', which node 'first' (Relu) "
                                     "already defines (ONNX graphs assign each name once)"));
}

TEST(OnnxSingleAssignment, NodeOutputShadowsGraphInput) {
  ModelBuilder m;
  m.Input("x", TensorProto::FLOAT, {2});
  m.Node("Relu", {"x"}, {"x"});
  m.Output("x");
  absl::Status s = ImportError(m);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("node #0 (Relu) writes 'x', which a graph input already "
                                     "defines"));
}

TEST(OnnxSingleAssignment, NodeOutputShadowsInitializer) {
  ModelBuilder m;
  m.Input("x", TensorProto::FLOAT, {2});
  m.InitFloat("w", {2}, {1, 2});
  m.Node("Add", {"x", "w"}, {"w"}, "add");
  m.Output("w");
  absl::Status s = ImportError(m);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("node 'add' (Add) writes 'w', which an initializer already "
                                     "defines"));
}

TEST(OnnxSingleAssignment, InitializerDefinedTwice) {
  ModelBuilder m;
  m.Input("x", TensorProto::FLOAT, {2});
  m.InitFloat("w", {2}, {1, 2});
  m.InitFloat("w", {2}, {3, 4});
  m.Node("Add", {"x", "w"}, {"y"});
  m.Output("y");
  absl::Status s = ImportError(m);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("initializer 'w' is defined twice"));
}

TEST(OnnxSingleAssignment, GraphInputDeclaredTwice) {
  ModelBuilder m;
  m.Input("x", TensorProto::FLOAT, {2});
  m.Input("x", TensorProto::FLOAT, {3});
  m.Node("Relu", {"x"}, {"y"});
  m.Output("y");
  absl::Status s = ImportError(m);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("graph input 'x' is declared twice"));
}

// A graph input listed with an initializer of its name (a default value, IR version < 4) and a
// graph output naming a graph input stay valid.
TEST(OnnxSingleAssignment, InitializerAsInputDefaultAndPassThroughOutputAreValid) {
  ModelBuilder m;
  m.Input("x", TensorProto::FLOAT, {2});
  m.Input("w", TensorProto::FLOAT, {2});
  m.InitFloat("w", {2}, {1, 2});
  m.Node("Add", {"x", "w"}, {"y"});
  m.Output("y");
  m.Output("x");
  Graph g = Import(m);
  EXPECT_EQ(g.outputs().size(), 2u);
}

}  // namespace
}  // namespace coil::onnx
