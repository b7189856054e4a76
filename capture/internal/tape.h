// The eager autograd tape's nodes and per-tensor metadata. Internal to capture/.
//
// Like PyTorch's autograd graph, the tape is a DAG of GradNodes reached from tensors: a tensor
// that an op computed from inputs that require grad holds (grad_fn, output_nr), and each node
// holds one Edge per forward input: the node that produced that input, or the leaf tensor
// whose .grad() receives the gradient. An eager op is one node (EagerOpNode, capture/autograd.cc);
// a compiled segment of coil::compile is one node whose Apply runs its compiled backward graph
// (capture/internal/lazy_trace.cc). The engine (capture/autograd.cc) walks the DAG from the
// tensor backward() was called on.
#ifndef COIL_CAPTURE_INTERNAL_TAPE_H_
#define COIL_CAPTURE_INTERNAL_TAPE_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ir/attribute.h"
#include "ir/dtype.h"
#include "runtime/host_tensor.h"

namespace coil {
class Tensor;
}

namespace coil::capture_internal {

class TensorImpl;
class GradNode;

// Where the gradient of one forward input goes.
struct GradEdge {
  std::shared_ptr<GradNode> node;    // the input's producer (with `output`), or
  int output = 0;
  std::shared_ptr<TensorImpl> leaf;  // a leaf that requires grad; neither: no gradient
  bool wanted() const { return node != nullptr || leaf != nullptr; }
};

class GradNode {
 public:
  // `name`: "aten.mul" or "compiled fn segment 0"; `location`: "file.cc:12".
  GradNode(std::string name, std::string location, std::vector<GradEdge> inputs,
           std::vector<std::pair<DType, std::vector<int64_t>>> outputs)
      : name_(std::move(name)),
        location_(std::move(location)),
        inputs_(std::move(inputs)),
        outputs_(std::move(outputs)) {}
  virtual ~GradNode() = default;

  // `grads`: one per forward output (nullopt: no gradient reached it). Returns one gradient
  // per forward input (nullopt where the edge wants none), each of that input's shape. Errors
  // (a non-differentiable op, a rule's limit, a run failure) name the node.
  virtual absl::StatusOr<std::vector<std::optional<HostTensor>>> Apply(
      const std::vector<std::optional<HostTensor>>& grads) = 0;
  // Frees what the backward needed (saved values); a later Apply is an error.
  virtual void Release() { released_ = true; }

  const std::string& name() const { return name_; }
  const std::string& location() const { return location_; }
  const std::vector<GradEdge>& inputs() const { return inputs_; }
  const std::vector<std::pair<DType, std::vector<int64_t>>>& outputs() const { return outputs_; }
  bool released() const { return released_; }

 protected:
  bool released_ = false;

 private:
  std::string name_;
  std::string location_;
  std::vector<GradEdge> inputs_;
  std::vector<std::pair<DType, std::vector<int64_t>>> outputs_;
};

// Autograd state of one TensorImpl.
struct AutogradMeta {
  bool requires_grad = false;          // a leaf the user marked (set_requires_grad)
  std::shared_ptr<TensorImpl> grad;    // its accumulated gradient (leaves only)
  std::shared_ptr<GradNode> grad_fn;   // the node that computed it (non-leaves)
  int output_nr = 0;
};

// Whether gradients are recorded on this thread (coil::no_grad turns it off).
bool GradEnabled();

// Whether `impl` takes part in autograd (a leaf requiring grad, or computed from one).
bool NeedsGrad(const TensorImpl* impl);
// The edge that sends a gradient to `impl` (empty when it does not need one).
GradEdge EdgeOf(const std::shared_ptr<TensorImpl>& impl);
// Makes `impl` output `output_nr` of `node` (floating dtypes only; others are left alone).
void SetGradFn(TensorImpl* impl, const std::shared_ptr<GradNode>& node, int output_nr);

// A node that passes its gradient to `impl` unchanged (a segment output that is one of its
// inputs: the tensor the trace made for it must still reach the input's gradient).
std::shared_ptr<GradNode> IdentityNodeOf(const std::shared_ptr<TensorImpl>& impl);

// Records an eager op on the tape when grad mode is on and an input needs a gradient: its
// floating outputs get the op's node. In-place ops on such inputs are an error (thrown before
// the op runs: CheckInPlace).
void RecordEagerOp(absl::string_view op, const AttrMap& attrs, const std::vector<Tensor>& inputs,
                   const std::vector<Tensor>& outputs, const std::string& location);
void CheckInPlace(absl::string_view op, int mutated_input, const std::vector<Tensor>& inputs,
                  const std::string& location);

}  // namespace coil::capture_internal

#endif  // COIL_CAPTURE_INTERNAL_TAPE_H_
