// The derivative table: one rule per differentiable aten op, found by name, plus the ops that
// are not differentiable, each with the reason.
//
// A rule is written in the language of prims/emitter.h and reads like the formula of
// PyTorch's derivatives.yaml (the reference for formulas and for which inputs are
// differentiable):
//
//   // mul(self, other): self <- grad * other, other <- grad * self
//   r.Add("aten.mul", [](const GradCall& c) -> std::vector<Val> {
//     return {c.SumTo(0, c.grad() * c.in(1)), c.SumTo(1, c.grad() * c.in(0))};
//   });
//
// A rule returns one Val per forward input: the gradient of the loss with respect to that
// input, or an empty Val when the input gets none (an integer index, an input nobody asked
// for). Gradients flowing in (`c.grad(i)`) are in the computing dtype of the output (f32 for
// f16/bf16: low-precision gradients accumulate in f32); returned ones may be in any floating
// dtype: the joint graph builder converts them to the input's computing dtype and sums them.
// Rules emit prims through the Val helpers and aten ops through `c.e().Op(...)`; the joint
// graph keeps both, and prims::Decompose lowers it afterwards like any other graph.
#ifndef COIL_AUTOGRAD_DERIVATIVE_REGISTRY_H_
#define COIL_AUTOGRAD_DERIVATIVE_REGISTRY_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "prims/emitter.h"

namespace coil::autograd {

using prims::Val;

// What a rule sees: the forward op's inputs, attributes and outputs (through OpCall) plus the
// gradients of its outputs and which inputs need a gradient.
class GradCall : public prims::OpCall {
 public:
  GradCall(prims::Emitter& e, std::string op, std::vector<Val> inputs, const AttrMap& attrs,
           std::vector<Val> outputs, std::vector<Val> grads, std::vector<bool> needs_grad);

  // Forward output i.
  Val out(int i = 0) const;
  // The gradient of output i, in its computing dtype; zeros when no gradient reached it
  // (only multi-output ops see that; a rule runs only when some output has a gradient).
  Val grad(int i = 0) const;
  bool has_grad(int i) const;
  // Whether input i needs a gradient (rules may skip work for the others).
  bool needs_grad(int i) const;
  // `g` reduced (sum over broadcast dims) to input i's shape: the gradient of an operand that
  // an op broadcast.
  Val SumTo(int i, Val g) const;

 private:
  std::vector<Val> outputs_;
  std::vector<Val> grads_;
  std::vector<bool> needs_grad_;
};

// One derivative rule: the gradient of each input (empty Val: none).
using DerivativeFn = std::function<std::vector<Val>(const GradCall& call)>;

class DerivativeRegistry {
 public:
  // Every rule coil defines, registered on first use.
  static const DerivativeRegistry& Global();

  // CHECK-fails on a duplicate (a rule and a not-differentiable mark count alike).
  void Add(std::string op, DerivativeFn fn);
  // Marks `op` as having no derivative, with the reason (shown by the coverage test and in
  // the error when a gradient would have to flow through it).
  void AddNotDifferentiable(std::string op, std::string reason);

  // The rule of `op`, or nullptr.
  const DerivativeFn* Find(absl::string_view op) const;
  // The reason `op` is not differentiable, or nullptr when it is (or is unknown).
  const std::string* NotDifferentiableReason(absl::string_view op) const;
  // Ops with a rule, sorted.
  std::vector<std::string> Ops() const;

 private:
  absl::flat_hash_map<std::string, DerivativeFn> rules_;
  absl::flat_hash_map<std::string, std::string> not_differentiable_;
};

// Sums `g` over the dims that numpy broadcasting added or expanded from 1 to reach g's shape
// from `shape` (sum-to-size). Symbolic dims are compared structurally; sizes 1 are literal.
Val SumToShape(Val g, const SymList& shape);

}  // namespace coil::autograd

#endif  // COIL_AUTOGRAD_DERIVATIVE_REGISTRY_H_
