// AutogradEagerDerivatives: eager ops' gradients through one-op joint graphs.
#include "tools/driver/eager_derivatives.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "autograd/derivative_registry.h"
#include "autograd/joint_graph.h"
#include "ir/builder.h"
#include "ir/graph.h"
#include "ir/graph_hash.h"
#include "runtime/interpreter.h"

namespace coil::driver {
namespace {

TensorType StaticType(const HostTensor& t) {
  std::vector<SymExpr> shape(t.shape().begin(), t.shape().end());
  return TensorType(t.dtype(), std::move(shape));
}

class Derivatives : public EagerDerivatives {
 public:
  GradFlow Flow(absl::string_view op, std::string* reason) const override {
    const autograd::DerivativeRegistry& r = autograd::DerivativeRegistry::Global();
    if (r.Find(op) != nullptr) return GradFlow::kDifferentiable;
    if (const std::string* why = r.NotDifferentiableReason(op)) {
      // Ops that read only their input's shape give no gradient, as in PyTorch.
      if (op == "aten.zeros_like" || op == "aten.ones_like" || op == "aten.full_like") {
        return GradFlow::kNoGradient;
      }
      *reason = *why;
      return GradFlow::kError;
    }
    *reason = "it has no derivative rule";
    return GradFlow::kError;
  }

  absl::StatusOr<std::vector<std::optional<HostTensor>>> Backward(
      absl::string_view op, const AttrMap& attrs, const std::vector<HostTensor>& inputs,
      const std::vector<std::optional<HostTensor>>& grads,
      const std::vector<bool>& needs_grad) const override {
    // The one-op forward graph.
    Graph forward(absl::StrCat("eager_", op));
    GraphBuilder b(forward);
    std::vector<Value*> ins;
    for (size_t i = 0; i < inputs.size(); ++i) {
      ins.push_back(b.Input(StaticType(inputs[i]), absl::StrCat("x", i)));
    }
    absl::StatusOr<std::vector<Value*>> outs = b.OpMulti(op, ins, attrs);
    if (!outs.ok()) return outs.status();
    forward.SetOutputs(*outs);
    std::vector<bool> tangents(outs->size(), false);
    bool any = false;
    for (size_t k = 0; k < outs->size(); ++k) {
      tangents[k] = k < grads.size() && grads[k].has_value() && IsFloating((*outs)[k]->type().dtype);
      any = any || tangents[k];
    }
    std::vector<bool> needs(inputs.size(), false);
    bool any_need = false;
    for (size_t i = 0; i < inputs.size(); ++i) {
      needs[i] = i < needs_grad.size() && needs_grad[i] && IsFloating(inputs[i].dtype());
      any_need = any_need || needs[i];
    }
    std::vector<std::optional<HostTensor>> result(inputs.size());
    if (!any || !any_need) return result;

    // The joint graph, cached by the forward graph's structure and the masks.
    std::string key = StructuralHashHex(forward);
    for (bool x : needs) key.push_back(x ? '1' : '0');
    key.push_back(':');
    for (bool x : tangents) key.push_back(x ? '1' : '0');
    std::shared_ptr<const autograd::JointGraph> joint;
    {
      absl::MutexLock lock(&mu_);
      auto it = cache_.find(key);
      if (it != cache_.end()) joint = it->second;
    }
    if (joint == nullptr) {
      absl::StatusOr<autograd::JointGraph> j = autograd::BuildJointGraph(forward, needs, tangents);
      if (!j.ok()) return j.status();
      joint = std::make_shared<const autograd::JointGraph>(*std::move(j));
      absl::MutexLock lock(&mu_);
      cache_.emplace(key, joint);
    }
    std::vector<HostTensor> args(inputs.begin(), inputs.end());
    for (size_t k = 0; k < tangents.size(); ++k) {
      if (tangents[k]) args.push_back(*grads[k]);
    }
    absl::StatusOr<std::vector<HostTensor>> out = Interpret(joint->graph, args);
    if (!out.ok()) return out.status();
    for (size_t k = 0; k < joint->grad_inputs.size(); ++k) {
      result[joint->grad_inputs[k]] = (*out)[joint->num_forward_outputs + k];
    }
    return result;
  }

 private:
  mutable absl::Mutex mu_;
  mutable absl::flat_hash_map<std::string, std::shared_ptr<const autograd::JointGraph>> cache_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace

std::shared_ptr<const EagerDerivatives> AutogradEagerDerivatives() {
  static const std::shared_ptr<const EagerDerivatives> d = std::make_shared<Derivatives>();
  return d;
}

}  // namespace coil::driver
