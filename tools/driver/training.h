// Compiling a training step: the autograd stage between capture and prims. The forward graph
// becomes a joint forward+backward graph (autograd/joint_graph.h), decomposed into prims and
// partitioned (autograd/partition.h, min-cut by default); the forward and backward graphs are
// then each compiled by CompileGraph (prims -> inductor -> codegen -> load) for the backend.
//
//   driver::TrainingOptions t;
//   t.requires_grad = {false, true, true};        // one per graph input
//   absl::StatusOr<driver::TrainingCompileResult> r =
//       driver::CompileTraining(std::move(graph), t, options);
//   // forward:  primals -> forward outputs, then saved values
//   // backward: saved values, then tangents (one per floating forward output, or per output
//   //           that t.output_tangents selects) -> gradients
//   absl::StatusOr<driver::TrainingStepResult> step = r->Run(primals, tangents);
#ifndef COIL_TOOLS_DRIVER_TRAINING_H_
#define COIL_TOOLS_DRIVER_TRAINING_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "autograd/optimizer.h"
#include "autograd/partition.h"
#include "ir/graph.h"
#include "tools/driver/driver.h"

namespace coil::driver {

struct TrainingOptions {
  // One entry per graph input: whether its gradient is wanted (floating inputs only).
  std::vector<bool> requires_grad;
  // One entry per graph output: whether it takes a tangent (floating outputs only); empty:
  // every floating output does. A loss takes one; running statistics and metrics need not.
  std::vector<bool> output_tangents;
  autograd::PartitionOptions partition;
};

struct TrainingStepResult {
  std::vector<HostTensor> outputs;    // the forward outputs
  std::vector<HostTensor> gradients;  // one per input that requires a gradient, in input order
};

struct TrainingCompileResult {
  CompileResult forward;
  CompileResult backward;
  int num_forward_outputs = 0;
  std::vector<autograd::SavedValue> saved;
  int64_t saved_bytes = 0;
  int64_t save_everything_bytes = 0;  // what kSaveEverything would save, for comparison
  int recomputed_nodes = 0;
  double autograd_seconds = 0;  // joint graph + decomposition + partition
  // The autograd stage's report artifact: saved value ids (in the joint graph) and bytes
  // always; the joint, forward and backward graphs when DriverOptions::record_artifacts is on
  // (then it is also forward.report's "autograd" stage artifact).
  proto::AutogradResult autograd;

  // Runs the forward, then the backward with `tangents` (one per forward output that takes
  // one: TrainingOptions::output_tangents).
  // Requires both executables (a compile that went to kLoad).
  absl::StatusOr<TrainingStepResult> Run(const std::vector<HostTensor>& primals,
                                         const std::vector<HostTensor>& tangents) const;
};

// Errors name the stage: "autograd: ..." (joint graph or partition), then CompileGraph's
// ("prims: ...", ...) prefixed with "forward " or "backward ".
absl::StatusOr<TrainingCompileResult> CompileTraining(Graph graph, const TrainingOptions& training,
                                                      const DriverOptions& options);

// An optimizer step (autograd/optimizer.h: SGD, Adam, AdamW) compiled once. It owns the
// optimizer state, zero-initialized as torch initializes it; each Step updates the caller's
// parameter tensors and the state in place (the graph's prims.copy_to write-backs).
//
//   absl::StatusOr<CompiledOptimizer> opt =
//       CompileOptimizer(*autograd::SgdGraph(types, {.lr = 0.1, .momentum = 0.9}), options);
//   opt->Step(params, step->gradients);   // params: HostTensors sharing the caller's storage
struct CompiledOptimizer {
  CompileResult compiled;
  int num_params = 0;
  std::vector<std::string> state_names;  // per parameter
  // State tensors, parameter-major (state_names.size() per parameter), then Adam's step count.
  std::vector<HostTensor> state;

  // Errors: a count, shape or dtype mismatch (InvalidArgument naming the tensor), a run error.
  absl::Status Step(const std::vector<HostTensor>& params,
                    const std::vector<HostTensor>& grads);
};

absl::StatusOr<CompiledOptimizer> CompileOptimizer(autograd::OptimizerGraph graph,
                                                   const DriverOptions& options);

}  // namespace coil::driver

#endif  // COIL_TOOLS_DRIVER_TRAINING_H_
