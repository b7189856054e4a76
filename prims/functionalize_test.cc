// Functionalize against eager semantics: each case's graph runs through the reference
// interpreter as written (views alias, in-place ops write through) and after Functionalize;
// both must give PyTorch 1.13's outputs and final input contents (functionalize_cases.py,
// run at build time).
#include "prims/functionalize.h"

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "gtest/gtest.h"
#include "ir/builder.h"
#include "ir/verifier.h"
#include "runtime/interpreter.h"

namespace coil::prims {
namespace {

// "case out|in index" -> values, from the torch generator.
const absl::flat_hash_map<std::string, std::vector<double>>& Expected() {
  static const auto* table = [] {
    auto* t = new absl::flat_hash_map<std::string, std::vector<double>>();
    std::ifstream f("prims/functionalize_cases.txt");
    std::string line;
    while (std::getline(f, line)) {
      std::istringstream in(line);
      std::string name, kind, index;
      in >> name >> kind >> index;
      std::vector<double> v;
      double d;
      while (in >> d) v.push_back(d);
      (*t)[name + " " + kind + " " + index] = v;
    }
    return t;
  }();
  return *table;
}

// The generator's ramp: value i is i * scale + shift, rounded to the dtype.
HostTensor Ramp(DType dtype, std::vector<int64_t> shape, double scale = 0.5, double shift = -1.0) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(i * scale + shift);
  if (!IsFloating(dtype)) {
    for (double& x : v) x = static_cast<double>(static_cast<int64_t>(x));
  }
  return HostTensor::FromDoubles(dtype, std::move(shape), v);
}

HostTensor Copy(const HostTensor& t) { return HostTensor::FromDoubles(t.dtype(), t.shape(), t.ToDoubles()); }

void ExpectValues(const std::string& key, const HostTensor& got, const std::string& what) {
  auto it = Expected().find(key);
  ASSERT_NE(it, Expected().end()) << "no torch result for " << key;
  std::vector<double> g = got.ToDoubles();
  ASSERT_EQ(g.size(), it->second.size()) << what << " " << key;
  for (size_t i = 0; i < g.size(); ++i) {
    EXPECT_NEAR(g[i], it->second[i], 1e-6 + 1e-6 * std::abs(it->second[i]))
        << what << " " << key << " element " << i;
  }
}

// Runs `g` eagerly and functionalized on copies of `inputs`, comparing both with torch.
void CheckCase(const std::string& name, Graph& g, const std::vector<HostTensor>& inputs) {
  ASSERT_TRUE(Verify(g).ok()) << Verify(g);
  for (bool functional : {false, true}) {
    std::string what = functional ? "functionalized" : "eager";
    if (functional) {
      absl::StatusOr<bool> changed = Functionalize(g);
      ASSERT_TRUE(changed.ok()) << changed.status();
      EXPECT_TRUE(*changed);
      absl::Status v = Verify(g);
      EXPECT_TRUE(v.ok()) << v;
      for (const Node* n : g.nodes()) {
        const OpSchema* s = OpRegistry::Global().Find(n->op());
        EXPECT_TRUE(s == nullptr || s->mutated_input < 0 || n->op() == "prims.copy_to")
            << n->Describe();
      }
    }
    std::vector<HostTensor> args;
    for (const HostTensor& t : inputs) args.push_back(Copy(t));
    for (bool float64 : {false, true}) {
      if (float64) {
        args.clear();
        for (const HostTensor& t : inputs) args.push_back(Copy(t));
      }
      InterpreterOptions options;
      options.float64 = float64;
      absl::StatusOr<std::vector<HostTensor>> out = Interpret(g, args, options);
      ASSERT_TRUE(out.ok()) << what << ": " << out.status();
      for (size_t i = 0; i < out->size(); ++i) {
        ExpectValues(name + " out " + std::to_string(i), (*out)[i], what);
      }
      for (size_t i = 0; i < args.size(); ++i) {
        ExpectValues(name + " in " + std::to_string(i), args[i], what + " input");
      }
    }
  }
}

TensorType F32(std::vector<SymExpr> shape) { return TensorType(proto::FLOAT32, std::move(shape)); }

Value* Op(GraphBuilder& b, const char* op, std::vector<Value*> in, AttrMap attrs = {}) {
  absl::StatusOr<Value*> v = b.Op(op, std::move(in), std::move(attrs));
  EXPECT_TRUE(v.ok()) << v.status();
  return v.ok() ? *v : nullptr;
}

AttrMap Slice(int64_t dim, int64_t start, int64_t end) {
  return {{"dim", dim}, {"start", SymExpr(start)}, {"end", SymExpr(end)}};
}

TEST(Functionalize, AddOnInput) {
  Graph g("f");
  GraphBuilder b(g);
  Value* x = b.Input(F32({2, 3}), "x");
  Value* y = b.Input(F32({2, 3}), "y");
  Op(b, "aten.add_", {x, y});
  g.SetOutputs({Op(b, "aten.relu", {x})});
  CheckCase("add_on_input", g, {Ramp(proto::FLOAT32, {2, 3}), Ramp(proto::FLOAT32, {2, 3}, 0.25, 1)});
}

TEST(Functionalize, AddOnSliceOfInput) {
  Graph g("f");
  GraphBuilder b(g);
  Value* x = b.Input(F32({2, 3}), "x");
  Value* y = b.Input(F32({2, 2}), "y");
  Op(b, "aten.add_", {Op(b, "aten.slice", {x}, Slice(1, 1, 3)), y});
  g.SetOutputs({x});
  CheckCase("add_on_slice", g, {Ramp(proto::FLOAT32, {2, 3}), Ramp(proto::FLOAT32, {2, 2}, 0.25, 1)});
}

TEST(Functionalize, TwoViewsOfOneBase) {
  Graph g("f");
  GraphBuilder b(g);
  Value* x = b.Input(F32({2, 3}), "x");
  Value* y = b.Input(F32({3, 2}), "y");
  Value* a = Op(b, "aten.transpose", {x}, {{"dim0", int64_t{0}}, {"dim1", int64_t{1}}});
  Value* v = Op(b, "aten.slice", {x}, Slice(1, 0, 2));
  Op(b, "aten.add_", {a, y});
  g.SetOutputs({v, a});
  CheckCase("two_views", g, {Ramp(proto::FLOAT32, {2, 3}), Ramp(proto::FLOAT32, {3, 2}, 0.25, 1)});
}

TEST(Functionalize, MutationThenReadOfBase) {
  Graph g("f");
  GraphBuilder b(g);
  Value* x = b.Input(F32({2, 3}), "x");
  Value* y = b.Input(F32({6}), "y");
  Value* before = Op(b, "aten.relu", {x});
  Value* v = Op(b, "aten.view", {x}, {{"shape", SymList{SymExpr(6)}}});
  Op(b, "aten.add_", {v, y});
  g.SetOutputs({before, x, Op(b, "aten.relu", {x})});
  CheckCase("read_base_after", g, {Ramp(proto::FLOAT32, {2, 3}), Ramp(proto::FLOAT32, {6}, 0.25, 1)});
}

TEST(Functionalize, MutationOfSliceOfTranspose) {
  Graph g("f");
  GraphBuilder b(g);
  Value* x = b.Input(F32({2, 3}), "x");
  Value* y = b.Input(F32({2, 2}), "y");
  Value* t = Op(b, "aten.transpose", {x}, {{"dim0", int64_t{0}}, {"dim1", int64_t{1}}});
  Op(b, "aten.mul_", {Op(b, "aten.slice", {t}, Slice(0, 1, 3)), y});
  g.SetOutputs({x, t});
  CheckCase("view_of_view", g, {Ramp(proto::FLOAT32, {2, 3}), Ramp(proto::FLOAT32, {2, 2}, 0.25, 1)});
}

TEST(Functionalize, SelectThenFill) {
  Graph g("f");
  GraphBuilder b(g);
  Value* x = b.Input(F32({3, 4}), "x");
  Value* r = Op(b, "aten.select", {x}, {{"dim", int64_t{0}}, {"index", SymExpr(1)}});
  Op(b, "aten.fill_", {r}, {{"value", 7.0}});
  g.SetOutputs({x});
  CheckCase("select_fill", g, {Ramp(proto::FLOAT32, {3, 4})});
}

TEST(Functionalize, CopyWithBroadcastAndCast) {
  Graph g("f");
  GraphBuilder b(g);
  Value* x = b.Input(TensorType(proto::INT64, {2, 3}), "x");
  Value* y = b.Input(F32({3}), "y");
  Op(b, "aten.copy_", {x, y});
  g.SetOutputs({x});
  CheckCase("copy_broadcast_cast", g,
            {Ramp(proto::INT64, {2, 3}, 1, -2), Ramp(proto::FLOAT32, {3}, 0.75, -1.1)});
}

TEST(Functionalize, ChainedInplace) {
  Graph g("f");
  GraphBuilder b(g);
  Value* x = b.Input(F32({2, 3}), "x");
  Value* y = b.Input(F32({2, 3}), "y");
  Op(b, "aten.mul_", {Op(b, "aten.add_", {x, y}), y});
  Op(b, "aten.relu_", {Op(b, "aten.select", {x}, {{"dim", int64_t{0}}, {"index", SymExpr(0)}})});
  g.SetOutputs({x});
  CheckCase("chained", g, {Ramp(proto::FLOAT32, {2, 3}), Ramp(proto::FLOAT32, {2, 3}, 0.25, 1)});
}

TEST(Functionalize, MutationOfAnIntermediate) {
  Graph g("f");
  GraphBuilder b(g);
  Value* x = b.Input(F32({2, 3}), "x");
  Value* y = b.Input(F32({2, 3}), "y");
  Value* z = Op(b, "aten.add", {x, y});
  Op(b, "aten.sigmoid_", {Op(b, "aten.select", {z}, {{"dim", int64_t{0}}, {"index", SymExpr(0)}})});
  g.SetOutputs({z});
  CheckCase("intermediate", g, {Ramp(proto::FLOAT32, {2, 3}), Ramp(proto::FLOAT32, {2, 3}, 0.25, 1)});
}

// Provenance: the nodes made for a named in-place op on a view (its functional op and the
// scatter back into the base) take its name; the view, named, keeps its own.
// Writes through aten.diagonal: a strided slice_scatter of the flattened last two dims.
TEST(Functionalize, MutationThroughDiagonal) {
  Graph g("f");
  GraphBuilder b(g);
  Value* x = b.Input(F32({3, 3}), "x");
  Value* y = b.Input(F32({3}), "y");
  Op(b, "aten.add_", {Op(b, "aten.diagonal", {x}), y});
  g.SetOutputs({x});
  CheckCase("diagonal_add", g, {Ramp(proto::FLOAT32, {3, 3}), Ramp(proto::FLOAT32, {3}, 0.25, 1)});
}

TEST(Functionalize, MutationThroughASliceOfAnOffsetDiagonal) {
  Graph g("f");
  GraphBuilder b(g);
  Value* x = b.Input(F32({2, 4, 3}), "x");
  Value* y = b.Input(F32({2, 2}), "y");
  Value* d = Op(b, "aten.diagonal", {x},
                {{"offset", int64_t{1}}, {"dim1", int64_t{2}}, {"dim2", int64_t{1}}});
  Op(b, "aten.mul_", {Op(b, "aten.slice", {d}, Slice(1, 1, 3)), y});
  g.SetOutputs({x, d});
  CheckCase("diagonal_offset", g,
            {Ramp(proto::FLOAT32, {2, 4, 3}), Ramp(proto::FLOAT32, {2, 2}, 0.25, 1)});
}

TEST(Functionalize, NodesMadeForAMutationTakeItsName) {
  Graph g("f");
  GraphBuilder b(g);
  Value* x = b.Input(F32({2, 3}), "x");
  Value* y = b.Input(F32({2, 2}), "y");
  Value* view = Op(b, "aten.slice", {x}, Slice(1, 1, 3));
  view->producer()->set_name("/view");
  Value* added = Op(b, "aten.add_", {view, y});
  added->producer()->set_name("/blocks.0/add_");
  g.SetOutputs({Op(b, "aten.relu", {x})});
  absl::StatusOr<bool> changed = Functionalize(g);
  ASSERT_TRUE(changed.ok()) << changed.status();
  ASSERT_TRUE(*changed);
  int made = 0;
  for (const Node* n : g.nodes()) {
    if (n->op() == "aten.add" || n->op() == "aten.slice_scatter") {
      EXPECT_EQ(n->name(), "/blocks.0/add_") << n->Describe();
      ++made;
    } else if (n->op() == "aten.slice") {
      EXPECT_EQ(n->name(), "/view") << n->Describe();
    } else if (n->op() == "aten.relu") {
      EXPECT_EQ(n->name(), "") << n->Describe();
    }
  }
  EXPECT_EQ(made, 2);
}

TEST(Functionalize, GraphWithoutMutationIsUnchanged) {
  Graph g("f");
  GraphBuilder b(g);
  Value* x = b.Input(F32({2, 3}), "x");
  g.SetOutputs({Op(b, "aten.relu", {Op(b, "aten.slice", {x}, Slice(1, 0, 2))})});
  std::string before = g.ToProto().SerializeAsString();
  absl::StatusOr<bool> changed = Functionalize(g);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_FALSE(*changed);
  EXPECT_EQ(g.ToProto().SerializeAsString(), before);
  absl::StatusOr<proto::Graph> p = Functionalize(g.ToProto());
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->SerializeAsString(), before);
}

// A functional graph's write-back (prims.copy_to, what functionalization ends with) is no
// in-place op: functionalizing again leaves the graph as it is, so an output that is the
// written input keeps the value from before the write (before: it became the written value).
TEST(Functionalize, WriteBacksAloneAreFunctionalAlready) {
  Graph g("f");
  GraphBuilder b(g);
  Value* x = b.Input(F32({2, 3}), "x");
  Value* y = Op(b, "aten.relu", {x});
  b.OpMulti("prims.copy_to", {x, y}).value();
  g.SetOutputs({y, x});
  std::string before = g.ToProto().SerializeAsString();
  absl::StatusOr<bool> changed = Functionalize(g);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_FALSE(*changed);
  EXPECT_EQ(g.ToProto().SerializeAsString(), before);
}

std::string ErrorOf(Graph& g) {
  absl::StatusOr<bool> changed = Functionalize(g);
  EXPECT_FALSE(changed.ok());
  return changed.ok() ? "" : std::string(changed.status().message());
}

TEST(FunctionalizeErrors, MutationOfExpandedView) {
  Graph g("f");
  GraphBuilder b(g);
  Value* x = b.Input(F32({1, 3}), "x");
  Value* y = b.Input(F32({2, 3}), "y");
  Value* e = Op(b, "aten.expand", {x}, {{"size", SymList{SymExpr(2), SymExpr(3)}}});
  Op(b, "aten.add_", {e, y});
  g.SetOutputs({x});
  std::string msg = ErrorOf(g);
  EXPECT_NE(msg.find("aten.add_"), std::string::npos) << msg;
  EXPECT_NE(msg.find("expanded (broadcast) view"), std::string::npos) << msg;
}

TEST(FunctionalizeErrors, ResultCannotBeCast) {
  Graph g("f");
  Value* x = g.AddInput(TensorType(proto::INT64, {3}), "x");
  Value* y = g.AddInput(F32({3}), "y");
  // Built without the builder: its meta would reject the node.
  g.AddNode("aten.add_", {x, y}, {{"alpha", int64_t{1}}}, {x->type()});
  g.SetOutputs({x});
  std::string msg = ErrorOf(g);
  EXPECT_NE(msg.find("aten.add_"), std::string::npos) << msg;
  EXPECT_NE(msg.find("result type Float can't be cast to the desired output type Long"),
            std::string::npos) << msg;
}

// x.t().view(-1) is an error in PyTorch (and in coil's eager kernels); a graph that mutates
// something is functionalized with the views' strides, and says so too.
TEST(FunctionalizeErrors, ViewOfALayoutItCannotView) {
  Graph g("f");
  GraphBuilder b(g);
  Value* x = b.Input(F32({3, 4}), "x");
  Value* flat = Op(b, "aten.view", {Op(b, "aten.t", {x})}, {{"shape", SymList{SymExpr(12)}}});
  Op(b, "aten.add_scalar_", {x}, {{"other", 1.0}});
  g.SetOutputs({flat});
  std::string msg = ErrorOf(g);
  EXPECT_NE(msg.find("view size is not compatible with input tensor's size and stride"),
            std::string::npos) << msg;
}

// With symbolic sizes that may be 1, whether reshape(x.t()) views or copies depends on the
// sizes (a size-1 dim makes it a view): refused with a clear error, not guessed.
TEST(FunctionalizeErrors, ReshapeOfAViewUndecidableFromTheSymbolsRanges) {
  Graph g("f");
  GraphBuilder b(g);
  g.symbols().push_back({.name = "a", .min = 1, .max = 0, .hint = 3});
  g.symbols().push_back({.name = "c", .min = 1, .max = 0, .hint = 4});
  const SymExpr a = SymExpr::Symbol("a"), c = SymExpr::Symbol("c");
  Value* x = b.Input(F32({a, c}), "x");
  Value* flat = Op(b, "aten.reshape", {Op(b, "aten.t", {x})}, {{"shape", SymList{a * c}}});
  Op(b, "aten.add_scalar_", {flat}, {{"other", 1.0}});
  g.SetOutputs({x});
  std::string msg = ErrorOf(g);
  EXPECT_NE(msg.find("cannot decide whether aten.reshape of a view with symbolic sizes aliases "
                     "its input"),
            std::string::npos) << msg;
}

// A write through a diagonal whose second dim is symbolic (the write-back's slice step).
TEST(FunctionalizeErrors, WriteThroughADiagonalOfASymbolicSize) {
  Graph g("f");
  GraphBuilder b(g);
  g.symbols().push_back({.name = "n", .min = 2, .max = 0, .hint = 4});
  Value* x = b.Input(F32({3, SymExpr::Symbol("n")}), "x");
  Op(b, "aten.add_scalar_", {Op(b, "aten.diagonal", {x})}, {{"other", 1.0}});
  g.SetOutputs({x});
  std::string msg = ErrorOf(g);
  EXPECT_NE(msg.find("mutation through aten.diagonal of a symbolic size"), std::string::npos)
      << msg;
}

}  // namespace
}  // namespace coil::prims
