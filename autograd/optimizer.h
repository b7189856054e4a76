// Optimizer steps as graphs: torch.optim's update of every parameter (SGD with momentum and
// weight decay, Adam, AdamW) written as one graph of in-place aten ops on its inputs, the
// parameters and the optimizer state. prims::Functionalize turns the mutations into pure ops
// and `prims.copy_to` write-backs, so the compiled graph updates the caller's tensors in place
// (the CPU backend and the Schedule interpreter store into input buffers). One compile serves
// every step: hyperparameters are attributes, Adam's step count is a state input.
//
//   absl::StatusOr<OptimizerGraph> opt = AdamGraph(param_types, {.lr = 1e-3, .weight_decay =
//                                                   0.01, .decoupled_weight_decay = true});
//   // opt->graph inputs: params (P), grads (P), state (per param, in order), then `step`;
//   // run with zero-initialized state tensors and step = 0, it gives torch's numbers.
#ifndef COIL_AUTOGRAD_OPTIMIZER_H_
#define COIL_AUTOGRAD_OPTIMIZER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/graph.h"

namespace coil::autograd {

// torch.optim.SGD(lr, momentum, weight_decay, nesterov) with dampening 0:
//   d = g + wd p;  buf = momentum buf + d;  d = nesterov ? d + momentum buf : buf;  p -= lr d
// (with momentum 0 there is no state and d is used directly). A zero buffer gives torch's first
// step (buf = d).
struct SgdOptions {
  double lr = 0.01;
  double momentum = 0;
  double weight_decay = 0;
  bool nesterov = false;
};

// torch.optim.Adam / AdamW (amsgrad=False, maximize=False), torch 1.13's single-tensor step:
//   step += 1;  AdamW: p *= 1 - lr wd;  Adam: g += wd p
//   m = beta1 m + (1 - beta1) g;  v = beta2 v + (1 - beta2) g^2
//   p -= lr / (1 - beta1^step) * m / (sqrt(v) / sqrt(1 - beta2^step) + eps)
// The bias corrections are computed in f64 from the f32 step count, as torch does in Python.
struct AdamOptions {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0;
  bool decoupled_weight_decay = false;  // true: AdamW
};

struct OptimizerGraph {
  // Inputs: params (num_params), grads (num_params, the params' types), the state tensors
  // (state_names.size() per param, param-major, each of the param's type), then for Adam one
  // f32[] step count shared by all params (torch keeps one per param; they are always equal).
  // Every param, state tensor and the step are written in place; the graph has no outputs.
  Graph graph;
  int num_params = 0;
  std::vector<std::string> state_names;  // per param, e.g. {"momentum_buffer"}
  bool has_step = false;
};

// Errors (InvalidArgument): no params, a non-floating param, hyperparameters out of range
// (lr < 0, momentum < 0, nesterov without momentum, betas outside [0, 1), eps < 0, wd < 0).
absl::StatusOr<OptimizerGraph> SgdGraph(const std::vector<TensorType>& params,
                                        const SgdOptions& options);
absl::StatusOr<OptimizerGraph> AdamGraph(const std::vector<TensorType>& params,
                                         const AdamOptions& options);

}  // namespace coil::autograd

#endif  // COIL_AUTOGRAD_OPTIMIZER_H_
