// SgdGraph and AdamGraph: torch.optim's single-tensor updates as in-place aten ops.
#include "autograd/optimizer.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "ir/builder.h"
#include "ir/dtype.h"
#include "ir/verifier.h"

namespace coil::autograd {
namespace {

absl::Status Invalid(absl::string_view optimizer, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(optimizer, ": ", what));
}

absl::Status CheckParams(absl::string_view optimizer, const std::vector<TensorType>& params) {
  if (params.empty()) return Invalid(optimizer, "no parameters");
  for (size_t i = 0; i < params.size(); ++i) {
    if (!IsFloating(params[i].dtype)) {
      return Invalid(optimizer, absl::StrCat("parameter ", i, " is ", params[i].ToString(),
                                             " (expected a floating dtype)"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckNonNegative(absl::string_view optimizer, absl::string_view name, double v) {
  if (!(v >= 0)) return Invalid(optimizer, absl::StrCat("invalid ", name, " value: ", v));
  return absl::OkStatus();
}

// Emits ops through a GraphBuilder; the first failure is kept and later ops are skipped.
class Ops {
 public:
  explicit Ops(Graph& g) : b_(g) {}
  Value* operator()(absl::string_view op, std::vector<Value*> in, AttrMap attrs = {}) {
    if (!status_.ok()) return nullptr;
    for (Value* v : in) {
      if (v == nullptr) return nullptr;
    }
    absl::StatusOr<Value*> v = b_.Op(op, std::move(in), std::move(attrs));
    if (!v.ok()) {
      status_ = absl::InternalError(absl::StrCat("optimizer graph: ", op, ": ",
                                                 v.status().message()));
      return nullptr;
    }
    return *v;
  }
  GraphBuilder& builder() { return b_; }
  const absl::Status& status() const { return status_; }

 private:
  GraphBuilder b_;
  absl::Status status_;
};

struct Inputs {
  std::vector<Value*> params, grads;
  std::vector<std::vector<Value*>> state;  // [param][k]
};

Inputs AddInputs(Ops& ops, const std::vector<TensorType>& params,
                 const std::vector<std::string>& state_names) {
  Inputs in;
  for (size_t i = 0; i < params.size(); ++i) {
    in.params.push_back(ops.builder().Input(params[i], absl::StrCat("param_", i)));
  }
  for (size_t i = 0; i < params.size(); ++i) {
    in.grads.push_back(ops.builder().Input(params[i], absl::StrCat("grad_", i)));
  }
  for (size_t i = 0; i < params.size(); ++i) {
    in.state.emplace_back();
    for (const std::string& s : state_names) {
      in.state.back().push_back(ops.builder().Input(params[i], absl::StrCat(s, "_", i)));
    }
  }
  return in;
}

absl::StatusOr<OptimizerGraph> Finish(OptimizerGraph out, const Ops& ops) {
  if (!ops.status().ok()) return ops.status();
  if (absl::Status s = Verify(out.graph); !s.ok()) {
    return absl::InternalError(absl::StrCat("optimizer graph does not verify: ", s.message()));
  }
  return out;
}

}  // namespace

absl::StatusOr<OptimizerGraph> SgdGraph(const std::vector<TensorType>& params,
                                        const SgdOptions& o) {
  const char* kName = "SGD";
  if (absl::Status s = CheckParams(kName, params); !s.ok()) return s;
  for (auto [name, v] : {std::pair<const char*, double>{"learning rate", o.lr},
                         {"momentum", o.momentum}, {"weight_decay", o.weight_decay}}) {
    if (absl::Status s = CheckNonNegative(kName, name, v); !s.ok()) return s;
  }
  if (o.nesterov && o.momentum == 0) {
    return Invalid(kName, "nesterov momentum requires a momentum");
  }
  OptimizerGraph out;
  out.graph.set_name("sgd_step");
  out.num_params = static_cast<int>(params.size());
  if (o.momentum != 0) out.state_names = {"momentum_buffer"};
  Ops ops(out.graph);
  Inputs in = AddInputs(ops, params, out.state_names);
  for (size_t i = 0; i < params.size(); ++i) {
    Value* p = in.params[i];
    Value* d = in.grads[i];
    if (o.weight_decay != 0) d = ops("aten.add", {d, p}, {{"alpha", o.weight_decay}});
    if (o.momentum != 0) {
      Value* buf = in.state[i][0];
      ops("aten.add_", {ops("aten.mul_scalar_", {buf}, {{"other", o.momentum}}), d});
      d = o.nesterov ? ops("aten.add", {d, buf}, {{"alpha", o.momentum}}) : buf;
    }
    ops("aten.add_", {p, d}, {{"alpha", -o.lr}});
  }
  return Finish(std::move(out), ops);
}

absl::StatusOr<OptimizerGraph> AdamGraph(const std::vector<TensorType>& params,
                                         const AdamOptions& o) {
  const char* kName = o.decoupled_weight_decay ? "AdamW" : "Adam";
  if (absl::Status s = CheckParams(kName, params); !s.ok()) return s;
  for (auto [name, v] : {std::pair<const char*, double>{"learning rate", o.lr},
                         {"epsilon", o.eps}, {"weight_decay", o.weight_decay}}) {
    if (absl::Status s = CheckNonNegative(kName, name, v); !s.ok()) return s;
  }
  for (auto [name, v] : {std::pair<const char*, double>{"beta parameter at index 0", o.beta1},
                         {"beta parameter at index 1", o.beta2}}) {
    if (!(v >= 0 && v < 1)) return Invalid(kName, absl::StrCat("invalid ", name, ": ", v));
  }
  OptimizerGraph out;
  out.graph.set_name(o.decoupled_weight_decay ? "adamw_step" : "adam_step");
  out.num_params = static_cast<int>(params.size());
  out.state_names = {"exp_avg", "exp_avg_sq"};
  out.has_step = true;
  Ops ops(out.graph);
  Inputs in = AddInputs(ops, params, out.state_names);
  Value* step = ops.builder().Input(TensorType(proto::FLOAT32, {}), "step");
  ops("aten.add_scalar_", {step}, {{"other", 1.0}});
  // Bias corrections in f64: 1 - beta^step = 1 - exp(step ln beta) (beta = 0: 1).
  Value* t = ops("aten.to_dtype", {step}, {{"dtype", proto::FLOAT64}});
  auto correction = [&](double beta) {
    if (beta == 0) return ops("aten.full_like", {t}, {{"value", 1.0}});
    Value* pow = ops("aten.exp", {ops("aten.mul_scalar", {t}, {{"other", std::log(beta)}})});
    return ops("aten.rsub_scalar", {pow}, {{"other", 1.0}});
  };
  // -step_size = -lr / bc1 and sqrt(bc2), then rounded to f32 as torch's Python scalars are.
  Value* neg_step_size =
      ops("aten.to_dtype",
          {ops("aten.div", {ops("aten.full_like", {t}, {{"value", -o.lr}}), correction(o.beta1)})},
          {{"dtype", proto::FLOAT32}});
  Value* bc2_sqrt = ops("aten.to_dtype", {ops("aten.sqrt", {correction(o.beta2)})},
                        {{"dtype", proto::FLOAT32}});
  for (size_t i = 0; i < params.size(); ++i) {
    Value* p = in.params[i];
    Value* g = in.grads[i];
    Value* m = in.state[i][0];
    Value* v = in.state[i][1];
    if (o.weight_decay != 0) {
      if (o.decoupled_weight_decay) {
        ops("aten.mul_scalar_", {p}, {{"other", 1 - o.lr * o.weight_decay}});
      } else {
        g = ops("aten.add", {g, p}, {{"alpha", o.weight_decay}});
      }
    }
    ops("aten.add_", {ops("aten.mul_scalar_", {m}, {{"other", o.beta1}}), g},
        {{"alpha", 1 - o.beta1}});
    ops("aten.addcmul_", {ops("aten.mul_scalar_", {v}, {{"other", o.beta2}}), g, g},
        {{"value", 1 - o.beta2}});
    Value* denom = ops("aten.add_scalar", {ops("aten.div", {ops("aten.sqrt", {v}), bc2_sqrt})},
                       {{"other", o.eps}});
    ops("aten.add_", {p, ops("aten.div", {ops("aten.mul", {neg_step_size, m}), denom})});
  }
  return Finish(std::move(out), ops);
}

}  // namespace coil::autograd
