// FoldConstants on prims graphs from prims::Decompose: what folds (a Linear's transposed
// weight, slices of a packed QKV weight, arithmetic on normalization parameters, a constant
// output), what must not (a tied embedding, a broadcast bias, anything reading an input, a
// gather whose index is out of range, external data without a folder), and that the folded
// graph and its Schedule compute what the unfolded graph computes (reference interpreter,
// Schedule interpreter) with fewer kernels and no more constant bytes.
#include "inductor/passes/fold_constants.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "inductor/schedule.h"
#include "ir/builder.h"
#include "ir/graph.h"
#include "ir/verifier.h"
#include "prims/decompose.h"
#include "runtime/constant_evaluator.h"
#include "runtime/host_tensor.h"
#include "runtime/interpreter.h"
#include "runtime/schedule_interpreter.h"
#include "runtime/testing/test_kit.h"

namespace coil::inductor {
namespace {

using test_kit::ExpectClose;

// |want - got| <= tol * (1 + |want|); dtypes are not compared.
test_kit::Tolerance Tol(double tol) {
  return {.abs = tol, .rel = tol, .nan_matches_nan = false, .compare_dtypes = false};
}

const SymExpr kBatch = SymExpr::Symbol("batch");

std::string RandomBytes(int64_t n, int seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> v(n);
  for (float& f : v) f = u(rng);
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
}

Value* Weight(GraphBuilder& b, std::vector<SymExpr> shape, int seed, const char* name) {
  TensorType t(proto::FLOAT32, shape);
  return b.Constant(t, RandomBytes(*t.NumElements().AsConstant(), seed), name);
}

Value* Op(GraphBuilder& b, const char* op, std::vector<Value*> in, AttrMap attrs = {}) {
  absl::StatusOr<Value*> v = b.Op(op, std::move(in), std::move(attrs));
  EXPECT_TRUE(v.ok()) << op << ": " << v.status();
  return v.ok() ? *v : nullptr;
}

// Random inputs for the graph's inputs at batch `batch` (int64 inputs in [0, 12)).
std::vector<HostTensor> Inputs(const Graph& g, int64_t batch) {
  std::vector<HostTensor> in;
  int seed = 7;
  for (const Value* v : g.inputs()) {
    std::vector<int64_t> shape;
    for (const SymExpr& d : v->type().shape) shape.push_back(*d.Evaluate({{"batch", batch}}));
    HostTensor t = HostTensor::Zeros(v->type().dtype, shape);
    std::mt19937 rng(seed++);
    for (int64_t i = 0; i < t.numel(); ++i) {
      if (v->type().dtype == proto::INT64) {
        t.StoreInt(i, static_cast<int64_t>(rng() % 12));
      } else {
        t.StoreDouble(i, std::uniform_real_distribution<double>(-2, 2)(rng));
      }
    }
    in.push_back(t);
  }
  return in;
}

int CountOps(const Graph& g, const std::string& op) {
  int n = 0;
  for (const Node* node : g.nodes()) n += node->op() == op;
  return n;
}

struct Folded {
  Graph original;  // the prims graph
  Graph folded;
  FoldConstantsStats stats;
  bool changed = false;
};

// Decomposes `g`, folds a copy, checks the invariants every fold keeps: the folded graph
// verifies, computes what the original computes (reference interpreter, exactly for data
// movement: `tol` 0), keeps its inputs, and holds no more constant bytes.
Folded FoldAndCheck(Graph g, double tol = 0, FoldConstantsOptions options = {}) {
  if (!options.evaluate) options.evaluate = ReferenceConstantEvaluator(options.external_data_dir);
  Folded f;
  EXPECT_TRUE(prims::Decompose(g).ok());
  f.original = std::move(g);
  f.folded = f.original.Clone();
  absl::StatusOr<bool> changed = FoldConstants(f.folded, options, &f.stats);
  EXPECT_TRUE(changed.ok()) << changed.status();
  f.changed = changed.ok() && *changed;
  EXPECT_TRUE(Verify(f.folded).ok()) << Verify(f.folded);
  EXPECT_LE(f.stats.constant_bytes_after, f.stats.constant_bytes_before);
  EXPECT_EQ(f.folded.inputs().size(), f.original.inputs().size());
  for (int64_t batch : {1, 3}) {
    std::vector<HostTensor> in = Inputs(f.original, batch);
    InterpreterOptions interp;
    interp.external_data_dir = options.external_data_dir;
    absl::StatusOr<std::vector<HostTensor>> want = Interpret(f.original, in, interp);
    absl::StatusOr<std::vector<HostTensor>> got = Interpret(f.folded, in, interp);
    EXPECT_EQ(want.ok(), got.ok()) << want.status() << " / " << got.status();
    if (!want.ok() || !got.ok()) continue;
    for (size_t i = 0; i < want->size(); ++i) {
      ExpectClose((*want)[i], (*got)[i], Tol(tol), absl::StrCat("output ", i, " batch ", batch));
    }
  }
  return f;
}

// Kernels of the schedule with and without folding; the folded schedule, run by the Schedule
// interpreter, matches the reference interpreter on the unfolded graph.
std::pair<int, int> KernelsWithoutAndWithFolding(const Graph& prims_graph) {
  ScheduleOptions off;
  off.fold_constants = false;
  absl::StatusOr<proto::Schedule> a = BuildSchedule(prims_graph.ToProto(), off);
  ScheduleOptions on;
  on.constant_evaluator = ReferenceConstantEvaluator();
  absl::StatusOr<proto::Schedule> b = BuildSchedule(prims_graph.ToProto(), on);
  EXPECT_TRUE(a.ok() && b.ok()) << a.status() << b.status();
  if (!a.ok() || !b.ok()) return {0, 0};
  for (int64_t batch : {1, 4}) {
    std::vector<HostTensor> in = Inputs(prims_graph, batch);
    absl::StatusOr<std::vector<HostTensor>> want = Interpret(prims_graph, in, {.float64 = true});
    absl::StatusOr<std::vector<HostTensor>> got = InterpretSchedule(*b, in);
    EXPECT_TRUE(want.ok() && got.ok()) << want.status() << got.status();
    if (!want.ok() || !got.ok()) break;
    for (size_t i = 0; i < want->size(); ++i) {
      ExpectClose((*want)[i], (*got)[i], Tol(1e-5), absl::StrCat("schedule output ", i));
    }
  }
  return {a->kernels_size(), b->kernels_size()};
}

TEST(FoldConstantsTest, LinearWeightTransposeIsFoldedOnce) {
  Graph g("linear");
  GraphBuilder b(g);
  Value* x = b.Input(TensorType(proto::FLOAT32, {kBatch, 16}), "x");
  g.symbols().push_back({"batch", 1, 0, 4});
  Value* w = Weight(b, {8, 16}, 1, "w");
  Value* bias = Weight(b, {8}, 2, "b");
  g.SetOutputs({Op(b, "aten.relu", {Op(b, "aten.linear", {x, w, bias})})});
  Folded f = FoldAndCheck(std::move(g));
  EXPECT_TRUE(f.changed);
  EXPECT_GE(f.stats.nodes_folded, 1);
  EXPECT_EQ(f.stats.constant_bytes_after, f.stats.constant_bytes_before);
  EXPECT_EQ(f.stats.groups_rejected, 0);
  // No node reads the original weight any more; it is gone.
  for (const Value* c : f.folded.constants()) EXPECT_NE(c->name(), "w");
  EXPECT_LT(CountOps(f.folded, "prims.permute"), CountOps(f.original, "prims.permute"));
  auto [without, with] = KernelsWithoutAndWithFolding(f.original);
  EXPECT_LT(with, without) << "the weight copy kernel before the mm is gone";
}

TEST(FoldConstantsTest, PackedQkvSlicesFoldWithoutGrowth) {
  // nn.MultiheadAttention's in_proj: one [3E, E] weight, sliced per projection, transposed.
  Graph g("qkv");
  GraphBuilder b(g);
  Value* x = b.Input(TensorType(proto::FLOAT32, {kBatch, 8}), "x");
  g.symbols().push_back({"batch", 1, 0, 4});
  Value* w = Weight(b, {24, 8}, 3, "in_proj_weight");
  Value* bias = Weight(b, {24}, 4, "in_proj_bias");
  std::vector<Value*> outs;
  for (int64_t i = 0; i < 3; ++i) {
    AttrMap slice = {{"dim", int64_t{0}}, {"start", SymExpr(8 * i)}, {"end", SymExpr(8 * i + 8)}};
    outs.push_back(Op(b, "aten.linear",
                      {x, Op(b, "aten.slice", {w}, slice), Op(b, "aten.slice", {bias}, slice)}));
  }
  g.SetOutputs({Op(b, "aten.add", {Op(b, "aten.mul", {outs[0], outs[1]}), outs[2]})});
  Folded f = FoldAndCheck(std::move(g));
  EXPECT_TRUE(f.changed);
  EXPECT_EQ(f.stats.constant_bytes_after, f.stats.constant_bytes_before);
  EXPECT_EQ(f.stats.groups_rejected, 0);
  auto [without, with] = KernelsWithoutAndWithFolding(f.original);
  EXPECT_LT(with, without);
}

TEST(FoldConstantsTest, TiedEmbeddingIsNotDuplicated) {
  // GPT's LM head shares the token embedding: folding its transpose would add a copy.
  Graph g("tied");
  GraphBuilder b(g);
  Value* ids = b.Input(TensorType(proto::INT64, {kBatch}), "ids");
  g.symbols().push_back({"batch", 1, 0, 4});
  Value* emb = Weight(b, {12, 8}, 5, "tok");
  Value* h = Op(b, "aten.embedding", {emb, ids});
  g.SetOutputs({Op(b, "aten.linear", {Op(b, "aten.tanh", {h}), emb})});
  Folded f = FoldAndCheck(std::move(g));
  EXPECT_FALSE(f.changed);
  EXPECT_EQ(f.stats.groups_rejected, 1);
  EXPECT_EQ(f.stats.nodes_folded, 0);
  EXPECT_EQ(f.folded.num_nodes(), f.original.num_nodes());
}

TEST(FoldConstantsTest, NormalizationArithmeticFolds) {
  // Inference batch norm written out: (x - mean) * (gamma / sqrt(var + eps)) + beta.
  Graph g("bn");
  GraphBuilder b(g);
  Value* x = b.Input(TensorType(proto::FLOAT32, {kBatch, 32}), "x");
  g.symbols().push_back({"batch", 1, 0, 4});
  Value* mean = Weight(b, {32}, 6, "mean");
  Value* gamma = Weight(b, {32}, 7, "gamma");
  Value* beta = Weight(b, {32}, 8, "beta");
  Value* var = Op(b, "aten.abs", {Weight(b, {32}, 9, "var")});
  Value* eps = b.Constant(TensorType(proto::FLOAT32, {}), RandomBytes(1, 10), "eps");
  Value* scale = Op(b, "aten.div", {gamma, Op(b, "aten.sqrt", {Op(b, "aten.add", {var, eps})})});
  g.SetOutputs({Op(b, "aten.add", {Op(b, "aten.mul", {Op(b, "aten.sub", {x, mean}), scale}),
                                   beta})});
  Folded f = FoldAndCheck(std::move(g), 1e-6);
  EXPECT_TRUE(f.changed);
  EXPECT_GE(f.stats.nodes_folded, 4);  // abs, add, sqrt, div
  // var, gamma and eps became one [32] scale.
  EXPECT_LT(f.stats.constant_bytes_after, f.stats.constant_bytes_before);
  auto [without, with] = KernelsWithoutAndWithFolding(f.original);
  EXPECT_LE(with, without);
}

TEST(FoldConstantsTest, BroadcastsAndInputsAreNotFolded) {
  Graph g("bias");
  GraphBuilder b(g);
  Value* x = b.Input(TensorType(proto::FLOAT32, {4, 8}), "x");
  Value* bias = Weight(b, {8}, 11, "b");
  // An expanded bias would be 4x larger than the bias: it stays a view / kernel.
  Value* wide = Op(b, "aten.expand", {bias}, {{"size", SymList{4, 8}}});
  // Work on the input is never folded, however small.
  Value* xt = Op(b, "aten.t", {x});
  g.SetOutputs({Op(b, "aten.add", {x, wide}), xt});
  Folded f = FoldAndCheck(std::move(g));
  EXPECT_FALSE(f.changed);
  EXPECT_EQ(f.stats.nodes_folded, 0);
  EXPECT_EQ(f.folded.num_nodes(), f.original.num_nodes());
}

TEST(FoldConstantsTest, AConstantOutputBecomesAConstant) {
  Graph g("const_out");
  GraphBuilder b(g);
  Value* x = b.Input(TensorType(proto::FLOAT32, {kBatch, 3}), "x");
  g.symbols().push_back({"batch", 1, 0, 4});
  Value* w = Weight(b, {3, 5}, 12, "w");
  g.SetOutputs({Op(b, "aten.neg", {x}), Op(b, "aten.t", {w})});
  Folded f = FoldAndCheck(std::move(g));
  EXPECT_TRUE(f.changed);
  EXPECT_EQ(f.folded.outputs()[1]->kind(), Value::Kind::kConstant);
  KernelsWithoutAndWithFolding(f.original);  // the Schedule copies it into the output
}

TEST(FoldConstantsTest, EvaluationErrorsAreLeftForTheRuntime) {
  // An embedding index out of range fails every run; folding must not turn it into a compile
  // error or hide it.
  Graph g("bad_index");
  GraphBuilder b(g);
  Value* x = b.Input(TensorType(proto::FLOAT32, {2, 8}), "x");
  Value* emb = Weight(b, {12, 8}, 13, "tok");
  const std::vector<int64_t> bad = {3, 99};
  Value* ids = b.Constant(TensorType(proto::INT64, {2}),
                          std::string(reinterpret_cast<const char*>(bad.data()), 16), "ids");
  g.SetOutputs({Op(b, "aten.add", {x, Op(b, "aten.embedding", {emb, ids})})});
  Folded f = FoldAndCheck(std::move(g));
  EXPECT_FALSE(f.changed);
  EXPECT_FALSE(Interpret(f.folded, Inputs(f.folded, 1)).ok());
}

TEST(FoldConstantsTest, ExternalDataOnlyWithItsFolder) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string dir = tmp != nullptr ? tmp : "/tmp";
  const std::string bytes = RandomBytes(6 * 4, 14);
  {
    std::ofstream out(dir + "/weights.bin", std::ios::binary);
    out << "header" << bytes;
  }
  auto make = [&] {
    Graph g("external");
    GraphBuilder b(g);
    Value* x = b.Input(TensorType(proto::FLOAT32, {kBatch, 6}), "x");
    g.symbols().push_back({"batch", 1, 0, 4});
    ConstantData data;
    data.external_path = "weights.bin";
    data.external_offset = 6;
    data.external_length = static_cast<int64_t>(bytes.size());
    Value* w = g.AddConstant(TensorType(proto::FLOAT32, {4, 6}), data, "w");
    g.SetOutputs({Op(b, "aten.linear", {x, w})});
    return g;
  };
  FoldConstantsOptions with_dir;
  with_dir.external_data_dir = dir;
  EXPECT_FALSE(FoldAndCheck(make(), 0, {}).changed);
  Folded f = FoldAndCheck(make(), 0, with_dir);
  EXPECT_TRUE(f.changed);
  for (const Value* c : f.folded.constants()) EXPECT_FALSE(c->constant().is_external());
}

TEST(FoldConstantsTest, NothingFoldsWithoutAnEvaluator) {
  Graph g("linear");
  GraphBuilder b(g);
  Value* x = b.Input(TensorType(proto::FLOAT32, {4, 16}), "x");
  Value* w = Weight(b, {8, 16}, 1, "w");
  g.SetOutputs({Op(b, "aten.linear", {x, w})});
  ASSERT_TRUE(prims::Decompose(g).ok());
  Graph with = g.Clone();
  FoldConstantsOptions options;
  options.evaluate = ReferenceConstantEvaluator();
  absl::StatusOr<bool> changed = FoldConstants(with, options);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);  // the weight's transpose folds with an evaluator
  changed = FoldConstants(g, {});
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_FALSE(*changed);
}

}  // namespace
}  // namespace coil::inductor
