// Training from C++: the eager autograd tape's public API.
//
//   Tensor w = Tensor::Randn({4, 3}, /*seed=*/0);
//   w.set_requires_grad(true);
//   Tensor loss = (x.matmul(w) - y).pow(2).mean();   // eager ops are recorded on the tape
//   loss.backward();                                 // w.grad() now holds dloss/dw
//   { coil::no_grad guard; w.sub_(w.grad() * 0.1); } // updates are not recorded
//   w.zero_grad();
//
// Eager ops whose inputs require grad become tape nodes; their gradients come from autograd/'s
// derivative rules through the EagerDerivatives that the root target //:coil registers (a
// program linking //capture alone has none, and backward() through an eager op says so). A
// coil::compile'd function whose inputs (arguments or tensors it reads, such as parameters)
// require grad enters the tape as one node per compiled segment, whose backward is the
// segment's compiled backward graph (Backend::CompileTraining: joint graph + min-cut partition
// through the compile driver); graph breaks chain several such nodes.
//
// Errors throw coil::Error naming the op and source location: backward() of a non-scalar
// without a gradient, of a tensor that does not require grad, a second time through a graph
// whose saved values the first backward freed (retain_graph=false), through an op that is not
// differentiable, an in-place op on a tensor that requires grad. A failed backward changes no
// .grad() and frees nothing.
#ifndef COIL_CAPTURE_AUTOGRAD_H_
#define COIL_CAPTURE_AUTOGRAD_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ir/attribute.h"
#include "runtime/host_tensor.h"

namespace coil {

class Tensor;

// Turns gradient recording off for its scope on this thread (nests; restores on exit).
class no_grad {
 public:
  no_grad();
  ~no_grad();
  no_grad(const no_grad&) = delete;
  no_grad& operator=(const no_grad&) = delete;

 private:
  bool previous_;
};

// Whether gradients are recorded on this thread now.
bool is_grad_enabled();

// Sets every tensor's .grad() to undefined (as torch's zero_grad(set_to_none=True)).
void zero_grad(const std::vector<Tensor>& params);

// How an eager op's gradient flows, as EagerDerivatives reports it.
enum class GradFlow {
  kDifferentiable,  // a derivative rule exists
  kNoGradient,      // the outputs do not depend on input values (zeros_like): no gradient
  kError,           // not differentiable: backward through it is an error
};

// The derivatives of eager ops: implemented at the root with autograd/'s rules (capture/ does
// not depend on autograd/).
class EagerDerivatives {
 public:
  virtual ~EagerDerivatives() = default;
  // How gradients flow through `op`; for kError, `reason` says why.
  virtual GradFlow Flow(absl::string_view op, std::string* reason) const = 0;
  // Input gradients of one op: `grads` has one entry per output (nullopt: none reached it);
  // returns one per input (nullopt where `needs_grad` is false).
  virtual absl::StatusOr<std::vector<std::optional<HostTensor>>> Backward(
      absl::string_view op, const AttrMap& attrs, const std::vector<HostTensor>& inputs,
      const std::vector<std::optional<HostTensor>>& grads,
      const std::vector<bool>& needs_grad) const = 0;
  // Which inputs that Backward call's gradients are computed from (a saved input written in
  // place since the forward matters only then: x + y's gradients read neither). Default: all.
  virtual std::vector<bool> InputsRead(absl::string_view op, const AttrMap& attrs,
                                       const std::vector<HostTensor>& inputs,
                                       const std::vector<std::optional<HostTensor>>& grads,
                                       const std::vector<bool>& needs_grad) const {
    return std::vector<bool>(inputs.size(), true);
  }
};

// The process-wide eager derivatives (nullptr until one is set). Thread-safe.
void SetEagerDerivatives(std::shared_ptr<const EagerDerivatives> derivatives);
std::shared_ptr<const EagerDerivatives> GetEagerDerivatives();

}  // namespace coil

#endif  // COIL_CAPTURE_AUTOGRAD_H_
