// The joint forward+backward graph: the forward graph followed by the gradients of the inputs
// that need them, built by the derivative rules (derivative_registry.h).
//
//   absl::StatusOr<JointGraph> joint = BuildJointGraph(forward, {true, false});
//   // joint->graph: inputs  = forward inputs (primals), then one tangent per floating output
//   //                         (or per output that output_tangents selects)
//   //               outputs = forward outputs, then one gradient per input that needs one
//
// The forward graph is functionalized first (prims::Functionalize); its writes into inputs
// (prims.copy_to: a training-mode batch_norm's running statistics) stay forward nodes that no
// gradient flows through (the partition keeps them in the forward graph). The joint graph holds the forward's aten ops, the rules' aten ops
// and prims; prims::Decompose lowers it like any other graph. Gradients of f16/bf16 values are
// computed and summed in f32 and converted to the input's dtype once, at the output.
#ifndef COIL_AUTOGRAD_JOINT_GRAPH_H_
#define COIL_AUTOGRAD_JOINT_GRAPH_H_

#include <vector>

#include "absl/status/statusor.h"
#include "ir/graph.h"

namespace coil::autograd {

struct JointGraph {
  Graph graph;
  int num_primals = 0;
  // Forward output i's tangent is graph input num_primals + tangent_of_output[i], or -1 for
  // outputs that take none (integer and bool outputs, and those output_tangents leaves out).
  std::vector<int> tangent_of_output;
  int num_tangents = 0;
  int num_forward_outputs = 0;
  // The primal index of each gradient output, in order (graph output num_forward_outputs + k
  // is the gradient of primal grad_inputs[k]).
  std::vector<int> grad_inputs;
};

// `requires_grad[i]`: whether forward input i needs a gradient (it must be floating).
// `output_tangents[i]`: whether forward output i takes a tangent (it must be floating); empty:
// every floating output does. Outputs without one (a training-mode batch_norm's running
// statistics, metrics) send no gradient back. Errors: a size mismatch or a non-floating input
// or output asked for a gradient or tangent (InvalidArgument), an op on the gradient's path
// without a rule (Unimplemented naming the op and node), a rule's limits. Outputs of ops
// marked not differentiable (comparisons, creation from a shape) never carry a gradient, as
// in PyTorch.
absl::StatusOr<JointGraph> BuildJointGraph(const Graph& forward,
                                           const std::vector<bool>& requires_grad,
                                           const std::vector<bool>& output_tangents = {});

}  // namespace coil::autograd

#endif  // COIL_AUTOGRAD_JOINT_GRAPH_H_
