// The generated op functions: a sample of ops across families runs eagerly and matches the
// reference interpreter on the same one-node graph (built independently with GraphBuilder
// from the op name and attributes); every generated declaration compiles (this file includes
// them all through tensor.h).
#include <functional>
#include <string>
#include <vector>

#include "capture/tensor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/builder.h"
#include "ir/graph.h"
#include "runtime/interpreter.h"

namespace coil {
namespace {

struct Case {
  std::string op;
  std::vector<Tensor> inputs;
  AttrMap attrs;
  // The generated API call; returns every output the test compares.
  std::function<std::vector<Tensor>(const std::vector<Tensor>&)> eager;
};

using V = std::vector<Tensor>;

TensorType TypeOf(const Tensor& t) {
  std::vector<SymExpr> shape;
  for (const SymInt& s : t.sizes()) shape.push_back(SymExpr(s.hint()));
  return TensorType(t.dtype(), shape);
}

// Runs the case's op as a one-node graph on the reference interpreter.
std::vector<HostTensor> Reference(const Case& c) {
  Graph g(c.op);
  GraphBuilder b(g);
  std::vector<Value*> ins;
  std::vector<HostTensor> args;
  for (const Tensor& t : c.inputs) {
    ins.push_back(b.Input(TypeOf(t)));
    // A contiguous copy: the interpreter must not see (or write) the eager inputs.
    args.push_back(t.host().To(t.dtype()));
  }
  absl::StatusOr<std::vector<Value*>> outs = b.OpMulti(c.op, ins, c.attrs);
  EXPECT_TRUE(outs.ok()) << outs.status();
  if (!outs.ok()) return {};
  g.SetOutputs(*outs);
  absl::StatusOr<std::vector<HostTensor>> r = Interpret(g, args);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *r : std::vector<HostTensor>{};
}

Tensor R(std::vector<int64_t> shape, uint64_t seed) { return Tensor::Randn(shape, seed); }
Tensor U(std::vector<int64_t> shape, uint64_t seed) { return Tensor::Rand(shape, seed); }
Tensor I(std::vector<double> v, std::vector<int64_t> shape) {
  return Tensor::FromValues(v, shape, proto::INT64);
}

std::vector<Case> Cases() {
  Tensor x = R({2, 3, 4}, 1), y = R({2, 3, 4}, 2), m = R({3, 4}, 3), w = R({4, 5}, 4);
  Tensor img = R({1, 2, 5, 5}, 5), k = R({3, 2, 3, 3}, 6), kb = R({3}, 7);
  Tensor g = R({4}, 8), bb = R({4}, 9);
  return {
      {"aten.add", {x, y}, {{"alpha", 2.0}}, [](const V& a) { return V{add(a[0], a[1], 2.0)}; }},
      {"aten.sub", {x, m}, {}, [](const V& a) { return V{a[0] - a[1]}; }},
      {"aten.mul", {x, y}, {}, [](const V& a) { return V{a[0].mul(a[1])}; }},
      {"aten.div", {x, y}, {{"rounding_mode", std::string("floor")}},
       [](const V& a) { return V{div(a[0], a[1], "floor")}; }},
      {"aten.relu", {x}, {}, [](const V& a) { return V{relu(a[0])}; }},
      {"aten.gelu", {x}, {{"approximate", std::string("tanh")}},
       [](const V& a) { return V{a[0].gelu("tanh")}; }},
      {"aten.sigmoid", {x}, {}, [](const V& a) { return V{a[0].sigmoid()}; }},
      {"aten.tanh", {x}, {}, [](const V& a) { return V{tanh(a[0])}; }},
      {"aten.exp", {x}, {}, [](const V& a) { return V{a[0].exp()}; }},
      {"aten.pow_scalar", {U({3, 4}, 10)}, {{"other", 1.5}},
       [](const V& a) { return V{a[0].pow_scalar(1.5)}; }},
      {"aten.where", {x > 0.0, x, y}, {}, [](const V& a) { return V{where(a[0], a[1], a[2])}; }},
      {"aten.clamp", {x}, {{"min", -0.5}, {"max", 0.5}, {"has_min", true}, {"has_max", true}},
       [](const V& a) { return V{a[0].clamp(-0.5, 0.5, true, true)}; }},
      {"aten.sum", {x}, {{"dim", IntList{1}}, {"keepdim", true}},
       [](const V& a) { return V{a[0].sum({1}, true)}; }},
      {"aten.mean", {x}, {{"dim", IntList{-1}}}, [](const V& a) { return V{a[0].mean({-1})}; }},
      {"aten.amax", {x}, {{"dim", IntList{0, 2}}}, [](const V& a) { return V{amax(a[0], {0, 2})}; }},
      {"aten.max_dim", {x}, {{"dim", int64_t{1}}}, [](const V& a) { return a[0].max_dim(1); }},
      {"aten.var_mean", {x}, {{"dim", IntList{2}}}, [](const V& a) { return var_mean(a[0], {2}); }},
      {"aten.argmax", {x}, {{"dim", IntList{2}}}, [](const V& a) { return V{a[0].argmax({2})}; }},
      {"aten.softmax", {x}, {{"dim", int64_t{-1}}}, [](const V& a) { return V{a[0].softmax(-1)}; }},
      {"aten.log_softmax", {x}, {{"dim", int64_t{1}}},
       [](const V& a) { return V{log_softmax(a[0], 1)}; }},
      {"aten.layer_norm", {x, g, bb}, {{"normalized_shape", SymList{4}}},
       [](const V& a) { return V{layer_norm(a[0], {4}, a[1], a[2])}; }},
      {"aten.matmul", {x, w}, {}, [](const V& a) { return V{a[0].matmul(a[1])}; }},
      {"aten.mm", {m, w}, {}, [](const V& a) { return V{mm(a[0], a[1])}; }},
      {"aten.linear", {m, R({5, 4}, 11), R({5}, 12)}, {},
       [](const V& a) { return V{linear(a[0], a[1], a[2])}; }},
      {"aten.conv2d", {img, k, kb}, {{"padding", IntList{1}}, {"stride", IntList{2}}},
       [](const V& a) { return V{conv2d(a[0], a[1], a[2], {2}, {1})}; }},
      {"aten.max_pool2d", {img}, {{"kernel_size", IntList{2}}},
       [](const V& a) { return V{a[0].max_pool2d({2})}; }},
      {"aten.avg_pool2d", {img}, {{"kernel_size", IntList{3}}, {"stride", IntList{1}}},
       [](const V& a) { return V{avg_pool2d(a[0], {3}, {1})}; }},
      {"aten.cat", {x, y}, {{"dim", int64_t{1}}}, [](const V& a) { return V{cat({a[0], a[1]}, 1)}; }},
      {"aten.stack", {m, m}, {}, [](const V& a) { return V{stack({a[0], a[1]})}; }},
      {"aten.split", {x}, {{"split_size", SymExpr(2)}, {"dim", int64_t{2}}},
       [](const V& a) { return a[0].split(2, {}, 2); }},
      {"aten.chunk", {x}, {{"chunks", int64_t{3}}, {"dim", int64_t{1}}},
       [](const V& a) { return chunk(a[0], 3, 1); }},
      {"aten.reshape", {x}, {{"shape", SymList{4, -1}}},
       [](const V& a) { return V{a[0].reshape({4, -1})}; }},
      {"aten.permute", {x}, {{"dims", IntList{2, 0, 1}}},
       [](const V& a) { return V{a[0].permute({2, 0, 1})}; }},
      {"aten.transpose", {x}, {{"dim0", int64_t{0}}, {"dim1", int64_t{2}}},
       [](const V& a) { return V{a[0].transpose(0, 2)}; }},
      {"aten.slice", {x}, {{"dim", int64_t{2}}, {"start", SymExpr(1)}, {"end", SymExpr(3)}},
       [](const V& a) { return V{a[0].slice(2, 1, 3)}; }},
      {"aten.index_select", {x, I({2, 0}, {2})}, {{"dim", int64_t{2}}},
       [](const V& a) { return V{a[0].index_select(a[1], 2)}; }},
      {"aten.embedding", {w, I({0, 3, 3}, {3})}, {},
       [](const V& a) { return V{embedding(a[0], a[1])}; }},
      {"aten.gather", {m, I({0, 1, 2, 3, 3, 2, 1, 0, 0, 0, 0, 0}, {3, 4})}, {{"dim", int64_t{1}}},
       [](const V& a) { return V{a[0].gather(a[1], 1)}; }},
      {"aten.cumsum", {x}, {{"dim", int64_t{1}}}, [](const V& a) { return V{a[0].cumsum(1)}; }},
      {"aten.scaled_dot_product_attention", {x, y, x}, {{"is_causal", true}},
       [](const V& a) {
         return V{scaled_dot_product_attention(a[0], a[1], a[2], std::nullopt, 0.0, true)};
       }},
      {"aten.to_dtype", {x}, {{"dtype", DType(proto::INT32)}},
       [](const V& a) { return V{a[0].to_dtype(proto::INT32)}; }},
      {"aten.pad", {m}, {{"pad", IntList{1, 2}}, {"value", 3.0}},
       [](const V& a) { return V{pad(a[0], {1, 2}, "constant", 3.0)}; }},
      {"aten.add_", {x.clone(), y}, {}, [](const V& a) { return V{a[0].clone().add_(a[1])}; }},
      {"aten.mul_scalar", {I({1, 2, 3}, {3})}, {{"other", 0.5}},
       [](const V& a) { return V{a[0] * 0.5}; }},
  };
}

TEST(OpsGenerated, SampleMatchesReferenceInterpreter) {
  std::vector<Case> cases = Cases();
  ASSERT_GE(cases.size(), 30u);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op);
    std::vector<Tensor> eager = c.eager(c.inputs);
    std::vector<HostTensor> want = Reference(c);
    ASSERT_EQ(eager.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      HostTensor got = eager[i].host();
      EXPECT_EQ(got.TypeString(), want[i].TypeString()) << "output " << i;
      EXPECT_EQ(got.ToDoubles(), want[i].ToDoubles()) << "output " << i;
    }
  }
}

TEST(OpsGenerated, InplaceReturnsSelfAndViewsShareStorage) {
  Tensor x = Tensor::Zeros({2, 3});
  Tensor r = x.relu_();
  EXPECT_EQ(r.impl(), x.impl());
  Tensor v = x.view({3, 2});
  v.fill_(2);
  EXPECT_EQ(x.sum().item(), 12);
  std::vector<Tensor> parts = x.split(1, {}, 1);  // views of x
  ASSERT_EQ(parts.size(), 3u);
  parts[1].fill_(5);
  EXPECT_THAT(x.tolist(), ::testing::ElementsAre(2, 5, 2, 2, 5, 2));
}

TEST(OpsGenerated, DefaultsFollowPyTorch) {
  Tensor x = Tensor::FromValues({1, 2, 3, 4}, {2, 2});
  // torch.sum(x) == 10; x.var() == 1.6667 (correction 1); F.leaky_relu slope 0.01.
  EXPECT_EQ(x.sum().item(), 10);
  EXPECT_NEAR(x.var().item(), 5.0 / 3.0, 1e-6);
  EXPECT_NEAR(leaky_relu(-x).tolist()[0], -0.01, 1e-7);
  EXPECT_EQ(x.flatten().dim(), 1);
}

}  // namespace
}  // namespace coil
