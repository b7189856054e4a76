// The derivative table, GradCall and sum-to-size.
#include "autograd/derivative_registry.h"

#include <algorithm>

#include "autograd/rules/register.h"
#include "ir/check.h"

namespace coil::autograd {

using prims::Emitter;
using prims::FullLike;

GradCall::GradCall(Emitter& e, std::string op, std::vector<Val> inputs, const AttrMap& attrs,
                   std::vector<Val> outputs, std::vector<Val> grads,
                   std::vector<bool> needs_grad)
    : prims::OpCall(e, std::move(op), std::move(inputs), attrs, [&outputs] {
        std::vector<TensorType> types;
        for (const Val& v : outputs) types.push_back(v.type());
        return types;
      }()),
      outputs_(std::move(outputs)),
      grads_(std::move(grads)),
      needs_grad_(std::move(needs_grad)) {}

Val GradCall::out(int i) const {
  if (i < 0 || i >= static_cast<int>(outputs_.size())) {
    e().Fail(absl::InternalError(absl::StrCat(op(), ": output ", i, " is absent")));
    return Val();
  }
  return outputs_[i];
}

Val GradCall::grad(int i) const {
  if (i < 0 || i >= static_cast<int>(grads_.size())) {
    e().Fail(absl::InternalError(absl::StrCat(op(), ": gradient of output ", i, " is absent")));
    return Val();
  }
  if (grads_[i].ok()) return grads_[i];
  Val o = out(i);
  return FullLike(o, 0.0, prims::ComputeDType(o.dtype()));
}

bool GradCall::has_grad(int i) const {
  return i >= 0 && i < static_cast<int>(grads_.size()) && grads_[i].ok();
}

bool GradCall::needs_grad(int i) const {
  return i >= 0 && i < static_cast<int>(needs_grad_.size()) && needs_grad_[i];
}

Val GradCall::SumTo(int i, Val g) const { return SumToShape(g, in(i).shape()); }

Val SumToShape(Val g, const SymList& shape) {
  if (!g.ok()) return g;
  if (g.shape() == shape) return g;
  int64_t lead = g.rank() - static_cast<int64_t>(shape.size());
  if (lead < 0) {
    g.emitter().Fail(absl::InternalError(absl::StrCat(
        "sum-to-size: gradient of rank ", g.rank(), " for a value of rank ", shape.size())));
    return Val();
  }
  IntList dims;
  for (int64_t d = 0; d < lead; ++d) dims.push_back(d);
  for (size_t i = 0; i < shape.size(); ++i) {
    const SymExpr& have = g.shape()[lead + i];
    if (shape[i] == SymExpr(1) && have != SymExpr(1)) dims.push_back(lead + i);
  }
  if (dims.empty()) return prims::Reshape(g, shape);
  return prims::Reshape(prims::Sum(g, dims), shape);
}

const DerivativeRegistry& DerivativeRegistry::Global() {
  static const DerivativeRegistry* registry = [] {
    auto* r = new DerivativeRegistry;
    RegisterElementwiseRules(*r);
    RegisterBinaryRules(*r);
    RegisterReductionRules(*r);
    RegisterShapeRules(*r);
    RegisterNnRules(*r);
    RegisterConvRules(*r);
    RegisterPoolRules(*r);
    RegisterAttentionRules(*r);
    RegisterUpsampleRules(*r);
    RegisterNotDifferentiable(*r);
    return r;
  }();
  return *registry;
}

void DerivativeRegistry::Add(std::string op, DerivativeFn fn) {
  COIL_CHECK(fn != nullptr) << "derivative of " << op << " is null";
  COIL_CHECK(!not_differentiable_.contains(op)) << op << " is marked not differentiable";
  bool inserted = rules_.emplace(op, std::move(fn)).second;
  COIL_CHECK(inserted) << "two derivatives of " << op;
}

void DerivativeRegistry::AddNotDifferentiable(std::string op, std::string reason) {
  COIL_CHECK(!rules_.contains(op)) << op << " has a derivative rule";
  bool inserted = not_differentiable_.emplace(op, std::move(reason)).second;
  COIL_CHECK(inserted) << op << " marked not differentiable twice";
}

const DerivativeFn* DerivativeRegistry::Find(absl::string_view op) const {
  auto it = rules_.find(op);
  return it == rules_.end() ? nullptr : &it->second;
}

const std::string* DerivativeRegistry::NotDifferentiableReason(absl::string_view op) const {
  auto it = not_differentiable_.find(op);
  return it == not_differentiable_.end() ? nullptr : &it->second;
}

std::vector<std::string> DerivativeRegistry::Ops() const {
  std::vector<std::string> ops;
  for (const auto& [name, fn] : rules_) ops.push_back(name);
  std::sort(ops.begin(), ops.end());
  return ops;
}

}  // namespace coil::autograd
