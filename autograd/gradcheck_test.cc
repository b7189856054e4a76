// Every derivative rule against central finite differences in float64 on the reference
// interpreter (testing/gradcheck.h): one or more cases per op with random inputs, size-1 dims,
// broadcast operands, and a set of cases with symbolic shapes. Each case also checks the joint
// graph after prims::Decompose. The last test fails when a rule has no case here.
#include <cmath>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "autograd/derivative_registry.h"
#include "autograd/testing/gradcheck.h"
#include "gtest/gtest.h"

namespace coil::autograd {
namespace {

// How an input's values are drawn.
enum class Dist {
  kAny,    // uniform in [-2, 2]
  kPos,    // uniform in [0.5, 2]
  kUnit,   // uniform in [-0.9, 0.9]
  kGt1,    // uniform in [1.2, 3]
  kWide,   // uniform in [-8, 8]
  kIndex,  // integers in [0, hi)
  kBool,   // random bools
  kGiven,  // `values`
};

struct In {
  SymList shape;
  Dist dist = Dist::kAny;
  bool grad = true;
  int64_t hi = 0;
  DType dtype = proto::FLOAT64;
  std::vector<double> values;
};

In A(SymList s) { return {std::move(s)}; }
In P(SymList s) { return {std::move(s), Dist::kPos}; }
In U(SymList s) { return {std::move(s), Dist::kUnit}; }
In G1(SymList s) { return {std::move(s), Dist::kGt1}; }
In W(SymList s) { return {std::move(s), Dist::kWide}; }
In Idx(SymList s, int64_t hi) { return {std::move(s), Dist::kIndex, false, hi, proto::INT64}; }
In Given(SymList s, std::vector<double> v) {
  return {std::move(s), Dist::kGiven, false, 0, proto::INT64, std::move(v)};
}
// Given floating values that need a gradient (zeros for prod, ties for max, ...).
In GivenF(SymList s, std::vector<double> v) {
  return {std::move(s), Dist::kGiven, true, 0, proto::FLOAT64, std::move(v)};
}
In B(SymList s) { return {std::move(s), Dist::kBool, false, 0, proto::BOOL}; }
In NoGrad(In in) {
  in.grad = false;
  return in;
}

struct Case {
  std::string op;
  std::vector<In> inputs;
  AttrMap attrs;
};

const SymExpr kN = SymExpr::Symbol("n");

std::vector<Case> Cases() {
  std::vector<Case> c;
  // ---- unary ----
  for (const char* op : {"aten.abs", "aten.neg", "aten.exp", "aten.exp2", "aten.expm1",
                         "aten.square", "aten.sin", "aten.cos", "aten.atan", "aten.sinh",
                         "aten.cosh", "aten.tanh", "aten.asinh", "aten.erf", "aten.erfc",
                         "aten.sigmoid", "aten.log_sigmoid", "aten.relu", "aten.silu",
                         "aten.mish", "aten.selu", "aten.frac", "aten.clone", "aten.contiguous",
                         "aten.ceil", "aten.floor", "aten.round", "aten.trunc", "aten.sign",
                         "aten.nan_to_num", "aten.log_sigmoid"}) {
    c.push_back({op, {A({2, 1, 3})}});
  }
  for (const char* op : {"aten.log", "aten.log2", "aten.log10", "aten.log1p", "aten.sqrt",
                         "aten.rsqrt", "aten.reciprocal"}) {
    c.push_back({op, {P({3, 2})}});
  }
  for (const char* op : {"aten.tan", "aten.asin", "aten.acos", "aten.atanh"}) {
    c.push_back({op, {U({4})}});
  }
  c.push_back({"aten.acosh", {G1({4})}});
  for (const char* op : {"aten.relu6", "aten.hardswish", "aten.hardsigmoid", "aten.hardtanh"}) {
    c.push_back({op, {W({3, 4})}});
  }
  c.push_back({"aten.hardtanh", {W({5})}, {{"min_val", -2.0}, {"max_val", 3.0}}});
  c.push_back({"aten.gelu", {A({2, 3})}});
  c.push_back({"aten.gelu", {A({2, 3})}, {{"approximate", std::string("tanh")}}});
  c.push_back({"aten.softplus", {A({6})}, {{"beta", 2.0}, {"threshold", 1.0}}});
  c.push_back({"aten.leaky_relu", {A({6})}, {{"negative_slope", 0.2}}});
  c.push_back({"aten.elu", {A({6})}, {{"alpha", 0.5}, {"scale", 1.5}, {"input_scale", 0.7}}});
  c.push_back({"aten.celu", {A({6})}, {{"alpha", 0.7}}});
  c.push_back({"aten.threshold", {A({6})}, {{"threshold", 0.3}, {"value", 5.0}}});
  c.push_back({"aten.hardshrink", {A({6})}, {{"lambd", 0.6}}});
  c.push_back({"aten.softshrink", {A({6})}, {{"lambd", 0.6}}});
  c.push_back({"aten.clamp",
               {A({6})},
               {{"min", -0.5}, {"max", 0.7}, {"has_min", true}, {"has_max", true}}});
  c.push_back({"aten.clamp", {A({6})}, {{"min", -0.5}, {"has_min", true}}});
  c.push_back({"aten.clamp_min", {A({6})}, {{"min", 0.1}}});
  c.push_back({"aten.clamp_max", {A({6})}, {{"max", 0.1}}});
  c.push_back({"aten.to_dtype", {A({2, 3})}, {{"dtype", proto::FLOAT32}}});
  // ---- binary, with broadcasting ----
  c.push_back({"aten.add", {A({2, 3}), A({3})}, {{"alpha", 2.0}}});
  c.push_back({"aten.add", {A({2, 1, 3}), A({4, 1})}});
  c.push_back({"aten.sub", {A({2, 1, 3}), A({4, 1})}, {{"alpha", 0.5}}});
  c.push_back({"aten.rsub", {A({1, 3}), A({2, 3})}, {{"alpha", 3.0}}});
  c.push_back({"aten.mul", {A({2, 3}), A({1, 3})}});
  c.push_back({"aten.mul", {A({}), A({2, 3})}});
  c.push_back({"aten.div", {A({2, 3}), P({3})}});
  c.push_back({"aten.div", {A({2, 3}), P({3})}, {{"rounding_mode", std::string("floor")}}});
  c.push_back({"aten.pow", {P({2, 3}), A({3})}});
  for (const char* op : {"aten.maximum", "aten.minimum", "aten.fmax", "aten.fmin",
                         "aten.atan2", "aten.hypot", "aten.copysign"}) {
    c.push_back({op, {A({2, 3}), A({2, 1})}});
  }
  c.push_back({"aten.fmod", {A({2, 3}), P({3})}});
  c.push_back({"aten.remainder", {A({2, 3}), P({3})}});
  for (const char* op : {"aten.add_scalar", "aten.sub_scalar", "aten.mul_scalar",
                         "aten.div_scalar", "aten.rsub_scalar"}) {
    c.push_back({op, {A({2, 3})}, {{"other", 1.5}}});
  }
  c.push_back({"aten.fmod_scalar", {A({4})}, {{"other", 0.7}}});
  c.push_back({"aten.remainder_scalar", {A({4})}, {{"other", 0.7}}});
  c.push_back({"aten.pow_scalar", {P({4})}, {{"other", 2.5}}});
  c.push_back({"aten.addcmul", {A({3}), A({2, 3}), A({2, 1})}, {{"value", 0.5}}});
  c.push_back({"aten.addcdiv", {A({2, 3}), A({2, 3}), P({3})}, {{"value", 2.0}}});
  c.push_back({"aten.lerp", {A({2, 3}), A({3}), U({2, 1})}});
  c.push_back({"aten.where", {B({2, 3}), A({2, 3}), A({3})}});
  c.push_back({"aten.masked_fill", {A({2, 3}), B({3})}, {{"value", 4.0}}});
  // ---- reductions ----
  c.push_back({"aten.sum", {A({2, 3, 4})}, {{"dim", IntList{1}}}});
  c.push_back({"aten.sum", {A({2, 3, 4})}, {{"dim", IntList{0, -1}}, {"keepdim", true}}});
  c.push_back({"aten.sum", {A({2, 3})}});
  c.push_back({"aten.mean", {A({2, 3, 4})}, {{"dim", IntList{2}}}});
  c.push_back({"aten.mean", {A({2, 1, 4})}, {{"dim", IntList{1}}, {"keepdim", true}}});
  c.push_back({"aten.amax", {A({3, 4})}, {{"dim", IntList{1}}}});
  c.push_back({"aten.amin", {A({3, 4})}, {{"dim", IntList{0}}, {"keepdim", true}}});
  c.push_back({"aten.max_dim", {A({3, 4})}, {{"dim", int64_t{1}}}});
  c.push_back({"aten.min_dim", {A({3, 4})}, {{"dim", int64_t{0}}, {"keepdim", true}}});
  c.push_back({"aten.logsumexp", {A({3, 4})}, {{"dim", IntList{1}}}});
  c.push_back({"aten.norm", {A({3, 4})}, {{"dim", IntList{1}}}});
  c.push_back({"aten.norm", {A({3, 4})}, {{"p", 3.0}}});
  c.push_back({"aten.norm", {A({3, 4})}, {{"p", INFINITY}, {"dim", IntList{0}}}});
  c.push_back({"aten.var", {A({3, 4})}, {{"dim", IntList{1}}}});
  c.push_back({"aten.std", {A({3, 4})}, {{"dim", IntList{0}}, {"keepdim", true}}});
  c.push_back({"aten.var_mean", {A({3, 4})}, {{"dim", IntList{1}}, {"correction", int64_t{0}}}});
  c.push_back({"aten.std_mean", {A({3, 4})}});
  c.push_back({"aten.cumsum", {A({3, 4})}, {{"dim", int64_t{1}}}});
  c.push_back({"aten.cumprod", {A({3, 4})}, {{"dim", int64_t{1}}}});
  c.push_back({"aten.cumprod", {GivenF({2, 4}, {1.5, 0, 2, -1, 0, 3, 0, 2})},
               {{"dim", int64_t{-1}}}});
  c.push_back({"aten.cumprod", {A({4, 2})}, {{"dim", int64_t{0}}}});
  c.push_back({"aten.softmax", {A({3, 4})}, {{"dim", int64_t{-1}}}});
  c.push_back({"aten.log_softmax", {A({3, 1, 4})}, {{"dim", int64_t{0}}}});
  c.push_back({"aten.layer_norm", {A({2, 3, 4}), A({4}), A({4})},
               {{"normalized_shape", SymList{4}}}});
  c.push_back({"aten.layer_norm", {A({2, 3, 4})}, {{"normalized_shape", SymList{3, 4}}}});
  c.push_back({"aten.rms_norm", {A({2, 3, 4}), A({4})}, {{"normalized_shape", SymList{4}}}});
  c.push_back({"aten.batch_norm", {A({2, 3, 2}), NoGrad(A({3})), NoGrad(P({3})), A({3}), A({3})},
               {{"eps", 0.01}}});
  // training=true: batch statistics; the updated running statistics are outputs 1 and 2 (their
  // random tangents check the derivative through them too).
  c.push_back({"aten.batch_norm", {A({3, 2, 2}), A({2}), P({2}), A({2}), A({2})},
               {{"training", true}, {"momentum", 0.3}, {"eps", 0.01}}});
  c.push_back({"aten.batch_norm", {A({4, 3}), NoGrad(A({3})), NoGrad(P({3}))},
               {{"training", true}}});
  c.push_back({"aten.group_norm", {A({2, 4, 3}), A({4}), A({4})}, {{"num_groups", int64_t{2}}}});
  c.push_back({"aten.instance_norm", {A({2, 3, 4}), A({3}), A({3})}});
  c.push_back({"aten.local_response_norm", {A({2, 5, 3})},
               {{"size", int64_t{3}}, {"alpha", 0.5}, {"beta", 0.75}, {"k", 1.5}}});
  c.push_back({"aten.local_response_norm", {A({1, 4, 2, 2})},
               {{"size", int64_t{2}}, {"alpha", 0.3}, {"beta", 0.6}, {"k", 2.0}}});
  // ---- shape ----
  c.push_back({"aten.reshape", {A({2, 3})}, {{"shape", SymList{3, 2}}}});
  c.push_back({"aten.view", {A({2, 3})}, {{"shape", SymList{6}}}});
  c.push_back({"aten.flatten", {A({2, 3, 2})}, {{"start_dim", int64_t{1}}}});
  c.push_back({"aten.unflatten", {A({2, 6})}, {{"dim", int64_t{1}}, {"sizes", SymList{2, 3}}}});
  c.push_back({"aten.squeeze", {A({2, 1, 3})}, {{"dims", IntList{1}}}});
  c.push_back({"aten.unsqueeze", {A({2, 3})}, {{"dim", int64_t{-1}}}});
  c.push_back({"aten.expand", {A({3, 1})}, {{"size", SymList{2, 3, 4}}}});
  c.push_back({"aten.permute", {A({2, 3, 4})}, {{"dims", IntList{2, 0, 1}}}});
  c.push_back({"aten.transpose", {A({2, 3, 4})}, {{"dim0", int64_t{0}}, {"dim1", int64_t{2}}}});
  c.push_back({"aten.t", {A({2, 3})}});
  c.push_back({"aten.movedim", {A({2, 3, 4})},
               {{"source", IntList{0}}, {"destination", IntList{2}}}});
  c.push_back({"aten.slice", {A({5, 3})},
               {{"dim", int64_t{0}}, {"start", SymExpr(1)}, {"end", SymExpr(5)},
                {"step", int64_t{2}}}});
  c.push_back({"aten.narrow", {A({2, 5})},
               {{"dim", int64_t{1}}, {"start", SymExpr(1)}, {"length", SymExpr(3)}}});
  c.push_back({"aten.select", {A({2, 5})}, {{"dim", int64_t{1}}, {"index", SymExpr(-2)}}});
  c.push_back({"aten.slice_scatter", {A({5, 3}), A({2, 3})},
               {{"dim", int64_t{0}}, {"start", SymExpr(1)}, {"end", SymExpr(5)},
                {"step", int64_t{2}}}});
  c.push_back({"aten.select_scatter", {A({2, 5}), A({2})},
               {{"dim", int64_t{1}}, {"index", SymExpr(3)}}});
  c.push_back({"aten.cat", {A({2, 3}), A({1, 3}), A({2, 3})}});
  c.push_back({"aten.cat", {A({2, 3}), A({2, 1})}, {{"dim", int64_t{-1}}}});
  c.push_back({"aten.stack", {A({2, 3}), A({2, 3})}, {{"dim", int64_t{1}}}});
  c.push_back({"aten.split", {A({5, 2})}, {{"split_size", SymExpr(2)}}});
  c.push_back({"aten.chunk", {A({2, 6})}, {{"chunks", int64_t{3}}, {"dim", int64_t{1}}}});
  c.push_back({"aten.flip", {A({2, 3})}, {{"dims", IntList{0, 1}}}});
  c.push_back({"aten.roll", {A({2, 3})}, {{"shifts", IntList{1}}, {"dims", IntList{1}}}});
  c.push_back({"aten.roll", {A({2, 3})}, {{"shifts", IntList{4}}}});
  c.push_back({"aten.repeat", {A({2, 3})}, {{"repeats", SymList{2, 1, 2}}}});
  c.push_back({"aten.tile", {A({2, 3})}, {{"dims", SymList{2}}}});
  c.push_back({"aten.pad", {A({2, 3})}, {{"pad", IntList{1, 2, 0, 1}}, {"value", 0.5}}});
  c.push_back({"aten.tril", {A({3, 4})}, {{"diagonal", int64_t{1}}}});
  c.push_back({"aten.diagonal", {A({3, 4})}, {{"offset", int64_t{1}}}});
  c.push_back({"aten.diagonal", {A({2, 4, 3})},
               {{"offset", int64_t{-1}}, {"dim1", int64_t{2}}, {"dim2", int64_t{1}}}});
  c.push_back({"aten.prod", {A({2, 3, 4})}, {{"dim", IntList{1}}}});
  c.push_back({"aten.prod", {A({3, 4})}, {{"keepdim", true}}});  // every dim
  c.push_back({"aten.prod", {GivenF({2, 3}, {1.5, 0, 2, 0, 0, -1})}, {{"dim", IntList{1}}}});
  c.push_back({"aten.upsample_nearest2d", {A({1, 2, 3, 2})}, {{"output_size", SymList{5, 4}}}});
  c.push_back({"aten.upsample_nearest2d", {A({1, 1, 2, 3})},
               {{"scale_factors", FloatList{2.0, 1.5}}}});
  c.push_back({"aten.upsample_bilinear2d", {A({1, 2, 3, 2})}, {{"output_size", SymList{5, 4}}}});
  c.push_back({"aten.upsample_bilinear2d", {A({1, 1, 4, 3})},
               {{"output_size", SymList{2, 5}}, {"align_corners", true}}});
  c.push_back({"aten.upsample_bilinear2d", {A({2, 1, 2, 3})},
               {{"scale_factors", FloatList{2.0, 1.5}}}});
  c.push_back({"aten.adaptive_max_pool2d", {A({2, 2, 5, 7})}, {{"output_size", IntList{3, 2}}}});
  c.push_back({"aten.adaptive_max_pool1d", {A({3, 7})}, {{"output_size", IntList{3}}}});
  c.push_back({"aten.adaptive_max_pool3d", {A({1, 1, 4, 3, 3})},
               {{"output_size", IntList{2, 2, 1}}}});
  c.push_back({"aten.triu", {A({2, 3, 3})}});
  c.push_back({"aten.pixel_shuffle", {A({1, 8, 2, 3})}, {{"upscale_factor", int64_t{2}}}});
  c.push_back({"aten.pixel_unshuffle", {A({1, 2, 4, 2})}, {{"downscale_factor", int64_t{2}}}});
  // ---- nn ----
  c.push_back({"aten.mm", {A({2, 3}), A({3, 4})}});
  c.push_back({"aten.bmm", {A({2, 2, 3}), A({2, 3, 1})}});
  c.push_back({"aten.matmul", {A({3}), A({3})}});
  c.push_back({"aten.matmul", {A({3}), A({3, 2})}});
  c.push_back({"aten.matmul", {A({2, 3}), A({3})}});
  c.push_back({"aten.matmul", {A({2, 4, 3}), A({3, 2})}});
  c.push_back({"aten.matmul", {A({2, 1, 2, 3}), A({3, 3, 4})}});
  c.push_back({"aten.dot", {A({4}), A({4})}});
  c.push_back({"aten.mv", {A({2, 3}), A({3})}});
  c.push_back({"aten.outer", {A({2}), A({3})}});
  c.push_back({"aten.addmm", {A({4}), A({2, 3}), A({3, 4})}, {{"beta", 0.5}, {"alpha", 2.0}}});
  c.push_back({"aten.baddbmm", {A({2, 1, 4}), A({2, 2, 3}), A({2, 3, 4})}, {{"alpha", 0.5}}});
  c.push_back({"aten.linear", {A({2, 2, 3}), A({4, 3}), A({4})}});
  c.push_back({"aten.linear", {A({3}), A({4, 3})}});
  c.push_back({"aten.gather", {A({3, 4}), Idx({2, 4}, 3)}, {{"dim", int64_t{0}}}});
  // (src has index's shape: torch's src gradient is gather(g, index), of index's shape)
  c.push_back({"aten.scatter", {A({3, 4}), Given({2, 2}, {0, 2, 2, 1}), A({2, 2})},
               {{"dim", int64_t{0}}}});
  c.push_back({"aten.scatter_add", {A({3, 4}), Idx({2, 4}, 3), A({2, 4})}, {{"dim", int64_t{0}}}});
  c.push_back({"aten.index_select", {A({3, 4}), Idx({5}, 4)}, {{"dim", int64_t{1}}}});
  c.push_back({"aten.index_tensor", {A({4, 3}), Given({2, 2}, {0, -1, 3, 0})}});
  c.push_back({"aten.index_put", {A({4, 3}), Given({2}, {1, 3}), A({3})}});
  c.push_back({"aten.index_put", {A({4, 3}), Given({3}, {1, 3, 1}), A({3, 3})},
               {{"accumulate", true}}});
  c.push_back({"aten.embedding", {A({5, 3}), Given({2, 3}, {0, 4, 0, 2, 2, 1})}});
  // (embedding with padding_idx is not a derivative of its forward, which reads the padding
  // row like any other: torch drops that row's gradient by definition; autograd_oracle_test
  // checks it against torch.)
  c.push_back({"aten.dropout", {A({2, 3})}, {{"p", 0.5}, {"train", false}}});
  // train=true: the mask is fixed by (seed, offset), so the differences see the same mask.
  c.push_back({"aten.dropout", {A({3, 5})},
               {{"p", 0.4}, {"train", true}, {"seed", int64_t{11}}, {"offset", int64_t{5}}}});
  c.push_back({"aten.scaled_dot_product_attention", {A({2, 3, 4}), A({2, 5, 4}), A({2, 5, 3})}});
  c.push_back({"aten.scaled_dot_product_attention",
               {A({1, 2, 4, 3}), A({2, 1, 4, 3}), A({2, 2, 4, 2})},
               {{"is_causal", true}, {"scale", 0.7}}});
  c.push_back({"aten.scaled_dot_product_attention",
               {A({2, 3, 4}), A({2, 5, 4}), A({2, 5, 3}), A({3, 5})}});
  c.push_back({"aten.scaled_dot_product_attention",
               {A({2, 3, 4}), A({2, 5, 4}), A({2, 5, 3}), In{{3, 5}, Dist::kGiven, false, 0,
                                                          proto::BOOL,
                                                          {1, 0, 1, 1, 1, 1, 1, 0, 0, 1, 0, 1,
                                                           1, 1, 1}}}});
  // Dropout of the weights: the mask is fixed by (seed, offset), drawn over the weights
  // broadcast to [2, 2, 4, 4] here (q, k and v broadcast their batch dims differently).
  c.push_back({"aten.scaled_dot_product_attention",
               {A({1, 2, 4, 3}), A({2, 1, 4, 3}), A({2, 2, 4, 2})},
               {{"is_causal", true}, {"dropout_p", 0.3}, {"seed", int64_t{5}},
                {"offset", int64_t{7}}}});
  c.push_back({"aten.scaled_dot_product_attention",
               {A({2, 3, 4}), A({2, 5, 4}), A({2, 5, 3}), A({3, 5})},
               {{"dropout_p", 0.5}, {"seed", int64_t{1}}, {"offset", int64_t{1} << 40}}});
  c.push_back({"aten.scaled_dot_product_attention", {A({2, 3, 4}), A({2, 5, 4}), A({2, 5, 3})},
               {{"dropout_p", 1.0}}});  // every weight dropped: zeros, no seed needed
  c.push_back({"aten.scaled_dot_product_attention", {A({2, 3, 4}), A({2, 5, 4}), A({2, 5, 3})},
               {{"dropout_p", 0.5}, {"train", false}}});  // no dropout
  c.push_back({"aten.convolution", {A({2, 2, 5, 6}), A({3, 2, 3, 2}), A({3})},
               {{"stride", IntList{2, 1}}, {"padding", IntList{1}}}});
  c.push_back({"aten.conv1d", {A({2, 3, 9}), A({2, 3, 3})},
               {{"stride", IntList{2}}, {"dilation", IntList{2}}, {"padding", IntList{2}}}});
  c.push_back({"aten.conv1d", {A({3, 7}), A({2, 3, 2}), A({2})}});
  c.push_back({"aten.conv2d", {A({1, 2, 4, 5}), A({2, 2, 2, 3}), A({2})},
               {{"stride", IntList{2}}}});
  c.push_back({"aten.conv3d", {A({1, 1, 3, 4, 3}), A({2, 1, 2, 2, 2})},
               {{"padding", IntList{1}}}});
  c.push_back({"aten.conv2d", {A({2, 4, 5, 4}), A({6, 2, 3, 2}), A({6})},
               {{"groups", int64_t{2}}, {"stride", IntList{2, 1}}, {"padding", IntList{1}}}});
  c.push_back({"aten.conv1d", {A({2, 3, 6}), A({3, 1, 3})},
               {{"groups", int64_t{3}}, {"dilation", IntList{2}}}});
  c.push_back({"aten.convolution", {A({2, 2, 3, 4}), A({2, 3, 2, 3}), A({3})},
               {{"transposed", true}, {"stride", IntList{2}}, {"padding", IntList{1}},
                {"output_padding", IntList{1}}}});
  c.push_back({"aten.conv_transpose1d", {A({2, 4, 5}), A({4, 1, 3})},
               {{"groups", int64_t{2}}, {"stride", IntList{2}}, {"dilation", IntList{2}}}});
  c.push_back({"aten.conv_transpose2d", {A({1, 2, 3, 3}), A({2, 2, 2, 2}), A({2})},
               {{"stride", IntList{2}}}});
  c.push_back({"aten.conv_transpose3d", {A({2, 2, 2, 3}), A({2, 1, 2, 2, 1})}});
  c.push_back({"aten.max_pool2d", {A({1, 2, 5, 6})},
               {{"kernel_size", IntList{3, 2}}, {"stride", IntList{2}}, {"padding", IntList{1}}}});
  c.push_back({"aten.max_pool2d", {A({2, 1, 5, 5})},
               {{"kernel_size", IntList{2}}, {"ceil_mode", true}}});
  c.push_back({"aten.max_pool1d", {A({2, 3, 9})},
               {{"kernel_size", IntList{3}}, {"stride", IntList{2}}, {"dilation", IntList{2}}}});
  c.push_back({"aten.max_pool3d", {A({1, 1, 4, 4, 3})}, {{"kernel_size", IntList{2}}}});
  c.push_back({"aten.avg_pool2d", {A({1, 2, 5, 6})},
               {{"kernel_size", IntList{3}}, {"stride", IntList{2}}, {"padding", IntList{1}}}});
  c.push_back({"aten.avg_pool2d", {A({1, 2, 5, 6})},
               {{"kernel_size", IntList{3}}, {"stride", IntList{2}}, {"padding", IntList{1}},
                {"count_include_pad", false}}});
  c.push_back({"aten.avg_pool1d", {A({3, 7})}, {{"kernel_size", IntList{3}}}});
  c.push_back({"aten.adaptive_avg_pool2d", {A({1, 2, 5, 7})}, {{"output_size", IntList{3, 2}}}});
  c.push_back({"aten.adaptive_avg_pool1d", {A({2, 3, 7})}, {{"output_size", IntList{3}}}});
  c.push_back({"aten.adaptive_avg_pool3d", {A({1, 1, 4, 5, 3})},
               {{"output_size", IntList{2, 2, 1}}}});
  c.push_back({"aten.avg_pool3d", {A({1, 1, 4, 4, 3})},
               {{"kernel_size", IntList{2}}, {"divisor_override", int64_t{3}}}});
  return c;
}

// Cases with a symbolic dim n (bound to 3 when run; the graph declares n >= 2).
std::vector<Case> SymbolicCases() {
  std::vector<Case> c;
  c.push_back({"aten.add", {A({kN, 3}), A({3})}});
  c.push_back({"aten.mul", {A({kN, 1}), A({1, 4})}});
  c.push_back({"aten.sum", {A({kN, 3})}, {{"dim", IntList{0}}}});
  c.push_back({"aten.mean", {A({kN, 3})}, {{"dim", IntList{0}}}});
  c.push_back({"aten.var", {A({kN, 3})}, {{"dim", IntList{0}}}});
  c.push_back({"aten.softmax", {A({kN, 3})}, {{"dim", int64_t{0}}}});
  c.push_back({"aten.layer_norm", {A({kN, 4}), A({4}), A({4})},
               {{"normalized_shape", SymList{4}}}});
  c.push_back({"aten.matmul", {A({kN, 4}), A({4, 2})}});
  c.push_back({"aten.linear", {A({2, kN, 3}), A({4, 3}), A({4})}});
  c.push_back({"aten.reshape", {A({kN, 3})}, {{"shape", SymList{kN * 3}}}});
  c.push_back({"aten.slice", {A({kN, 3})},
               {{"dim", int64_t{0}}, {"start", SymExpr(1)}, {"end", kN}}});
  c.push_back({"aten.expand", {A({kN, 1})}, {{"size", SymList{2, kN, 4}}}});
  c.push_back({"aten.cat", {A({kN, 2}), A({2, 2})}});
  c.push_back({"aten.embedding", {A({5, 2}), Idx({kN}, 5)}});
  c.push_back({"aten.adaptive_avg_pool1d", {A({2, 3, kN})}, {{"output_size", IntList{2}}}});
  c.push_back({"aten.batch_norm", {A({kN, 2, 3}), A({2}), P({2}), A({2}), A({2})},
               {{"training", true}, {"eps", 0.01}}});
  c.push_back({"aten.dropout", {A({kN, 4})},
               {{"p", 0.5}, {"train", true}, {"seed", int64_t{3}}, {"offset", int64_t{0}}}});
  c.push_back({"aten.scaled_dot_product_attention", {A({kN, 3, 2}), A({kN, 4, 2}), A({1, 4, 3})},
               {{"dropout_p", 0.4}, {"seed", int64_t{9}}, {"offset", int64_t{2}}}});
  return c;
}

std::string Describe(const Case& c) {
  std::string s = c.op + "(";
  for (const In& in : c.inputs) {
    absl::StrAppend(&s, TensorType(in.dtype, in.shape).ToString(), in.grad ? "" : " nograd",
                    ", ");
  }
  return s + ")";
}

// Builds the case's graph and inputs and runs the gradcheck; returns the failure, or "".
std::string Check(const Case& c, uint64_t seed) {
  std::vector<TensorType> types;
  for (const In& in : c.inputs) types.push_back(TensorType(in.dtype, in.shape));
  absl::StatusOr<Graph> g = testing::SingleOpGraph(c.op, types, c.attrs);
  if (!g.ok()) return absl::StrCat("building: ", g.status().ToString());
  absl::flat_hash_map<std::string, int64_t> bind = {{"n", 3}};
  std::mt19937_64 rng(seed);
  std::vector<HostTensor> inputs;
  std::vector<bool> rg;
  for (const In& in : c.inputs) {
    std::vector<int64_t> shape;
    int64_t count = 1;
    for (const SymExpr& d : in.shape) {
      shape.push_back(*d.Evaluate(bind));
      count *= shape.back();
    }
    std::vector<double> v(count);
    auto uni = [&](double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng); };
    for (int64_t i = 0; i < count; ++i) {
      switch (in.dist) {
        case Dist::kAny: v[i] = uni(-2, 2); break;
        case Dist::kPos: v[i] = uni(0.5, 2); break;
        case Dist::kUnit: v[i] = uni(-0.9, 0.9); break;
        case Dist::kGt1: v[i] = uni(1.2, 3); break;
        case Dist::kWide: v[i] = uni(-8, 8); break;
        case Dist::kIndex: v[i] = std::floor(uni(0, static_cast<double>(in.hi))); break;
        case Dist::kBool: v[i] = uni(0, 1) < 0.5; break;
        case Dist::kGiven: v[i] = in.values.at(i); break;
      }
    }
    inputs.push_back(HostTensor::FromDoubles(in.dtype, shape, v));
    rg.push_back(in.grad);
  }
  testing::GradcheckOptions options;
  options.seed = seed;
  testing::GradcheckResult r = testing::Gradcheck(*g, inputs, rg, options);
  if (!r.status.ok()) return r.status.ToString();
  if (!r.ok(options)) return absl::StrCat("error ", r.max_error, " at ", r.worst);
  return "";
}

TEST(Gradcheck, EveryCaseMatchesFiniteDifferences) {
  int checked = 0;
  for (const Case& c : Cases()) {
    for (uint64_t seed : {1, 2}) {
      std::string failure = Check(c, seed);
      EXPECT_EQ(failure, "") << Describe(c) << " seed " << seed;
      ++checked;
    }
  }
  std::cout << checked << " gradchecks\n";
}

TEST(Gradcheck, SymbolicShapes) {
  for (const Case& c : SymbolicCases()) {
    EXPECT_EQ(Check(c, 3), "") << Describe(c);
  }
}

// Every op with a rule has at least one case above (a new rule needs a gradcheck).
TEST(Gradcheck, EveryRuleHasACase) {
  std::set<std::string> covered;
  for (const Case& c : Cases()) covered.insert(c.op);
  for (const std::string& op : DerivativeRegistry::Global().Ops()) {
    EXPECT_TRUE(covered.count(op)) << op << " has a derivative rule but no gradcheck case";
  }
}

}  // namespace
}  // namespace coil::autograd
