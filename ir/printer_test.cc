// Golden texts of PrintGraph for small graphs built with Graph::AddNode (no registry needed).
#include "ir/printer.h"

#include <cstring>

#include "gtest/gtest.h"
#include "ir/graph.h"

namespace coil {
namespace {

SymExpr S(absl::string_view name) { return SymExpr::Symbol(name); }

std::string FloatBytes(std::vector<float> values) {
  std::string out(values.size() * 4, '\0');
  std::memcpy(out.data(), values.data(), out.size());
  return out;
}

TEST(PrinterTest, EmptyGraph) {
  Graph g("empty");
  EXPECT_EQ(PrintGraph(g), "graph @empty() {\n  return\n}\n");
}

TEST(PrinterTest, MlpWithEverything) {
  Graph g("mlp");
  g.symbols().push_back(SymbolInfo{"s0", 2, 0, 8});
  g.guards().push_back(GuardInfo{proto::Guard::LE, S("s0"), 4096, "batch limit",
                                 SourceLoc{"model.cc", 3, 1, ""}});
  Value* x = g.AddInput(TensorType(proto::FLOAT32, {S("s0"), 4}), "x");
  Value* w = g.AddInput(TensorType(proto::FLOAT32, {4, 4}), "w");
  Value* b = g.AddConstant(TensorType(proto::FLOAT32, {2}), ConstantData{FloatBytes({1, -2})}, "b");
  ConstantData ext;
  ext.external_path = "w.bin";
  ext.external_offset = 64;
  ext.external_length = 16;
  Value* e = g.AddConstant(TensorType(proto::FLOAT32, {4}), ext);
  Node* mm = g.AddNode("aten.mm", {x, w}, {}, {TensorType(proto::FLOAT32, {S("s0"), 4})});
  Node* add = g.AddNode("aten.add", {mm->output(0), e}, {{"alpha", Attribute(1.0)}},
                        {TensorType(proto::FLOAT32, {S("s0"), 4})});
  add->set_loc(SourceLoc{"model.cc", 12, 3, "forward"});
  add->set_name("add1");
  Node* mx = g.AddNode("aten.max_dim", {add->output(0)},
                       {{"keepdim", Attribute(false)}, {"dim", Attribute(int64_t{1})}},
                       {TensorType(proto::FLOAT32, {S("s0")}), TensorType(proto::INT64, {S("s0")})});
  g.AddNode("test.print", {b}, {}, {});
  g.SetOutputs({add->output(0), mx->output(0), mx->output(1)});
  EXPECT_EQ(PrintGraph(g), R"(graph @mlp(%0 "x": f32[s0, 4], %1 "w": f32[4, 4]) {
  symbol s0 min 2 max 0 hint 8
  guard s0 <= 4096 "batch limit" loc("model.cc":3:1)
  %2 "b": f32[2] = constant dense "0000803f000000c0"
  %3: f32[4] = constant external "w.bin" offset 64 length 16
  %4: f32[s0, 4] = aten.mm(%0, %1)
  %5: f32[s0, 4] = aten.add(%4, %3) {alpha = 1.0} name "add1" loc("model.cc":12:3 in "forward")
  %6: f32[s0], %7: i64[s0] = aten.max_dim(%5) {dim = 1, keepdim = false}
  test.print(%2)
  return %5, %6, %7
}
)");
}

TEST(PrinterTest, EveryAttributeKind) {
  Graph g("attrs");
  Value* x = g.AddInput(TensorType(proto::BOOL, {}));
  AttrMap attrs = {
      {"i", Attribute(int64_t{-7})},
      {"f", Attribute(0.1)},
      {"big", Attribute(1e300)},
      {"b", Attribute(true)},
      {"s", Attribute(std::string("a \"quoted\"\nline"))},
      {"ints", Attribute(IntList{1, -2, 3})},
      {"no_ints", Attribute(IntList{})},
      {"floats", Attribute(FloatList{0.5, -2.0})},
      {"t", Attribute(proto::BFLOAT16)},
      {"sym", Attribute(S("s1") * 2 + 1)},
      {"syms", Attribute(SymList{S("s1"), SymExpr::FloorDiv(S("s1"), 2), 3})},
  };
  Node* n = g.AddNode("test.attrs", {x}, attrs, {TensorType(proto::BOOL, {})});
  g.SetOutputs({n->output(0)});
  EXPECT_EQ(PrintGraph(g), R"(graph @attrs(%0: bool[]) {
  %1: bool[] = test.attrs(%0) {b = true, big = 1e+300, f = 0.1, floats = floats[0.5, -2.0], i = -7, ints = [1, -2, 3], no_ints = [], s = "a \"quoted\"\nline", sym = sym(2*s1 + 1), syms = syms[s1, floordiv(s1, 2), 3], t = bf16}
  return %1
}
)");
}

TEST(PrinterTest, StridesDevicesAndRelations) {
  Graph g("layout");
  TensorType t(proto::FLOAT16, {2, 3}, Device{proto::Device::CUDA, 1});
  t.strides = {1, 2};
  Value* x = g.AddInput(t);
  Value* y = g.AddInput(TensorType(proto::INT8, {5}, Device{proto::Device::CPU, 2}));
  g.guards().push_back(GuardInfo{proto::Guard::EQ, S("a"), S("b"), "", {}});
  g.guards().push_back(GuardInfo{proto::Guard::NE, S("a"), 0, "", {}});
  g.guards().push_back(GuardInfo{proto::Guard::LT, S("a") + 1, S("b") * 3, "r", {}});
  g.SetOutputs({x, y, x});
  EXPECT_EQ(PrintGraph(g), R"(graph @layout(%0: f16[2, 3]{1, 2}@cuda:1, %1: i8[5]@cpu:2) {
  guard a == b
  guard a != 0
  guard a + 1 < 3*b "r"
  return %0, %1, %0
}
)");
}

TEST(PrinterTest, QuotesNamesThatAreNotIdentifiers) {
  Graph g("my graph");
  g.symbols().push_back(SymbolInfo{"return", 0, 0, 0});
  Value* x = g.AddInput(TensorType(proto::FLOAT64, {1}), "in\tput");
  Node* n = g.AddNode("constant", {x}, {{"odd name", Attribute(int64_t{1})}},
                      {TensorType(proto::FLOAT64, {1})});
  g.AddNode("name", {}, {}, {});
  n->output(0)->set_name("%1");
  g.SetOutputs({n->output(0)});
  EXPECT_EQ(PrintGraph(g), R"(graph @"my graph"(%0 "in\tput": f64[1]) {
  symbol "return" min 0 max 0 hint 0
  %1 "%1": f64[1] = "constant"(%0) {"odd name" = 1}
  "name"()
  return %1
}
)");
}

TEST(PrinterTest, IdsFollowTheGraphNotThePrintOrder) {
  // Values print with their ids, so a graph with gaps in its ids prints them as they are.
  Graph g("gaps");
  Value* x = g.AddInput(TensorType(proto::FLOAT32, {2}));
  Node* a = g.AddNode("test.a", {x}, {}, {TensorType(proto::FLOAT32, {2})});
  Node* b = g.AddNode("test.b", {a->output(0)}, {}, {TensorType(proto::FLOAT32, {2})});
  g.SetOutputs({x});
  g.RemoveNode(b);
  Node* c = g.AddNode("test.c", {a->output(0)}, {}, {TensorType(proto::FLOAT32, {2})});
  g.SetOutputs({c->output(0)});
  EXPECT_EQ(PrintGraph(g), R"(graph @gaps(%0: f32[2]) {
  %1: f32[2] = test.a(%0)
  %3: f32[2] = test.c(%1)
  return %3
}
)");
  EXPECT_EQ(PrintGraph(g), PrintGraph(g.Clone()));
}

}  // namespace
}  // namespace coil
