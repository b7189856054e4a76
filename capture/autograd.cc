// The eager autograd tape (capture/autograd.h): grad mode, eager op nodes, the backward
// engine and the Tensor autograd methods.
#include "capture/autograd.h"

#include <deque>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "capture/dispatch.h"
#include "capture/error.h"
#include "capture/internal/saved_version.h"
#include "capture/internal/tape.h"
#include "capture/internal/tensor_impl.h"
#include "capture/tensor.h"
#include "ir/op_registry.h"

namespace coil {
namespace {

thread_local bool grad_enabled = true;

absl::Mutex derivatives_mu(absl::kConstInit);
std::shared_ptr<const EagerDerivatives>* derivatives ABSL_GUARDED_BY(derivatives_mu) = nullptr;

}  // namespace

no_grad::no_grad() : previous_(grad_enabled) { grad_enabled = false; }
no_grad::~no_grad() { grad_enabled = previous_; }

bool is_grad_enabled() { return grad_enabled; }

void zero_grad(const std::vector<Tensor>& params) {
  for (Tensor t : params) {
    if (t.defined()) t.zero_grad();
  }
}

void SetEagerDerivatives(std::shared_ptr<const EagerDerivatives> d) {
  auto* fresh = new std::shared_ptr<const EagerDerivatives>(std::move(d));
  absl::MutexLock lock(&derivatives_mu);
  delete derivatives;
  derivatives = fresh;
}

std::shared_ptr<const EagerDerivatives> GetEagerDerivatives() {
  absl::MutexLock lock(&derivatives_mu);
  return derivatives != nullptr ? *derivatives : nullptr;
}

namespace capture_internal {
namespace {

// One eager op: its gradient comes from the registered EagerDerivatives.
class EagerOpNode : public GradNode {
 public:
  EagerOpNode(std::string op, std::string location, std::vector<GradEdge> edges,
              std::vector<std::pair<DType, std::vector<int64_t>>> outputs, AttrMap attrs,
              std::vector<HostTensor> inputs)
      : GradNode(op, std::move(location), std::move(edges), std::move(outputs)),
        attrs_(std::move(attrs)),
        saved_(std::move(inputs)) {
    for (const HostTensor& t : saved_) versions_.push_back(SavedVersion::Of(t));
  }

  absl::StatusOr<std::vector<std::optional<HostTensor>>> Apply(
      const std::vector<std::optional<HostTensor>>& grads) override {
    std::shared_ptr<const EagerDerivatives> d = GetEagerDerivatives();
    if (d == nullptr) {
      return absl::FailedPreconditionError(absl::StrCat(
          name(), " (at ", location(),
          "): no derivatives of eager ops are linked (link //:coil, which registers "
          "autograd/'s rules)"));
    }
    std::vector<bool> needs;
    for (const GradEdge& e : inputs()) needs.push_back(e.wanted());
    // As PyTorch, only a saved input the gradients are computed from must be unchanged.
    const std::vector<bool> read = d->InputsRead(name(), attrs_, saved_, grads, needs);
    for (size_t i = 0; i < saved_.size(); ++i) {
      if (i < read.size() && !read[i]) continue;
      absl::Status fresh = versions_[i].Check(saved_[i], name(), static_cast<int>(i), location());
      if (!fresh.ok()) return fresh;
    }
    absl::StatusOr<std::vector<std::optional<HostTensor>>> r =
        d->Backward(name(), attrs_, saved_, grads, needs);
    if (!r.ok()) {
      return absl::Status(r.status().code(), absl::StrCat("backward of ", name(), " (at ",
                                                          location(), "): ", r.status().message()));
    }
    return r;
  }
  void Release() override {
    saved_.clear();
    released_ = true;
  }

 private:
  AttrMap attrs_;
  std::vector<HostTensor> saved_;
  std::vector<SavedVersion> versions_;  // of saved_, when recorded
};

// An op gradients must not flow through.
class NotDifferentiableNode : public GradNode {
 public:
  NotDifferentiableNode(std::string op, std::string location, std::vector<GradEdge> edges,
                        std::vector<std::pair<DType, std::vector<int64_t>>> outputs,
                        std::string reason)
      : GradNode(std::move(op), std::move(location), std::move(edges), std::move(outputs)),
        reason_(std::move(reason)) {}
  absl::StatusOr<std::vector<std::optional<HostTensor>>> Apply(
      const std::vector<std::optional<HostTensor>>&) override {
    return absl::InvalidArgumentError(absl::StrCat(
        "backward through ", name(), " (at ", location(), "), which is not differentiable: ",
        reason_, " (compute it under coil::no_grad or from a detach()ed input)"));
  }

 private:
  std::string reason_;
};

class IdentityNode : public GradNode {
 public:
  IdentityNode(GradEdge edge, std::pair<DType, std::vector<int64_t>> type)
      : GradNode("identity", "compiled", {std::move(edge)}, {std::move(type)}) {}
  absl::StatusOr<std::vector<std::optional<HostTensor>>> Apply(
      const std::vector<std::optional<HostTensor>>& grads) override {
    return grads;
  }
};

HostTensor Add(const HostTensor& a, const HostTensor& b) {
  std::vector<Tensor> out = RunEager("aten.add", {Tensor::FromHost(a), Tensor::FromHost(b)}, {},
                                     std::source_location::current());
  return out[0].impl()->data();
}

void Accumulate(std::optional<HostTensor>& slot, const HostTensor& g) {
  slot = slot.has_value() ? Add(*slot, g) : g;
}

std::vector<std::pair<DType, std::vector<int64_t>>> OutputTypes(const std::vector<Tensor>& outs) {
  std::vector<std::pair<DType, std::vector<int64_t>>> types;
  for (const Tensor& t : outs) types.push_back({t.dtype(), t.impl()->shape()});
  return types;
}

}  // namespace

bool GradEnabled() { return grad_enabled; }

bool NeedsGrad(const TensorImpl* impl) {
  return impl != nullptr && (impl->autograd().requires_grad || impl->autograd().grad_fn != nullptr);
}

GradEdge EdgeOf(const std::shared_ptr<TensorImpl>& impl) {
  GradEdge e;
  if (impl == nullptr) return e;
  const AutogradMeta& m = impl->autograd();
  if (m.grad_fn != nullptr) {
    e.node = m.grad_fn;
    e.output = m.output_nr;
  } else if (m.requires_grad) {
    e.leaf = impl;
  }
  return e;
}

std::shared_ptr<GradNode> IdentityNodeOf(const std::shared_ptr<TensorImpl>& impl) {
  return std::make_shared<IdentityNode>(EdgeOf(impl),
                                        std::make_pair(impl->dtype(), impl->shape()));
}

void SetGradFn(TensorImpl* impl, const std::shared_ptr<GradNode>& node, int output_nr) {
  if (!IsFloating(impl->dtype())) return;
  impl->autograd().grad_fn = node;
  impl->autograd().output_nr = output_nr;
}

void CheckInPlace(absl::string_view op, int mutated_input, const std::vector<Tensor>& inputs,
                  const std::string& location) {
  if (mutated_input < 0 || !grad_enabled) return;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!NeedsGrad(inputs[i].impl())) continue;
    throw Error(absl::InvalidArgumentError(absl::StrCat(
        op, ": an in-place op on ", static_cast<int>(i) == mutated_input ? "a tensor" : "with an input",
        " that requires grad is not recorded by the autograd tape (at ", location,
        "); use the out-of-place op, or run it under coil::no_grad")));
  }
}

void RecordEagerOp(absl::string_view op, const AttrMap& attrs, const std::vector<Tensor>& inputs,
                   const std::vector<Tensor>& outputs, const std::string& location) {
  if (!grad_enabled) return;
  bool any = false;
  for (const Tensor& t : inputs) any = any || NeedsGrad(t.impl());
  if (!any) return;
  bool floating_out = false;
  for (const Tensor& t : outputs) floating_out = floating_out || IsFloating(t.dtype());
  if (!floating_out) return;  // comparisons, indices: no gradient, as in PyTorch
  std::vector<GradEdge> edges;
  for (const Tensor& t : inputs) {
    edges.push_back(IsFloating(t.dtype()) ? EdgeOf(t.impl_ptr()) : GradEdge{});
  }
  std::shared_ptr<const EagerDerivatives> d = GetEagerDerivatives();
  std::string reason;
  GradFlow flow = d != nullptr ? d->Flow(op, &reason) : GradFlow::kDifferentiable;
  if (flow == GradFlow::kNoGradient) return;
  std::shared_ptr<GradNode> node;
  if (flow == GradFlow::kError) {
    node = std::make_shared<NotDifferentiableNode>(std::string(op), location, std::move(edges),
                                                   OutputTypes(outputs), reason);
  } else {
    std::vector<HostTensor> saved;
    for (const Tensor& t : inputs) saved.push_back(t.impl()->data());
    node = std::make_shared<EagerOpNode>(std::string(op), location, std::move(edges),
                                         OutputTypes(outputs), attrs, std::move(saved));
  }
  for (size_t k = 0; k < outputs.size(); ++k) SetGradFn(outputs[k].impl(), node, static_cast<int>(k));
}

namespace {

[[noreturn]] void Fail(absl::StatusCode code, absl::string_view message, const std::string& where) {
  throw Error(absl::Status(code, absl::StrCat("backward(): ", message, " (backward() called at ",
                                              where, ")")));
}

// The backward engine: every node reachable from `root` runs once, after all its consumers
// (Kahn's order over the DAG); leaf gradients are accumulated only when all succeeded.
void RunBackward(const std::shared_ptr<TensorImpl>& root, const HostTensor& seed,
                 bool retain_graph, const std::string& where) {
  const AutogradMeta& rm = root->autograd();
  if (rm.grad_fn == nullptr) {  // a leaf
    no_grad guard;
    root->autograd().grad = rm.grad != nullptr
                                ? std::make_shared<TensorImpl>(Add(rm.grad->data(), seed))
                                : std::make_shared<TensorImpl>(seed);
    return;
  }
  // Reachable nodes and how many consumers each has.
  absl::flat_hash_map<GradNode*, int> deps;
  std::vector<GradNode*> nodes{rm.grad_fn.get()};
  deps[rm.grad_fn.get()] = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    GradNode* n = nodes[i];
    if (n->released()) {
      Fail(absl::StatusCode::kFailedPrecondition,
           absl::StrCat("tried to backward through ", n->name(), " (recorded at ", n->location(),
                        ") a second time, but the first backward freed its saved values; pass "
                        "retain_graph=true to the first backward() to backward twice"),
           where);
    }
    for (const GradEdge& e : n->inputs()) {
      if (e.node == nullptr) continue;
      auto [it, inserted] = deps.emplace(e.node.get(), 0);
      ++it->second;
      if (inserted) nodes.push_back(e.node.get());
    }
  }
  absl::flat_hash_map<GradNode*, std::vector<std::optional<HostTensor>>> buffers;
  absl::flat_hash_map<TensorImpl*, std::pair<std::shared_ptr<TensorImpl>, std::optional<HostTensor>>>
      leaf_grads;
  buffers[rm.grad_fn.get()].resize(rm.grad_fn->outputs().size());
  buffers[rm.grad_fn.get()][rm.output_nr] = seed;
  std::deque<GradNode*> ready{rm.grad_fn.get()};
  {
    no_grad guard;
    while (!ready.empty()) {
      GradNode* n = ready.front();
      ready.pop_front();
      std::vector<std::optional<HostTensor>> grads = std::move(buffers[n]);
      grads.resize(n->outputs().size());
      buffers.erase(n);
      bool any = false;
      for (const auto& g : grads) any = any || g.has_value();
      std::vector<std::optional<HostTensor>> in(n->inputs().size());
      if (any) {
        absl::StatusOr<std::vector<std::optional<HostTensor>>> r = n->Apply(grads);
        if (!r.ok()) Fail(r.status().code(), r.status().message(), where);
        in = *std::move(r);
        if (in.size() != n->inputs().size()) {
          Fail(absl::StatusCode::kInternal,
               absl::StrCat(n->name(), " returned ", in.size(), " gradients for ",
                            n->inputs().size(), " inputs"),
               where);
        }
      }
      for (size_t i = 0; i < in.size(); ++i) {
        const GradEdge& e = n->inputs()[i];
        if (e.node != nullptr) {
          std::vector<std::optional<HostTensor>>& b = buffers[e.node.get()];
          b.resize(e.node->outputs().size());
          if (in[i].has_value()) Accumulate(b[e.output], *in[i]);
          if (--deps[e.node.get()] == 0) ready.push_back(e.node.get());
        } else if (e.leaf != nullptr && in[i].has_value()) {
          auto& slot = leaf_grads[e.leaf.get()];
          slot.first = e.leaf;
          Accumulate(slot.second, *in[i]);
        }
      }
    }
    // Everything succeeded: accumulate into the leaves, free the graph.
    for (auto& [raw, entry] : leaf_grads) {
      AutogradMeta& m = entry.first->autograd();
      HostTensor g = *entry.second;
      m.grad = m.grad != nullptr ? std::make_shared<TensorImpl>(Add(m.grad->data(), g))
                                 : std::make_shared<TensorImpl>(g);
    }
  }
  if (!retain_graph) {
    for (GradNode* n : nodes) n->Release();
  }
}

}  // namespace
}  // namespace capture_internal

// ---- Tensor's autograd methods ----

using capture_internal::TensorImpl;

bool Tensor::requires_grad() const {
  return defined() && capture_internal::NeedsGrad(impl_.get());
}

Tensor& Tensor::set_requires_grad(bool requires_grad, std::source_location loc) {
  if (!defined()) {
    throw Error(absl::FailedPreconditionError("set_requires_grad() of an undefined tensor"));
  }
  if (impl_->autograd().grad_fn != nullptr) {
    throw Error(absl::InvalidArgumentError(absl::StrCat(
        "set_requires_grad(): only leaf tensors can be marked; this one was computed by ",
        impl_->autograd().grad_fn->name(), " (use detach() first) (at ",
        capture_internal::Where(loc), ")")));
  }
  if (requires_grad && !IsFloating(dtype())) {
    throw Error(absl::InvalidArgumentError(
        absl::StrCat("set_requires_grad(): only floating tensors can require grad; this one is ",
                     TypeString(), " (at ", capture_internal::Where(loc), ")")));
  }
  impl_->autograd().requires_grad = requires_grad;
  return *this;
}

bool Tensor::is_leaf() const { return !defined() || impl_->autograd().grad_fn == nullptr; }

Tensor Tensor::grad() const {
  if (!defined() || impl_->autograd().grad == nullptr) return Tensor();
  return Tensor(impl_->autograd().grad);
}

void Tensor::zero_grad() {
  if (defined()) impl_->autograd().grad = nullptr;
}

Tensor Tensor::detach() const {
  if (!defined()) return Tensor();
  if (impl_->is_lazy()) {
    throw Error(absl::UnimplementedError("detach() inside coil::compile is not supported"));
  }
  return Tensor(std::make_shared<TensorImpl>(impl_->data()));
}

void Tensor::backward(const Tensor& gradient, bool retain_graph, std::source_location loc) const {
  std::string where = capture_internal::Where(loc);
  if (!defined()) {
    capture_internal::Fail(absl::StatusCode::kFailedPrecondition, "of an undefined tensor", where);
  }
  if (impl_->is_lazy()) {
    capture_internal::Fail(absl::StatusCode::kUnimplemented,
                           "inside a function being compiled (call it on the compiled "
                           "function's result)",
                           where);
  }
  if (!capture_internal::NeedsGrad(impl_.get())) {
    capture_internal::Fail(
        absl::StatusCode::kFailedPrecondition,
        absl::StrCat("the tensor (", TypeString(),
                     ") does not require grad and has no grad_fn: no input it was computed from "
                     "requires grad, or it was computed under coil::no_grad"),
        where);
  }
  HostTensor seed;
  const HostTensor& data = impl_->data();
  if (!gradient.defined()) {
    if (data.numel() != 1) {
      capture_internal::Fail(
          absl::StatusCode::kInvalidArgument,
          absl::StrCat("a gradient can be implied only for a scalar (one-element) output; this "
                       "tensor is ",
                       TypeString(), ": pass backward(gradient) with its shape"),
          where);
    }
    seed = HostTensor::FromDoubles(data.dtype(), data.shape(), {1.0});
  } else {
    if (gradient.is_lazy() || gradient.impl()->data().shape() != data.shape() ||
        gradient.dtype() != data.dtype()) {
      capture_internal::Fail(absl::StatusCode::kInvalidArgument,
                             absl::StrCat("the gradient is ", gradient.TypeString(),
                                          " but the tensor is ", TypeString()),
                             where);
    }
    seed = gradient.impl()->data();
  }
  capture_internal::RunBackward(impl_, seed, retain_graph, where);
}

}  // namespace coil
