// Builds the main job's decoder block (see decoder_block.h).
#include "tools/main_job/decoder_block.h"

#include <cmath>
#include <random>
#include <string>

#include "absl/strings/str_cat.h"
#include "ir/builder.h"
#include "runtime/host_tensor.h"

namespace coil::main_job {
namespace {

class BlockBuilder {
 public:
  BlockBuilder(Graph& g, uint64_t seed) : b_(g), rng_(seed) {}

  // Uniform(-bound, bound) weights, as nn.Linear's default initialization.
  Value* Param(std::vector<int64_t> shape, double bound, const std::string& name) {
    std::vector<SymExpr> dims(shape.begin(), shape.end());
    HostTensor t = HostTensor::Zeros(proto::FLOAT32, shape);
    std::uniform_real_distribution<double> u(-bound, bound);
    for (int64_t i = 0; i < t.numel(); ++i) t.StoreDouble(i, u(rng_));
    return b_.Constant(TensorType(proto::FLOAT32, dims), t.Bytes(), name);
  }
  Value* Ones(int64_t n, const std::string& name) {
    HostTensor t = HostTensor::Zeros(proto::FLOAT32, {n});
    for (int64_t i = 0; i < n; ++i) t.StoreDouble(i, 1.0);
    return b_.Constant(TensorType(proto::FLOAT32, {n}), t.Bytes(), name);
  }
  Value* Zeros(int64_t n, const std::string& name) {
    return b_.Constant(TensorType(proto::FLOAT32, {n}), HostTensor::Zeros(proto::FLOAT32, {n}).Bytes(),
                       name);
  }

  absl::StatusOr<Value*> Linear(Value* x, int64_t in, int64_t out, const std::string& name) {
    double bound = 1.0 / std::sqrt(static_cast<double>(in));
    Value* w = Param({out, in}, bound, name + ".weight");
    Value* bias = Param({out}, bound, name + ".bias");
    return b_.Op("aten.linear", {x, w, bias});
  }

  absl::StatusOr<Value*> LayerNorm(Value* x, int64_t d, const std::string& name) {
    return b_.Op("aten.layer_norm", {x, Ones(d, name + ".weight"), Zeros(d, name + ".bias")},
                 {{"normalized_shape", IntList{d}}, {"eps", 1e-5}});
  }

  GraphBuilder& b() { return b_; }

 private:
  GraphBuilder b_;
  std::mt19937_64 rng_;
};

#define COIL_ASSIGN(lhs, expr)           \
  auto lhs##_or = (expr);                \
  if (!lhs##_or.ok()) return lhs##_or.status(); \
  Value* lhs = *lhs##_or

}  // namespace

absl::StatusOr<Graph> BuildDecoderBlock(const DecoderConfig& c) {
  Graph g("decoder_block");
  g.symbols().push_back(SymbolInfo{"batch", 1, 0, 2});
  BlockBuilder bb(g, c.seed);
  GraphBuilder& b = bb.b();
  Value* x = b.Input(TensorType(proto::FLOAT32, {SymExpr::Symbol("batch"), c.seq, c.d_model}), "x");

  COIL_ASSIGN(h, bb.LayerNorm(x, c.d_model, "ln1"));
  COIL_ASSIGN(q, bb.Linear(h, c.d_model, c.d_model, "attn.q"));
  COIL_ASSIGN(k, bb.Linear(h, c.d_model, c.d_model, "attn.k"));
  COIL_ASSIGN(v, bb.Linear(h, c.d_model, c.d_model, "attn.v"));
  COIL_ASSIGN(att, b.Op("aten.scaled_dot_product_attention", {q, k, v}, {{"is_causal", true}}));
  COIL_ASSIGN(o, bb.Linear(att, c.d_model, c.d_model, "attn.out"));
  COIL_ASSIGN(x2, b.Op("aten.add", {x, o}));
  COIL_ASSIGN(h2, bb.LayerNorm(x2, c.d_model, "ln2"));
  COIL_ASSIGN(f1, bb.Linear(h2, c.d_model, c.d_ff, "mlp.fc1"));
  COIL_ASSIGN(act, b.Op("aten.gelu", {f1}, {{"approximate", std::string("tanh")}}));
  COIL_ASSIGN(f2, bb.Linear(act, c.d_ff, c.d_model, "mlp.fc2"));
  COIL_ASSIGN(y, b.Op("aten.add", {x2, f2}));
  COIL_ASSIGN(logits, bb.Linear(y, c.d_model, c.vocab, "head"));
  COIL_ASSIGN(probs, b.Op("aten.softmax", {logits}, {{"dim", int64_t{-1}}}));
  g.SetOutputs({probs});
  return g;
}

}  // namespace coil::main_job
