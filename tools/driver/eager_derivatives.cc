// AutogradEagerDerivatives: eager ops' gradients through one-op joint graphs.
#include "tools/driver/eager_derivatives.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
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
    std::vector<bool> tangents;
    absl::StatusOr<std::shared_ptr<const autograd::JointGraph>> joint =
        Joint(op, attrs, inputs, grads, needs_grad, tangents);
    if (!joint.ok()) return joint.status();
    std::vector<std::optional<HostTensor>> result(inputs.size());
    if (*joint == nullptr) return result;
    std::vector<HostTensor> args(inputs.begin(), inputs.end());
    for (size_t k = 0; k < tangents.size(); ++k) {
      if (tangents[k]) args.push_back(*grads[k]);
    }
    absl::StatusOr<std::vector<HostTensor>> out = Interpret((*joint)->graph, args);
    if (!out.ok()) return out.status();
    for (size_t k = 0; k < (*joint)->grad_inputs.size(); ++k) {
      result[(*joint)->grad_inputs[k]] = (*out)[(*joint)->num_forward_outputs + k];
    }
    return result;
  }

  // The primal inputs the joint graph's gradient outputs depend on (its forward outputs are
  // computed too, but only the gradients are used).
  std::vector<bool> InputsRead(absl::string_view op, const AttrMap& attrs,
                               const std::vector<HostTensor>& inputs,
                               const std::vector<std::optional<HostTensor>>& grads,
                               const std::vector<bool>& needs_grad) const override {
    std::vector<bool> tangents;
    absl::StatusOr<std::shared_ptr<const autograd::JointGraph>> joint =
        Joint(op, attrs, inputs, grads, needs_grad, tangents);
    if (!joint.ok()) return std::vector<bool>(inputs.size(), true);  // Backward will say why
    std::vector<bool> read(inputs.size(), false);
    if (*joint == nullptr) return read;
    const Graph& g = (*joint)->graph;
    absl::flat_hash_set<const Value*> seen;
    std::vector<const Value*> stack;
    for (size_t k = (*joint)->num_forward_outputs; k < g.outputs().size(); ++k) {
      stack.push_back(g.outputs()[k]);
    }
    while (!stack.empty()) {
      const Value* v = stack.back();
      stack.pop_back();
      if (!seen.insert(v).second) continue;
      if (const Node* n = v->producer()) {
        for (const Value* in : n->inputs()) stack.push_back(in);
      }
    }
    for (size_t i = 0; i < inputs.size() && i < g.inputs().size(); ++i) {
      read[i] = seen.contains(g.inputs()[i]);
    }
    return read;
  }

 private:
  // The one-op joint graph for these inputs, gradients and needs (cached by the forward graph's
  // structure and the masks), and which outputs take a tangent; nullptr when no gradient flows.
  absl::StatusOr<std::shared_ptr<const autograd::JointGraph>> Joint(
      absl::string_view op, const AttrMap& attrs, const std::vector<HostTensor>& inputs,
      const std::vector<std::optional<HostTensor>>& grads, const std::vector<bool>& needs_grad,
      std::vector<bool>& tangents) const {
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
    tangents.assign(outs->size(), false);
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
    if (!any || !any_need) return std::shared_ptr<const autograd::JointGraph>();
    std::string key = StructuralHashHex(forward);
    for (bool x : needs) key.push_back(x ? '1' : '0');
    key.push_back(':');
    for (bool x : tangents) key.push_back(x ? '1' : '0');
    {
      absl::MutexLock lock(&mu_);
      auto it = cache_.find(key);
      if (it != cache_.end()) return it->second;
    }
    absl::StatusOr<autograd::JointGraph> j = autograd::BuildJointGraph(forward, needs, tangents);
    if (!j.ok()) return j.status();
    auto joint = std::make_shared<const autograd::JointGraph>(*std::move(j));
    absl::MutexLock lock(&mu_);
    cache_.emplace(key, joint);
    return joint;
  }

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
