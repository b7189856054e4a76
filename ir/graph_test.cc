// Graph: use-def lists, rewiring, dead code, topological order, proto round trip and errors.
#include "ir/graph.h"

#include <functional>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "ir/printer.h"

namespace coil {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TensorType F32(std::vector<SymExpr> shape) { return TensorType(proto::FLOAT32, std::move(shape)); }

TEST(GraphTest, UseDefLists) {
  Graph g("g");
  Value* x = g.AddInput(F32({2}), "x");
  Node* a = g.AddNode("test.a", {x, x}, {}, {F32({2})});
  Node* b = g.AddNode("test.b", {a->output(0), x}, {}, {F32({2}), F32({2})});
  g.SetOutputs({b->output(1)});
  EXPECT_THAT(x->users(), ElementsAre(a, a, b));
  EXPECT_THAT(a->output(0)->users(), ElementsAre(b));
  EXPECT_EQ(b->output(1)->producer(), b);
  EXPECT_EQ(b->output(1)->output_index(), 1);
  EXPECT_EQ(x->producer(), nullptr);
  EXPECT_EQ(x->kind(), Value::Kind::kInput);
  EXPECT_EQ(g.FindValue(a->output(0)->id()), a->output(0));
  EXPECT_EQ(g.FindValue(99), nullptr);
  b->ReplaceInput(1, a->output(0));
  EXPECT_THAT(x->users(), ElementsAre(a, a));
  EXPECT_THAT(a->output(0)->users(), ElementsAre(b, b));
  EXPECT_EQ(b->Describe(), "%2, %3 = test.b(%1, %1)");
}

TEST(GraphTest, IsOutputAndInlineDenseShape) {
  Graph g("g");
  Value* x = g.AddInput(F32({2}), "x");
  Value* dense = g.AddConstant(F32({2, 3}), {.raw = std::string(24, '\0')}, "w");
  Value* short_bytes = g.AddConstant(F32({2, 3}), {.raw = std::string(20, '\0')}, "short");
  Value* external =
      g.AddConstant(F32({2}), {.external_path = "w.bin", .external_length = 8}, "ext");
  Value* symbolic = g.AddConstant(F32({SymExpr::Symbol("n")}), {.raw = std::string(8, '\0')});
  Node* a = g.AddNode("test.a", {x, dense}, {}, {F32({2})});
  g.SetOutputs({a->output(0)});
  EXPECT_TRUE(g.IsOutput(a->output(0)));
  EXPECT_FALSE(g.IsOutput(x));
  EXPECT_THAT(*dense->InlineDenseShape(), ElementsAre(2, 3));
  EXPECT_FALSE(short_bytes->InlineDenseShape().has_value());
  EXPECT_FALSE(external->InlineDenseShape().has_value());
  EXPECT_FALSE(symbolic->InlineDenseShape().has_value());
  EXPECT_FALSE(x->InlineDenseShape().has_value());
  EXPECT_FALSE(a->output(0)->InlineDenseShape().has_value());
}

TEST(GraphTest, ReplaceAllUsesWith) {
  Graph g("g");
  Value* x = g.AddInput(F32({2}));
  Value* y = g.AddInput(F32({2}));
  Node* a = g.AddNode("test.a", {x, x}, {}, {F32({2})});
  Node* b = g.AddNode("test.b", {x}, {}, {F32({2})});
  g.SetOutputs({x, a->output(0)});
  g.ReplaceAllUsesWith(x, y);
  EXPECT_TRUE(x->users().empty());
  EXPECT_THAT(y->users(), ElementsAre(a, a, b));
  EXPECT_EQ(a->input(0), y);
  EXPECT_EQ(a->input(1), y);
  EXPECT_THAT(g.outputs(), ElementsAre(y, a->output(0)));
  g.ReplaceAllUsesWith(y, y);  // no-op
  EXPECT_EQ(y->users().size(), 3u);
}

TEST(GraphTest, RemoveDeadCode) {
  Graph g("g");
  Value* x = g.AddInput(F32({2}));
  Value* unused_input = g.AddInput(F32({3}));
  Value* c = g.AddConstant(F32({1}), ConstantData{std::string(4, '\0')});
  Value* dead_c = g.AddConstant(F32({1}), ConstantData{std::string(4, '\0')});
  Node* live = g.AddNode("test.live", {x, c}, {}, {F32({2})});
  Node* dead1 = g.AddNode("test.dead", {x, dead_c}, {}, {F32({2})});
  g.AddNode("test.dead2", {dead1->output(0), live->output(0)}, {}, {});
  g.SetOutputs({live->output(0)});
  int64_t dead_id = dead1->output(0)->id();
  EXPECT_EQ(g.RemoveDeadCode(), 2);
  EXPECT_EQ(g.num_nodes(), 1);
  EXPECT_EQ(g.nodes()[0], live);
  EXPECT_THAT(g.constants(), ElementsAre(c));
  EXPECT_THAT(g.inputs(), ElementsAre(x, unused_input));
  EXPECT_EQ(g.FindValue(dead_id), nullptr);
  EXPECT_THAT(live->output(0)->users(), ElementsAre());
  EXPECT_THAT(x->users(), ElementsAre(live));
  EXPECT_EQ(g.RemoveDeadCode(), 0);
}

TEST(GraphTest, InsertNodeBefore) {
  Graph g("g");
  Value* x = g.AddInput(F32({2}));
  Node* a = g.AddNode("test.a", {x}, {}, {F32({2})});
  Node* b = g.AddNode("test.b", {a->output(0)}, {}, {F32({2})});
  Node* n = g.InsertNodeBefore(b, "test.mid", {a->output(0)}, {}, {F32({2})});
  b->ReplaceInput(0, n->output(0));
  EXPECT_THAT(g.nodes(), ElementsAre(a, n, b));
  Node* first = g.InsertNodeBefore(a, "test.first", {x}, {}, {F32({2})});
  EXPECT_THAT(g.nodes(), ElementsAre(first, a, n, b));
  EXPECT_EQ(n->output(0)->id(), 3);  // ids are never reused
}

TEST(GraphTest, SortTopologicallyIsStable) {
  Graph g("g");
  Value* x = g.AddInput(F32({2}));
  Node* a = g.AddNode("test.a", {x}, {}, {F32({2})});
  Node* b = g.AddNode("test.b", {x}, {}, {F32({2})});
  Node* c = g.AddNode("test.c", {a->output(0)}, {}, {F32({2})});
  // Already valid: unchanged.
  ASSERT_TRUE(g.SortTopologically().ok());
  EXPECT_THAT(g.nodes(), ElementsAre(a, b, c));
  // A node inserted first that reads c's output moves after c; b keeps its place before c.
  Node* d = g.InsertNodeBefore(a, "test.d", {c->output(0)}, {}, {F32({2})});
  EXPECT_THAT(g.nodes(), ElementsAre(d, a, b, c));
  ASSERT_TRUE(g.SortTopologically().ok());
  EXPECT_THAT(g.nodes(), ElementsAre(a, b, c, d));
}

TEST(GraphTest, SortTopologicallyNamesANodeOnACycle) {
  Graph g("cyclic");
  Value* x = g.AddInput(F32({2}));
  Node* a = g.AddNode("test.a", {x}, {}, {F32({2})});
  Node* b = g.AddNode("test.b", {a->output(0)}, {}, {F32({2})});
  a->ReplaceInput(0, b->output(0));
  absl::Status s = g.SortTopologically();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "graph 'cyclic' has a cycle through node %1 = test.a(%2)");
}

Graph Sample() {
  Graph g("sample");
  g.symbols().push_back(SymbolInfo{"s0", 2, 64, 8});
  g.guards().push_back(GuardInfo{proto::Guard::LT, SymExpr::Symbol("s0"), 64, "why",
                                 SourceLoc{"f.py", 1, 2, "fn"}});
  Value* x = g.AddInput(F32({SymExpr::Symbol("s0"), 2}), "x");
  Value* c = g.AddConstant(F32({2}), ConstantData{std::string(8, '\x01')}, "c");
  ConstantData ext;
  ext.external_path = "w.bin";
  ext.external_length = 8;
  Value* e = g.AddConstant(TensorType(proto::INT32, {2}), ext);
  Node* n = g.AddNode("test.op", {x, c, e},
                      {{"k", Attribute(int64_t{3})}, {"s", Attribute(SymList{SymExpr::Symbol("s0")})}},
                      {F32({SymExpr::Symbol("s0"), 2}), TensorType(proto::INT64, {})});
  n->set_name("node");
  n->set_loc(SourceLoc{"f.py", 3, 4, "fn"});
  g.SetOutputs({n->output(1), n->output(0)});
  return g;
}

TEST(GraphTest, ProtoRoundTrip) {
  Graph g = Sample();
  proto::Graph p = g.ToProto();
  absl::StatusOr<Graph> back = Graph::FromProto(p);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->ToProto().SerializeAsString(), p.SerializeAsString());
  EXPECT_EQ(PrintGraph(*back), PrintGraph(g));
  Graph clone = g.Clone();
  EXPECT_EQ(PrintGraph(clone), PrintGraph(g));
  EXPECT_EQ(clone.FindValue(1)->name(), "c");
  EXPECT_TRUE(clone.FindValue(2)->constant().is_external());
}

// FromProto of Sample() edited by `edit` fails with exactly `message`.
void ExpectFromProtoError(const std::function<void(proto::Graph&)>& edit, const std::string& message) {
  proto::Graph p = Sample().ToProto();
  edit(p);
  absl::StatusOr<Graph> g = Graph::FromProto(p);
  ASSERT_FALSE(g.ok()) << message;
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(g.status().message(), message);
}

TEST(GraphTest, FromProtoErrors) {
  ExpectFromProtoError([](proto::Graph& p) { p.mutable_nodes(0)->mutable_outputs(0)->set_id(0); },
                       "node 0 (test.op 'node' at f.py:3): value %0 is defined more than once");
  ExpectFromProtoError([](proto::Graph& p) { p.mutable_nodes(0)->set_inputs(1, 42); },
                       "node 0 (test.op 'node' at f.py:3): input 1 refers to undefined value %42");
  ExpectFromProtoError([](proto::Graph& p) { p.set_outputs(0, 42); },
                       "graph output 0 refers to undefined value %42");
  ExpectFromProtoError(
      [](proto::Graph& p) {
        proto::Node* m = p.add_nodes();
        m->set_op("test.m");
        m->add_inputs(4);
        m->add_outputs()->set_id(9);
        *m->mutable_outputs(0)->mutable_type() = p.inputs(0).type();
        p.mutable_nodes(0)->set_inputs(0, 9);
      },
      "node 0 (test.op 'node' at f.py:3): node is on a cycle");
  ExpectFromProtoError([](proto::Graph& p) { p.mutable_nodes(0)->clear_op(); },
                       "node 0 (<no op> 'node' at f.py:3): node has no op");
  ExpectFromProtoError(
      [](proto::Graph& p) { p.mutable_inputs(0)->mutable_type()->set_dtype(proto::DType(77)); },
      "graph input 0: value %0: tensor type has invalid dtype 77");
  ExpectFromProtoError([](proto::Graph& p) { p.mutable_constants(0)->set_raw("abc"); },
                       "constant 0: constant %1 of type f32[2] needs 8 bytes, has 3");
  ExpectFromProtoError(
      [](proto::Graph& p) { p.mutable_constants(1)->mutable_external()->set_length(4); },
      "constant 1: constant %2 of type i32[2] needs 8 bytes, has 4");
  ExpectFromProtoError(
      [](proto::Graph& p) {
        auto* dim = p.mutable_constants(0)->mutable_value()->mutable_type()->mutable_shape(0);
        dim->set_value(int64_t{1} << 62);
      },
      "constant 0: constant %1 of type f32[4611686018427387904] is too large");
  ExpectFromProtoError([](proto::Graph& p) { p.mutable_inputs(0)->set_id(-1); },
                       "graph input 0: negative value id -1");
  ExpectFromProtoError(
      [](proto::Graph& p) {
        p.mutable_nodes(0)->mutable_attrs(0)->mutable_value()->set_dtype(proto::DType(50));
      },
      "node 0 (test.op 'node' at f.py:3): attribute 'k': dtype attribute has invalid value 50");
  ExpectFromProtoError([](proto::Graph& p) { p.mutable_guards(0)->clear_relation(); },
                       "guard 0 is malformed");
}

// A graph reads only files in its own folder (ir/io/data_path.h): one test per bad path.
TEST(GraphTest, FromProtoRejectsAnAbsoluteExternalPath) {
  ExpectFromProtoError(
      [](proto::Graph& p) { p.mutable_constants(1)->mutable_external()->set_path("/etc/passwd"); },
      "constant %2: external data path '/etc/passwd' must be relative to the model's folder");
}

TEST(GraphTest, FromProtoRejectsAnExternalPathWithDotDot) {
  ExpectFromProtoError(
      [](proto::Graph& p) {
        p.mutable_constants(1)->mutable_external()->set_path("../../../../../etc/passwd");
      },
      "constant %2: external data path '../../../../../etc/passwd' must not contain '..' (it "
      "would leave the model's folder)");
}

TEST(GraphTest, FromProtoRejectsAnExternalPathWithDotDotInside) {
  ExpectFromProtoError(
      [](proto::Graph& p) { p.mutable_constants(1)->mutable_external()->set_path("a/../../w"); },
      "constant %2: external data path 'a/../../w' must not contain '..' (it would leave the "
      "model's folder)");
}

}  // namespace
}  // namespace coil
