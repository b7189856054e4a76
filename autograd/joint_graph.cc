// BuildJointGraph: forward nodes copied, then the derivative rules in reverse order.
#include "autograd/joint_graph.h"

#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "autograd/derivative_registry.h"
#include "ir/dtype.h"
#include "ir/verifier.h"
#include "prims/emitter.h"
#include "prims/functionalize.h"

namespace coil::autograd {
namespace {

using prims::Emitter;
using prims::Val;

std::string Where(const Node* n) {
  return absl::StrCat(n->Describe(), n->loc().empty() ? "" : " at ", n->loc().ToString());
}

// Sums the gradients reaching each value, in the value's computing dtype.
class GradAccumulator {
 public:
  void Add(const Value* v, Val g) {
    g = prims::Cast(g, prims::ComputeDType(v->type().dtype));
    auto [it, inserted] = grads_.emplace(v, g);
    if (!inserted) it->second = it->second + g;
  }
  Val Get(const Value* v) const {
    auto it = grads_.find(v);
    return it == grads_.end() ? Val() : it->second;
  }

 private:
  absl::flat_hash_map<const Value*, Val> grads_;
};

}  // namespace

absl::StatusOr<JointGraph> BuildJointGraph(const Graph& forward_in,
                                           const std::vector<bool>& requires_grad,
                                           const std::vector<bool>& output_tangents) {
  if (requires_grad.size() != forward_in.inputs().size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("autograd: requires_grad has ", requires_grad.size(), " entries for ",
                     forward_in.inputs().size(), " graph inputs"));
  }
  for (size_t i = 0; i < requires_grad.size(); ++i) {
    if (requires_grad[i] && !IsFloating(forward_in.inputs()[i]->type().dtype)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "autograd: input ", i, " (", forward_in.inputs()[i]->type().ToString(),
          ") needs a gradient but is not floating"));
    }
  }
  if (!output_tangents.empty()) {
    if (output_tangents.size() != forward_in.outputs().size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("autograd: output_tangents has ", output_tangents.size(), " entries for ",
                       forward_in.outputs().size(), " graph outputs"));
    }
    for (size_t i = 0; i < output_tangents.size(); ++i) {
      if (output_tangents[i] && !IsFloating(forward_in.outputs()[i]->type().dtype)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "autograd: output ", i, " (", forward_in.outputs()[i]->type().ToString(),
            ") takes a tangent but is not floating"));
      }
    }
  }
  Graph forward = forward_in.Clone();
  absl::StatusOr<bool> functionalized = prims::Functionalize(forward);
  if (!functionalized.ok()) {
    return absl::Status(functionalized.status().code(),
                        absl::StrCat("autograd: functionalizing: ",
                                     functionalized.status().message()));
  }
  // Writes into inputs (prims.copy_to, e.g. a training-mode batch_norm's running statistics
  // copied into the module's buffers) stay in the forward: nothing differentiates through
  // them, and the partition keeps them in the forward graph, which writes through to the
  // caller's tensors as an inference graph does.

  JointGraph joint;
  Graph& out = joint.graph;
  out.set_name(absl::StrCat(forward.name(), "_joint"));
  out.symbols() = forward.symbols();
  out.guards() = forward.guards();
  absl::flat_hash_map<const Value*, Value*> map;
  absl::flat_hash_set<const Value*> rg;  // joint values that depend on an input needing grad
  for (size_t i = 0; i < forward.inputs().size(); ++i) {
    const Value* in = forward.inputs()[i];
    Value* v = out.AddInput(in->type(), in->name().empty() ? absl::StrCat("primal_", i)
                                                            : in->name());
    map[in] = v;
    if (requires_grad[i]) rg.insert(v);
  }
  joint.num_primals = static_cast<int>(forward.inputs().size());
  for (const Value* c : forward.constants()) {
    map[c] = out.AddConstant(c->type(), c->constant(), c->name());
  }
  Emitter e(
      out, [](absl::string_view) { return nullptr; }, [](absl::string_view, const AttrMap&) { return true; });
  struct Step {
    const Node* source;
    std::vector<Val> inputs;
    std::vector<Val> outputs;
  };
  std::vector<Step> steps;
  std::vector<std::pair<Val, Val>> writes;  // the forward's copy_to(dst, src), emitted last
  for (const Node* n : forward.nodes()) {
    if (n->op() == "prims.copy_to") {
      writes.push_back({e.Wrap(map.at(n->input(0))), e.Wrap(map.at(n->input(1)))});
      continue;
    }
    Step step{n, {}, {}};
    for (const Value* v : n->inputs()) step.inputs.push_back(e.Wrap(map.at(v)));
    e.set_loc(n->loc());
    e.set_name(n->name());
    step.outputs = e.Op(n->op(), step.inputs, n->attrs());
    if (!e.ok()) {
      return absl::Status(e.status().code(), absl::StrCat("autograd: copying ", Where(n), ": ",
                                                          e.status().message()));
    }
    // Outputs of ops without a derivative (comparisons, creation from a shape, ...) do not
    // require a gradient, as in PyTorch.
    bool any = DerivativeRegistry::Global().NotDifferentiableReason(n->op()) == nullptr;
    bool any_input = false;
    for (const Val& v : step.inputs) any_input = any_input || rg.contains(v.value());
    any = any && any_input;
    for (int i = 0; i < n->num_outputs(); ++i) {
      Value* v = step.outputs[i].value();
      if (v->name().empty() && !n->output(i)->name().empty()) v->set_name(n->output(i)->name());
      map[n->output(i)] = v;
      if (any && IsFloating(v->type().dtype)) rg.insert(v);
    }
    steps.push_back(std::move(step));
  }

  // Tangents seed the gradients of the forward outputs.
  GradAccumulator grads;
  for (size_t i = 0; i < forward.outputs().size(); ++i) {
    const TensorType& t = forward.outputs()[i]->type();
    if (!IsFloating(t.dtype) || (!output_tangents.empty() && !output_tangents[i])) {
      joint.tangent_of_output.push_back(-1);
      continue;
    }
    joint.tangent_of_output.push_back(joint.num_tangents++);
    Value* tangent = out.AddInput(t, absl::StrCat("tangent_", i));
    Value* fwd = map.at(forward.outputs()[i]);
    if (rg.contains(fwd)) grads.Add(fwd, e.Wrap(tangent));
  }
  joint.num_forward_outputs = static_cast<int>(forward.outputs().size());

  const DerivativeRegistry& rules = DerivativeRegistry::Global();
  for (auto it = steps.rbegin(); it != steps.rend(); ++it) {
    const Node* n = it->source;
    std::vector<Val> out_grads;
    bool any_grad = false;
    for (const Val& o : it->outputs) {
      out_grads.push_back(grads.Get(o.value()));
      any_grad = any_grad || out_grads.back().ok();
    }
    std::vector<bool> needs;
    bool any_needs = false;
    for (const Val& v : it->inputs) {
      needs.push_back(rg.contains(v.value()));
      any_needs = any_needs || needs.back();
    }
    if (!any_grad || !any_needs) continue;
    const DerivativeFn* rule = rules.Find(n->op());
    if (rule == nullptr) {
      return absl::UnimplementedError(
          absl::StrCat("autograd: no derivative rule for ", n->op(), " (", Where(n), ")"));
    }
    // A gradient's nodes keep the name of the forward op they differentiate.
    e.set_loc(n->loc());
    e.set_name(n->name());
    GradCall call(e, n->op(), it->inputs, n->attrs(), it->outputs, out_grads, needs);
    std::vector<Val> in_grads = (*rule)(call);
    if (e.ok() && in_grads.size() > it->inputs.size()) {
      e.Fail(absl::InternalError(absl::StrCat("the rule gives ", in_grads.size(),
                                              " gradients for ", it->inputs.size(),
                                              " inputs")));
    }
    for (size_t i = 0; e.ok() && i < in_grads.size(); ++i) {
      if (!needs[i] || !in_grads[i].ok()) continue;
      const TensorType& t = it->inputs[i].type();
      if (in_grads[i].shape() != t.shape || !IsFloating(in_grads[i].dtype())) {
        e.Fail(absl::InternalError(absl::StrCat("the rule gives ",
                                                in_grads[i].type().ToString(), " for input ", i,
                                                " of type ", t.ToString())));
        break;
      }
      grads.Add(it->inputs[i].value(), in_grads[i]);
    }
    if (!e.ok()) {
      return absl::Status(e.status().code(),
                          absl::StrCat("autograd: differentiating ", Where(n), ": ",
                                       e.status().message()));
    }
  }

  // The writes into inputs come after every read, the backward's included: a graph that is
  // functionalized again (the prims stage) must read the inputs' values from before them.
  for (const auto& [dst, src] : writes) {
    e.Op("prims.copy_to", {dst, src}, {});
    if (!e.ok()) return e.status();
  }
  std::vector<Value*> outputs;
  for (const Value* v : forward.outputs()) outputs.push_back(map.at(v));
  for (size_t i = 0; i < requires_grad.size(); ++i) {
    if (!requires_grad[i]) continue;
    Value* primal = out.inputs()[i];
    Val g = grads.Get(primal);
    if (!g.ok()) g = prims::FullLike(e.Wrap(primal), 0.0);
    g = prims::Cast(g, primal->type().dtype);
    if (!e.ok()) return e.status();
    outputs.push_back(g.value());
    joint.grad_inputs.push_back(static_cast<int>(i));
  }
  out.SetOutputs(std::move(outputs));
  out.RemoveDeadCode([](const Node& n) { return n.op() == "prims.copy_to"; });
  if (absl::Status s = Verify(out); !s.ok()) {
    return absl::InternalError(absl::StrCat("autograd: the joint graph does not verify: ",
                                            s.message()));
  }
  return joint;
}

}  // namespace coil::autograd
