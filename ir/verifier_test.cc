// Verify: a valid graph passes, and each check fails with its message.
#include "ir/verifier.h"

#include <optional>

#include "gtest/gtest.h"
#include "ir/builder.h"
#include "ir/graph.h"
#include "ir/op_registry.h"

namespace coil {
namespace {

TensorType F32(std::vector<SymExpr> shape) { return TensorType(proto::FLOAT32, std::move(shape)); }

// A registry with two ops: test.scale(x) {factor: float = 1.0, mode: int (required)} and
// test.window(x) {end: sym (required)}, each -> x's type.
OpRegistry TestRegistry() {
  OpRegistry r;
  OpSchema s;
  s.name = "test.scale";
  s.inputs = {{"x"}};
  s.attrs = {{"factor", AttrKind::kFloat, Attribute(1.0)}, {"mode", AttrKind::kInt, std::nullopt}};
  s.meta = [](absl::Span<const TensorType> in, const AttrMap&) -> absl::StatusOr<std::vector<TensorType>> {
    return std::vector<TensorType>{in[0]};
  };
  OpSchema w = s;
  w.name = "test.window";
  w.attrs = {{"end", AttrKind::kSym, std::nullopt}};
  r.Register(std::move(s));
  r.Register(std::move(w));
  return r;
}

AttrMap Full() { return {{"factor", Attribute(2.0)}, {"mode", Attribute(int64_t{0})}}; }

void ExpectError(const Graph& g, const OpRegistry& r, const std::string& message) {
  absl::Status s = Verify(g, r);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), message);
}

TEST(VerifierTest, ValidGraphs) {
  OpRegistry r = TestRegistry();
  Graph g("g");
  g.symbols().push_back(SymbolInfo{"s0", 1, 0, 3});
  Value* x = g.AddInput(F32({SymExpr::Symbol("s0"), 3}));
  Node* n = g.AddNode("test.scale", {x}, Full(), {x->type()});
  g.SetOutputs({n->output(0)});
  EXPECT_TRUE(Verify(g, r).ok()) << Verify(g, r);

  // The global registry's ops, through the builder.
  if (OpRegistry::Global().Find("aten.add") && OpRegistry::Global().Find("aten.relu")) {
    Graph h("h");
    GraphBuilder b(h);
    Value* a = b.Input(F32({2, 3}));
    Value* c = b.Input(F32({3}));
    absl::StatusOr<Value*> sum = b.Op("aten.add", {a, c});
    ASSERT_TRUE(sum.ok()) << sum.status();
    absl::StatusOr<Value*> relu = b.Op("aten.relu", {*sum});
    ASSERT_TRUE(relu.ok()) << relu.status();
    h.SetOutputs({*relu});
    EXPECT_TRUE(Verify(h).ok()) << Verify(h);
    // A wrong output type of a real op.
    (*relu)->set_type(F32({2, 4}));
    ExpectError(h, OpRegistry::Global(),
                "node 1 %3 = aten.relu(%2): output types [f32[2, 4]] differ from inferred [f32[2, 3]]");
  }
}

TEST(VerifierTest, InputWithoutDtype) {
  Graph g("g");
  g.AddInput(TensorType());
  ExpectError(g, TestRegistry(), "graph input %0 has no dtype");
}

TEST(VerifierTest, InputTooLarge) {
  Graph g("g");
  g.AddInput(F32({int64_t{1} << 40, int64_t{1} << 40}));
  ExpectError(g, TestRegistry(),
              "graph input %0 has type f32[1099511627776, 1099511627776] whose size overflows int64");
}

// Size-like attributes that would overflow shape arithmetic are a clear error, never an abort
// inside a meta function (found by fuzzing: huge split sizes and pads).
TEST(VerifierTest, HugeSizeAttribute) {
  Graph g("g");
  Value* x = g.AddInput(F32({4, 6}));
  Node* n = g.AddNode("test.scale", {x}, {{"factor", Attribute(1.0)},
                                          {"mode", Attribute(int64_t{1} << 62)}},
                      {x->type()});
  g.SetOutputs({n->output(0)});
  ExpectError(g, TestRegistry(),
              "node 0 %1 = test.scale(%0): test.scale attribute 'mode' value 4611686018427387904 "
              "is out of the supported range [-2^40, 2^40]");
  if (OpRegistry::Global().Find("aten.split") != nullptr) {
    Graph h("h");
    GraphBuilder b(h);
    Value* y = b.Input(F32({4, 6}));
    absl::StatusOr<std::vector<Value*>> parts = b.OpMulti(
        "aten.split", {y}, {{"sizes", Attribute(IntList{int64_t{1} << 62, int64_t{1} << 62})},
                            {"dim", Attribute(int64_t{1})}});
    ASSERT_FALSE(parts.ok());
    EXPECT_NE(parts.status().message().find("out of the supported range"), std::string::npos)
        << parts.status();
  }
}

// A dilation of INT64_MAX (no sentinel for an int attribute) is out of range, not an abort in
// the convolution's shape arithmetic.
TEST(VerifierTest, ConvolutionDilationOfInt64Max) {
  if (OpRegistry::Global().Find("aten.conv2d") == nullptr) GTEST_SKIP();
  Graph g("g");
  GraphBuilder b(g);
  absl::StatusOr<Value*> y =
      b.Op("aten.conv2d", {b.Input(F32({1, 1, 8, 8})), b.Input(F32({1, 1, 3, 3}))},
           {{"dilation", Attribute(IntList{INT64_MAX, 1})}});
  ASSERT_FALSE(y.ok());
  EXPECT_EQ(y.status().message(),
            "aten.conv2d attribute 'dilation' value 9223372036854775807 is out of the supported "
            "range [-2^40, 2^40]");
}

// Dimensions in range whose product overflows: the meta function's error, not an abort.
TEST(VerifierTest, ReshapeTargetWhoseSizeOverflows) {
  if (OpRegistry::Global().Find("aten.reshape") == nullptr) GTEST_SKIP();
  Graph g("g");
  GraphBuilder b(g);
  const int64_t big = int64_t{1} << 31;
  absl::StatusOr<Value*> y = b.Op("aten.reshape", {b.Input(F32({2, 3}))},
                                  {{"shape", Attribute(SymList{big, big, 4})}});
  ASSERT_FALSE(y.ok());
  EXPECT_EQ(y.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(y.status().message(),
            "aten.reshape: int64 overflow in shape arithmetic: (4611686018427387904) * (4)");
}

// A graph built in memory (never through FromProto) is held to the same external path rules.
TEST(VerifierTest, ExternalConstantOutsideTheGraphsFolder) {
  Graph g("g");
  ConstantData d;
  d.external_path = "/etc/passwd";
  d.external_length = 16;
  g.SetOutputs({g.AddConstant(TensorType(proto::UINT8, {16}), d)});
  ExpectError(g, TestRegistry(),
              "constant %0: external data path '/etc/passwd' must be relative to the model's folder");
}

TEST(VerifierTest, ExternalConstantWithDotDot) {
  Graph g("g");
  ConstantData d;
  d.external_path = "data/../../secret";
  d.external_length = 16;
  g.SetOutputs({g.AddConstant(TensorType(proto::UINT8, {16}), d)});
  ExpectError(g, TestRegistry(),
              "constant %0: external data path 'data/../../secret' must not contain '..' (it "
              "would leave the model's folder)");
}

TEST(VerifierTest, SymbolicConstant) {
  Graph g("g");
  g.AddConstant(F32({SymExpr::Symbol("s0")}), ConstantData{});
  ExpectError(g, TestRegistry(), "constant %0 has symbolic type f32[s0]");
}

TEST(VerifierTest, UseBeforeDefinition) {
  Graph g("g");
  Value* x = g.AddInput(F32({2}));
  Node* a = g.AddNode("test.scale", {x}, Full(), {x->type()});
  g.InsertNodeBefore(a, "test.scale", {a->output(0)}, Full(), {x->type()});
  ExpectError(g, TestRegistry(),
              "node 0 %2 = test.scale(%1): input 0 (%1) is used before it is defined (cycle or "
              "bad order)");
}

TEST(VerifierTest, UnknownOp) {
  Graph g("g");
  Value* x = g.AddInput(F32({2}));
  g.AddNode("test.nope", {x}, {}, {x->type()});
  ExpectError(g, TestRegistry(), "node 0 %1 = test.nope(%0): unknown op 'test.nope'");
}

TEST(VerifierTest, Arity) {
  Graph g("g");
  Value* x = g.AddInput(F32({2}));
  g.AddNode("test.scale", {x, x}, Full(), {x->type()});
  ExpectError(g, TestRegistry(), "node 0 %1 = test.scale(%0, %0): test.scale takes 1 inputs, got 2");
}

TEST(VerifierTest, UnknownAttribute) {
  Graph g("g");
  Value* x = g.AddInput(F32({2}));
  AttrMap attrs = Full();
  attrs["color"] = Attribute(std::string("red"));
  g.AddNode("test.scale", {x}, attrs, {x->type()});
  ExpectError(g, TestRegistry(), "node 0 %1 = test.scale(%0): test.scale has no attribute 'color'");
}

TEST(VerifierTest, AttributeOfWrongKind) {
  Graph g("g");
  Value* x = g.AddInput(F32({2}));
  AttrMap attrs = Full();
  attrs["mode"] = Attribute(true);
  g.AddNode("test.scale", {x}, attrs, {x->type()});
  ExpectError(g, TestRegistry(),
              "node 0 %1 = test.scale(%0): test.scale attribute 'mode' is bool, expected int");
}

TEST(VerifierTest, MissingRequiredAttribute) {
  Graph g("g");
  Value* x = g.AddInput(F32({2}));
  g.AddNode("test.scale", {x}, {{"factor", Attribute(1.0)}}, {x->type()});
  ExpectError(g, TestRegistry(), "node 0 %1 = test.scale(%0): test.scale needs attribute 'mode' (int)");
}

TEST(VerifierTest, DefaultsMustBeExplicit) {
  Graph g("g");
  Value* x = g.AddInput(F32({2}));
  g.AddNode("test.scale", {x}, {{"mode", Attribute(int64_t{1})}}, {x->type()});
  ExpectError(g, TestRegistry(),
              "node 0 %1 = test.scale(%0): attribute 'factor' is missing (defaults must be explicit)");
}

TEST(VerifierTest, OutputTypeDiffers) {
  Graph g("g");
  Value* x = g.AddInput(F32({2}));
  g.AddNode("test.scale", {x}, Full(), {TensorType(proto::INT64, {2})});
  ExpectError(g, TestRegistry(),
              "node 0 %1 = test.scale(%0): output types [i64[2]] differ from inferred [f32[2]]");
}

TEST(VerifierTest, OutputTooLarge) {
  Graph g("g");
  Value* x = g.AddInput(F32({2}));
  g.AddNode("test.scale", {x}, Full(), {F32({int64_t{1} << 62})});
  ExpectError(g, TestRegistry(),
              "node 0 %1 = test.scale(%0): output %1 has type f32[4611686018427387904] whose size "
              "overflows int64");
}

// Undeclared symbols (issue 15): code generation binds only the graph's declared symbols, so
// each use of another one is refused here, naming the node and the symbol.
TEST(VerifierTest, UndeclaredSymbolInAGraphInput) {
  Graph g("g");
  g.AddInput(F32({SymExpr::Symbol("s"), 3}));
  ExpectError(g, TestRegistry(),
              "graph input %0 of type f32[s, 3] uses symbol 's', which the graph does not "
              "declare (the graph declares no symbols)");
}

TEST(VerifierTest, UndeclaredSymbolInANodeOutput) {
  Graph g("g");
  g.symbols().push_back(SymbolInfo{"s", 1, 0, 3});
  Value* x = g.AddInput(F32({SymExpr::Symbol("s")}));
  Node* n = g.AddNode("test.scale", {x}, Full(), {F32({SymExpr::Symbol("t") + 1})});
  g.SetOutputs({n->output(0)});
  ExpectError(g, TestRegistry(),
              "node 0 %1 = test.scale(%0): output %1 of type f32[t + 1] uses symbol 't', which "
              "the graph does not declare (declared: s)");
}

TEST(VerifierTest, UndeclaredSymbolInASymsAttribute) {
  Graph g("g");
  Value* x = g.AddInput(F32({4}));
  AttrMap attrs = Full();
  attrs.emplace("shape", Attribute(SymList{SymExpr::Symbol("t"), 2}));
  Node* n = g.AddNode("test.scale", {x}, attrs, {x->type()});
  g.SetOutputs({n->output(0)});
  ExpectError(g, TestRegistry(),
              "node 0 %1 = test.scale(%0): attribute 'shape' = syms[t, 2] uses symbol 't', which "
              "the graph does not declare (the graph declares no symbols)");
}

TEST(VerifierTest, UndeclaredSymbolInASymAttribute) {
  Graph g("g");
  Value* x = g.AddInput(F32({4}));
  AttrMap attrs = Full();
  attrs.emplace("end", Attribute(SymExpr::Symbol("u") * 2));
  Node* n = g.AddNode("test.scale", {x}, attrs, {x->type()});
  g.SetOutputs({n->output(0)});
  ExpectError(g, TestRegistry(),
              "node 0 %1 = test.scale(%0): attribute 'end' = sym(2*u) uses symbol 'u', which the "
              "graph does not declare (the graph declares no symbols)");
}

TEST(VerifierTest, UndeclaredSymbolInAGuard) {
  Graph g("g");
  g.symbols().push_back(SymbolInfo{"s", 1, 0, 3});
  g.AddInput(F32({SymExpr::Symbol("s")}));
  GuardInfo guard;
  guard.lhs = SymExpr::Symbol("s");
  guard.rhs = SymExpr::Symbol("v");
  g.guards().push_back(guard);
  ExpectError(g, TestRegistry(),
              "guard 0 (s EQ v) uses symbol 'v', which the graph does not declare (declared: s)");
}

// A declared symbol no graph input binds has no value at run time (found by the CPU
// differential fuzzer: the reference interpreter failed, the CPU backend ran anyway).
TEST(VerifierTest, SymbolNoInputBinds) {
  Graph g("g");
  g.symbols().push_back(SymbolInfo{"s", 1, 0, 3});
  Value* x = g.AddInput(F32({4}));
  AttrMap attrs = Full();
  attrs.emplace("end", Attribute(SymExpr::Symbol("s") + 1));
  Node* n = g.AddNode("test.scale", {x}, attrs, {x->type()});
  g.SetOutputs({n->output(0)});
  ExpectError(g, TestRegistry(),
              "node 0 %1 = test.scale(%0): attribute 'end' = sym(s + 1) uses symbol 's', which no "
              "graph input binds (a symbol takes its value at run time from an input dimension "
              "that is the symbol alone)");
}

TEST(VerifierTest, SymbolBoundOnlyInACompoundInputDim) {
  Graph g("g");
  g.symbols().push_back(SymbolInfo{"s", 1, 0, 3});
  g.AddInput(F32({SymExpr::Symbol("s") * 2}));
  ExpectError(g, TestRegistry(),
              "graph input %0 of type f32[2*s] uses symbol 's', which no graph input binds (a "
              "symbol takes its value at run time from an input dimension that is the symbol "
              "alone)");
}

TEST(VerifierTest, GraphOutputNotDefined) {
  Graph other("other");
  Value* foreign = other.AddInput(F32({2}));
  Graph g("g");
  g.AddInput(F32({2}));
  g.SetOutputs({foreign});
  ExpectError(g, TestRegistry(), "graph output 0 is not defined");
  g.SetOutputs({nullptr});
  ExpectError(g, TestRegistry(), "graph output 0 is not defined");
}

// Symbols bound by an input's value (SymbolInfo::value_of): a 0-d int64 input must exist, and
// no shape may use the symbol (sizes come from shapes); attributes may.

// A graph declaring value symbol "off" bound by input "offset" of `offset_type`, after x: f32[4];
// one test.window node whose output has type `out` (x's when empty) and end = off + 1.
Graph ValueSymbolGraph(std::optional<TensorType> offset_type, std::optional<TensorType> out = {}) {
  Graph g("g");
  g.symbols().push_back(SymbolInfo{"off", 0, 0, 0, "offset"});
  Value* x = g.AddInput(F32({4}), "x");
  if (offset_type.has_value()) g.AddInput(*offset_type, "offset");
  AttrMap attrs = {{"end", Attribute(SymExpr::Symbol("off") + 1)}};
  Node* n = g.AddNode("test.window", {x}, attrs, {out.value_or(x->type())});
  g.SetOutputs({n->output(0)});
  return g;
}

TEST(VerifierTest, ValueSymbolInAnAttribute) {
  Graph g = ValueSymbolGraph(TensorType(proto::INT64, {}));
  EXPECT_TRUE(Verify(g, TestRegistry()).ok()) << Verify(g, TestRegistry());
}

TEST(VerifierTest, ValueSymbolWithoutItsInput) {
  ExpectError(ValueSymbolGraph(std::nullopt), TestRegistry(),
              "symbol 'off' is bound by the value of input 'offset', which the graph does not "
              "have");
}

TEST(VerifierTest, ValueSymbolOfANonScalarInput) {
  ExpectError(ValueSymbolGraph(F32({4})), TestRegistry(),
              "symbol 'off' is bound by the value of input 'offset' (%1), which is f32[4], not "
              "a 0-d int64 tensor");
}

TEST(VerifierTest, ValueSymbolInAShape) {
  ExpectError(ValueSymbolGraph(TensorType(proto::INT64, {}), F32({SymExpr::Symbol("off")})),
              TestRegistry(),
              "node 0 %2 = test.window(%0): output %2 of type f32[off] uses symbol 'off' in a "
              "shape, but it is bound from an input's value (sizes come from shapes)");
}

}  // namespace
}  // namespace coil
