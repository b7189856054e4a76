// The partitioner against its own oracle, the joint graph: forward graph then backward graph
// (through the saved values) must give the joint graph's outputs and gradients, for
// save-everything, the default min-cut and budget 0, on models built with GraphBuilder and on
// random graphs. Saved bytes: min-cut <= save-everything and budget 0 <= default; every saved
// value is read by the backward; the backward recomputes only cheap ops.
#include "autograd/partition.h"

#include <cmath>
#include <cstdio>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "autograd/joint_graph.h"
#include "gtest/gtest.h"
#include "ir/builder.h"
#include "ir/verifier.h"
#include "prims/decompose.h"
#include "runtime/interpreter.h"

namespace coil::autograd {
namespace {

HostTensor Random(const TensorType& t, std::mt19937_64& rng) {
  std::vector<int64_t> shape;
  for (const SymExpr& d : t.shape) shape.push_back(d.constant());
  std::vector<double> v(1);
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  v.resize(n);
  std::normal_distribution<double> dist;
  for (double& x : v) x = dist(rng);
  return HostTensor::FromDoubles(t.dtype, shape, v);
}

std::vector<double> Flat(const std::vector<HostTensor>& ts) {
  std::vector<double> out;
  for (const HostTensor& t : ts) {
    std::vector<double> v = t.ToDoubles();
    out.insert(out.end(), v.begin(), v.end());
  }
  return out;
}

// The joint and the two partitioned graphs run the same ops on the same values, each rounded
// to f32 the same way, so their results agree to rounding noise at most.
InterpreterOptions F32Mode() { return InterpreterOptions(); }

// Partitions `joint` with `options`, runs forward then backward, compares with the joint's
// results `want`; stores the saved bytes.
void CheckVariant(const JointGraph& joint, const PartitionOptions& options,
                  const std::vector<HostTensor>& primals, const std::vector<HostTensor>& tangents,
                  const std::vector<HostTensor>& want, int64_t* bytes) {
  SCOPED_TRACE(absl::StrCat("strategy ", static_cast<int>(options.strategy), " budget ",
                            options.activation_memory_budget));
  absl::StatusOr<Partition> p = PartitionJoint(joint, options);
  ASSERT_TRUE(p.ok()) << p.status();
  *bytes = p->saved_bytes;
  EXPECT_TRUE(Verify(p->forward).ok()) << Verify(p->forward);
  EXPECT_TRUE(Verify(p->backward).ok()) << Verify(p->backward);
  // Every saved value is read by the backward.
  for (size_t i = 0; i < p->saved.size(); ++i) {
    const Value* in = p->backward.inputs()[i];
    bool used = in->HasUsers();
    for (const Value* o : p->backward.outputs()) used = used || o == in;
    EXPECT_TRUE(used) << "saved value " << p->saved[i].name << " is never read";
  }
  // The backward never recomputes a forward matmul (each joint matmul runs once, in one of the
  // two graphs), and with budget 1 no forward reduction either.
  auto count = [](const Graph& g, bool reductions) {
    int n = 0;
    for (const Node* node : g.nodes()) {
      bool mm = node->op() == "aten.mm" || node->op() == "aten.bmm";
      bool red = node->op() == "prims.sum" || node->op() == "prims.amax";
      n += reductions ? red : mm;
    }
    return n;
  };
  EXPECT_EQ(count(p->forward, false) + count(p->backward, false), count(joint.graph, false));
  if (options.activation_memory_budget == 1.0) {
    EXPECT_EQ(count(p->forward, true) + count(p->backward, true), count(joint.graph, true));
  }
  absl::StatusOr<std::vector<HostTensor>> fw = Interpret(p->forward, primals, F32Mode());
  ASSERT_TRUE(fw.ok()) << fw.status();
  std::vector<HostTensor> got(fw->begin(), fw->begin() + p->num_forward_outputs);
  std::vector<HostTensor> bw_args(fw->begin() + p->num_forward_outputs, fw->end());
  bw_args.insert(bw_args.end(), tangents.begin(), tangents.end());
  absl::StatusOr<std::vector<HostTensor>> bw = Interpret(p->backward, bw_args, F32Mode());
  ASSERT_TRUE(bw.ok()) << bw.status();
  got.insert(got.end(), bw->begin(), bw->end());
  std::vector<double> g = Flat(got), w = Flat(want);
  ASSERT_EQ(g.size(), w.size());
  for (size_t i = 0; i < g.size(); ++i) {
    EXPECT_NEAR(g[i], w[i], 1e-6 * std::fabs(w[i]) + 1e-7) << "element " << i;
  }
}

struct Bytes {
  int64_t everything = 0, mincut = 0, budget0 = 0;
};

// Partitions `forward`'s decomposed joint graph three ways and checks each against the joint
// (every input needs a gradient unless `rg` says which).
Bytes CheckPartitions(const Graph& forward, uint64_t seed, std::vector<bool> rg = {},
                      const std::vector<bool>& output_tangents = {}) {
  Bytes bytes;
  if (rg.empty()) rg.assign(forward.inputs().size(), true);
  absl::StatusOr<JointGraph> joint = BuildJointGraph(forward, rg, output_tangents);
  EXPECT_TRUE(joint.ok()) << joint.status();
  if (!joint.ok()) return bytes;
  absl::StatusOr<bool> decomposed = prims::Decompose(joint->graph);
  EXPECT_TRUE(decomposed.ok()) << decomposed.status();
  std::mt19937_64 rng(seed);
  std::vector<HostTensor> args;
  for (const Value* in : joint->graph.inputs()) args.push_back(Random(in->type(), rng));
  absl::StatusOr<std::vector<HostTensor>> want = Interpret(joint->graph, args, F32Mode());
  EXPECT_TRUE(want.ok()) << want.status();
  if (!want.ok()) return bytes;
  std::vector<HostTensor> primals(args.begin(), args.begin() + joint->num_primals);
  std::vector<HostTensor> tangents(args.begin() + joint->num_primals, args.end());

  CheckVariant(*joint, {PartitionStrategy::kSaveEverything, 1.0}, primals, tangents, *want,
               &bytes.everything);
  CheckVariant(*joint, {PartitionStrategy::kMinCut, 1.0}, primals, tangents, *want,
               &bytes.mincut);
  CheckVariant(*joint, {PartitionStrategy::kMinCut, 0.0}, primals, tangents, *want,
               &bytes.budget0);
  EXPECT_LE(bytes.mincut, bytes.everything);
  EXPECT_LE(bytes.budget0, bytes.mincut);
  return bytes;
}

Value* Op(GraphBuilder& b, const std::string& op, std::vector<Value*> in, AttrMap attrs = {}) {
  absl::StatusOr<Value*> v = b.Op(op, std::move(in), std::move(attrs));
  EXPECT_TRUE(v.ok()) << v.status();
  return *v;
}

// x -> linear -> gelu -> linear -> layer_norm -> log_softmax -> mean: an MLP block.
Graph Mlp() {
  Graph g("mlp");
  GraphBuilder b(g);
  Value* x = b.Input(TensorType(proto::FLOAT32, {16, 32}), "x");
  Value* w1 = b.Input(TensorType(proto::FLOAT32, {64, 32}), "w1");
  Value* b1 = b.Input(TensorType(proto::FLOAT32, {64}), "b1");
  Value* w2 = b.Input(TensorType(proto::FLOAT32, {32, 64}), "w2");
  Value* h = Op(b, "aten.gelu", {Op(b, "aten.linear", {x, w1, b1})});
  Value* y = Op(b, "aten.layer_norm", {Op(b, "aten.linear", {h, w2})},
                {{"normalized_shape", SymList{32}}});
  Value* l = Op(b, "aten.log_softmax", {Op(b, "aten.tanh", {y})}, {{"dim", int64_t{-1}}});
  g.SetOutputs({Op(b, "aten.mean", {l})});
  return g;
}

TEST(Partition, MlpMatchesJointAndSavesLess) {
  Bytes bytes = CheckPartitions(Mlp(), 1);
  std::printf("MLP saved bytes: save-everything %lld, min-cut %lld, budget 0 %lld\n",
              static_cast<long long>(bytes.everything), static_cast<long long>(bytes.mincut),
              static_cast<long long>(bytes.budget0));
  // The pointwise chain after the second linear is recomputed, not saved.
  EXPECT_LT(bytes.mincut, bytes.everything);
}

// Random graphs over two [4, 8] inputs and an [8, 8] weight: pointwise ops, matmuls and
// reductions broadcast back, summed to a scalar at the end.
Graph RandomGraph(uint64_t seed) {
  std::mt19937_64 rng(seed);
  Graph g(absl::StrCat("random_", seed));
  GraphBuilder b(g);
  std::vector<Value*> pool = {b.Input(TensorType(proto::FLOAT32, {4, 8}), "a"),
                              b.Input(TensorType(proto::FLOAT32, {4, 8}), "b"),
                              b.Input(TensorType(proto::FLOAT32, {8, 8}), "w")};
  auto pick = [&] { return pool[rng() % pool.size()]; };
  auto pick48 = [&] {
    Value* v = pick();
    while (v->type().shape[0] != SymExpr(4)) v = pick();
    return v;
  };
  int n = 6 + static_cast<int>(rng() % 10);
  for (int i = 0; i < n; ++i) {
    switch (rng() % 7) {
      case 0: pool.push_back(Op(b, "aten.mul", {pick48(), pick48()})); break;
      case 1: pool.push_back(Op(b, "aten.add", {pick48(), pick48()})); break;
      case 2: pool.push_back(Op(b, "aten.tanh", {pick48()})); break;
      case 3: pool.push_back(Op(b, "aten.sigmoid", {pick48()})); break;
      case 4: pool.push_back(Op(b, "aten.mm", {pick48(), pool[2]})); break;
      case 5:
        pool.push_back(Op(b, "aten.mul", {pick48(), Op(b, "aten.sum", {pick48()},
                                                       {{"dim", IntList{1}},
                                                        {"keepdim", true}})}));
        break;
      default: pool.push_back(Op(b, "aten.softmax", {pick48()}, {{"dim", int64_t{1}}})); break;
    }
  }
  g.SetOutputs({Op(b, "aten.sum", {pool.back()}), pool[pool.size() - 2]});
  return g;
}

TEST(Partition, RandomGraphsMatchJoint) {
  for (uint64_t seed = 1; seed <= 25; ++seed) {
    SCOPED_TRACE(absl::StrCat("seed ", seed));
    CheckPartitions(RandomGraph(seed), seed);
  }
}

// y = dropout(x * w, p = 0.3, seed 5, offset 2): the mask is a function of (seed, offset), so
// the min-cut backward draws it again (prims.philox_uniform in both graphs, nothing saved for
// it) and the mask it draws is the forward's: with tangent 1, dL/dx = w mask / (1 - p), which is
// zero exactly where y is and equals y / x elsewhere.
// The default partition of `g`'s joint graph after decomposition (the form the driver
// partitions), gradients for the inputs `requires_grad` marks.
absl::StatusOr<Partition> DecomposedPartition(const Graph& g, std::vector<bool> requires_grad) {
  absl::StatusOr<JointGraph> joint = BuildJointGraph(g, std::move(requires_grad));
  if (!joint.ok()) return joint.status();
  absl::StatusOr<bool> decomposed = prims::Decompose(joint->graph);
  if (!decomposed.ok()) return decomposed.status();
  return PartitionJoint(*joint, {});
}

// How many random draws (prims.philox_uniform) `graph` makes.
int PhiloxDraws(const Graph& graph) {
  int n = 0;
  for (const Node* node : graph.nodes()) n += node->op() == "prims.philox_uniform";
  return n;
}

TEST(Partition, DropoutMaskIsRecomputedAndEqualsTheForwardMask) {
  Graph g("dropout");
  GraphBuilder b(g);
  Value* x = b.Input(TensorType(proto::FLOAT32, {6, 8}), "x");
  Value* w = b.Input(TensorType(proto::FLOAT32, {8}), "w");
  g.SetOutputs({Op(b, "aten.dropout", {Op(b, "aten.mul", {x, w})},
                   {{"p", 0.3}, {"train", true}, {"seed", int64_t{5}}, {"offset", int64_t{2}}})});
  Bytes bytes = CheckPartitions(g, 3);
  EXPECT_LT(bytes.mincut, bytes.everything);

  absl::StatusOr<Partition> p = DecomposedPartition(g, {true, true});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(PhiloxDraws(p->forward), 1);
  EXPECT_EQ(PhiloxDraws(p->backward), 1) << "the backward draws the mask again";
  for (const SavedValue& v : p->saved) {
    EXPECT_NE(v.type.dtype, proto::BOOL) << "the mask " << v.name << " is saved";
  }
  std::mt19937_64 rng(9);
  std::vector<HostTensor> primals = {Random(x->type(), rng), Random(w->type(), rng)};
  absl::StatusOr<std::vector<HostTensor>> fw = Interpret(p->forward, primals, F32Mode());
  ASSERT_TRUE(fw.ok()) << fw.status();
  std::vector<HostTensor> bw_args(fw->begin() + 1, fw->end());
  bw_args.push_back(HostTensor::FromDoubles(proto::FLOAT32, {6, 8}, std::vector<double>(48, 1)));
  absl::StatusOr<std::vector<HostTensor>> bw = Interpret(p->backward, bw_args, F32Mode());
  ASSERT_TRUE(bw.ok()) << bw.status();
  std::vector<double> y = (*fw)[0].ToDoubles(), gx = (*bw)[0].ToDoubles();
  std::vector<double> xs = primals[0].ToDoubles();
  int dropped = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    EXPECT_EQ(y[i] == 0, gx[i] == 0) << "element " << i << ": the masks differ";
    EXPECT_NEAR(gx[i] * xs[i], y[i], 1e-6 * std::fabs(y[i])) << "element " << i;
    dropped += y[i] == 0;
  }
  // 48 draws at p = 0.3: some dropped, most kept.
  EXPECT_GT(dropped, 4);
  EXPECT_LT(dropped, 30);
}

// Attention whose weights [2, 5, 7] are dropped (p = 0.2, seed 3, offset 11): the forward
// draws the mask once, the min-cut backward draws it again (the rule drops g v^T and the
// recomputed weights with the forward's seed and offset) and saves no mask; every partition
// gives the joint graph's gradients (CheckPartitions).
TEST(Partition, AttentionDropoutMaskIsRecomputed) {
  Graph g("attention_dropout");
  GraphBuilder b(g);
  Value* q = b.Input(TensorType(proto::FLOAT32, {2, 5, 4}), "q");
  Value* k = b.Input(TensorType(proto::FLOAT32, {2, 7, 4}), "k");
  Value* v = b.Input(TensorType(proto::FLOAT32, {2, 7, 3}), "v");
  g.SetOutputs({Op(b, "aten.scaled_dot_product_attention", {q, k, v},
                   {{"dropout_p", 0.2}, {"seed", int64_t{3}}, {"offset", int64_t{11}}})});
  CheckPartitions(g, 4);
  absl::StatusOr<Partition> p = DecomposedPartition(g, {true, true, true});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(PhiloxDraws(p->forward), 1);
  EXPECT_GE(PhiloxDraws(p->backward), 1) << "the backward draws the mask again";
  for (const SavedValue& s : p->saved) {
    EXPECT_NE(s.type.dtype, proto::BOOL) << "the mask " << s.name << " is saved";
  }
}

// tools/driver:training_test's CNN (x [8, 2, 6, 6], conv2d 2 -> 4 3x3 padding 1, batch_norm in
// training mode, relu, max_pool2d 2, linear 36 -> 3, cross entropy against one-hot labels),
// gradients for the six parameters only and a tangent for the loss only, as in training.
TEST(Partition, CnnWithTrainingBatchNormMatchesJoint) {
  Graph g("cnn");
  GraphBuilder b(g);
  auto in = [&](std::vector<SymExpr> shape, const char* name) {
    return b.Input(TensorType(proto::FLOAT32, std::move(shape)), name);
  };
  Value* x = in({8, 2, 6, 6}, "x");
  Value* onehot = in({8, 3}, "onehot");
  Value* cw = in({4, 2, 3, 3}, "conv_w");
  Value* cb = in({4}, "conv_b");
  Value* bw = in({4}, "bn_w");
  Value* bb = in({4}, "bn_b");
  Value* fw = in({3, 36}, "fc_w");
  Value* fb = in({3}, "fc_b");
  Value* rm = in({4}, "running_mean");
  Value* rv = in({4}, "running_var");
  absl::StatusOr<std::vector<Value*>> bn = b.OpMulti(
      "aten.batch_norm",
      {Op(b, "aten.conv2d", {x, cw, cb}, {{"padding", IntList{1}}}), rm, rv, bw, bb},
      {{"training", true}});
  ASSERT_TRUE(bn.ok()) << bn.status();
  Value* h = Op(b, "aten.max_pool2d", {Op(b, "aten.relu", {(*bn)[0]})},
                {{"kernel_size", IntList{2}}});
  Value* lp = Op(b, "aten.log_softmax",
                 {Op(b, "aten.linear",
                     {Op(b, "aten.flatten", {h}, {{"start_dim", int64_t{1}}}), fw, fb})},
                 {{"dim", int64_t{-1}}});
  Value* picked = Op(b, "aten.sum", {Op(b, "aten.mul", {onehot, lp})}, {{"dim", IntList{-1}}});
  g.SetOutputs({Op(b, "aten.neg", {Op(b, "aten.mean", {picked})}), (*bn)[1], (*bn)[2]});
  Bytes bytes = CheckPartitions(
      g, 5, {false, false, true, true, true, true, true, true, false, false}, {true, false, false});
  std::printf("CNN saved bytes: save-everything %lld, min-cut %lld, budget 0 %lld\n",
              static_cast<long long>(bytes.everything), static_cast<long long>(bytes.mincut),
              static_cast<long long>(bytes.budget0));
  EXPECT_LT(bytes.mincut, bytes.everything);
}

// Provenance: joint, forward and backward nodes keep the name of the forward node they copy
// or differentiate (the inspector links them to the user's op by it).
TEST(Partition, NodesKeepTheNameOfTheirForwardOp) {
  Graph forward = Mlp();
  std::set<std::string> names;
  int i = 0;
  for (Node* n : forward.nodes()) {
    n->set_name(absl::StrCat("/mlp/", n->op(), "_", i++));
    names.insert(n->name());
  }
  absl::StatusOr<JointGraph> joint = BuildJointGraph(forward, {true, true, true, true});
  ASSERT_TRUE(joint.ok()) << joint.status();
  ASSERT_GT(joint->graph.num_nodes(), forward.num_nodes());
  for (const Node* n : joint->graph.nodes()) {
    EXPECT_TRUE(names.count(n->name())) << n->Describe() << " is named '" << n->name() << "'";
  }
  absl::StatusOr<Partition> p = PartitionJoint(*joint, {});
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_GT(p->backward.num_nodes(), 0);
  for (const Graph* g : {&p->forward, &p->backward}) {
    for (const Node* n : g->nodes()) EXPECT_TRUE(names.count(n->name())) << n->Describe();
  }
}

TEST(Partition, BudgetOutOfRangeIsAnError) {
  absl::StatusOr<JointGraph> joint = BuildJointGraph(Mlp(), {true, true, true, true});
  ASSERT_TRUE(joint.ok()) << joint.status();
  absl::StatusOr<Partition> p = PartitionJoint(*joint, {PartitionStrategy::kMinCut, 1.5});
  EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(p.status().message().find("activation_memory_budget"), std::string::npos);
}

// Writes into inputs stay in the forward: s <- s * 0.9 + mean(x) (a running statistic) while
// y = x * w. The forward graph performs the write; the backward has no copy. A forward that
// overwrites w, which the backward reads for dL/dx, saves w's value from before the write.
TEST(Partition, ForwardKeepsItsInputWrites) {
  auto build = [](bool overwrite_w) {
    Graph g("writes");
    GraphBuilder b(g);
    Value* x = b.Input(TensorType(proto::FLOAT32, {4}), "x");
    Value* w = b.Input(TensorType(proto::FLOAT32, {4}), "w");
    Value* s = b.Input(TensorType(proto::FLOAT32, {}), "s");
    Value* y = Op(b, "aten.mul", {x, w});
    Value* m = Op(b, "aten.mean", {x}, {{"dim", IntList{}}, {"keepdim", false}});
    Value* update = Op(b, "aten.add", {Op(b, "aten.mul_scalar", {s}, {{"other", 0.9}}), m});
    Op(b, "aten.copy_", {overwrite_w ? w : s, overwrite_w ? y : update});
    g.SetOutputs({y});
    return g;
  };
  absl::StatusOr<JointGraph> joint = BuildJointGraph(build(false), {true, false, false});
  ASSERT_TRUE(joint.ok()) << joint.status();
  ASSERT_TRUE(prims::Decompose(joint->graph).ok());
  absl::StatusOr<Partition> p = PartitionJoint(*joint, {});
  ASSERT_TRUE(p.ok()) << p.status();
  auto copies = [](const Graph& graph) {
    int n = 0;
    for (const Node* node : graph.nodes()) n += node->op() == "prims.copy_to";
    return n;
  };
  EXPECT_EQ(copies(p->forward), 1);
  EXPECT_EQ(copies(p->backward), 0);
  // The forward writes s = 0.9 s + mean(x) into its input.
  HostTensor x = HostTensor::Zeros(proto::FLOAT32, {4}), w = x;
  for (int i = 0; i < 4; ++i) x.StoreDouble(i, i + 1.0);
  w = HostTensor::Zeros(proto::FLOAT32, {4});
  HostTensor s = HostTensor::Zeros(proto::FLOAT32, {});
  s.StoreDouble(0, 10.0);
  ASSERT_TRUE(Interpret(p->forward, {x, w, s}, F32Mode()).ok());
  EXPECT_NEAR(s.LoadDouble(0), 9.0 + 2.5, 1e-6);

  // w <- x * w: dL/dx = dL/dy * w from before the write, whichever strategy saves it.
  for (PartitionStrategy strategy : {PartitionStrategy::kMinCut, PartitionStrategy::kSaveEverything}) {
    absl::StatusOr<JointGraph> j = BuildJointGraph(build(true), {true, false, false});
    ASSERT_TRUE(j.ok()) << j.status();
    ASSERT_TRUE(prims::Decompose(j->graph).ok());
    absl::StatusOr<Partition> q = PartitionJoint(*j, {strategy});
    ASSERT_TRUE(q.ok()) << q.status();
    HostTensor wx = HostTensor::Zeros(proto::FLOAT32, {4});
    for (int i = 0; i < 4; ++i) wx.StoreDouble(i, 2.0 - i);
    absl::StatusOr<std::vector<HostTensor>> fw = Interpret(q->forward, {x, wx, s}, F32Mode());
    ASSERT_TRUE(fw.ok()) << fw.status();
    for (int i = 0; i < 4; ++i) EXPECT_EQ(wx.LoadDouble(i), (i + 1.0) * (2.0 - i));  // written
    std::vector<HostTensor> bw_in(fw->begin() + q->num_forward_outputs, fw->end());
    HostTensor tangent = HostTensor::Zeros(proto::FLOAT32, {4});
    for (int i = 0; i < 4; ++i) tangent.StoreDouble(i, 1.0 + 0.5 * i);
    bw_in.push_back(tangent);
    absl::StatusOr<std::vector<HostTensor>> grads = Interpret(q->backward, bw_in, F32Mode());
    ASSERT_TRUE(grads.ok()) << grads.status();
    ASSERT_EQ(grads->size(), 1u);
    for (int i = 0; i < 4; ++i) {
      EXPECT_EQ((*grads)[0].LoadDouble(i), (1.0 + 0.5 * i) * (2.0 - i)) << "dL/dx[" << i << "]";
    }
  }
}

}  // namespace
}  // namespace coil::autograd
