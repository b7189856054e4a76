// `coil compile --train`: a training step compiled stage by stage, as the inspector shows it.
// The model's weights become inputs that require gradients, autograd builds the joint graph
// and partitions it (driver::CompileTraining), and the forward and backward graphs are each
// compiled for the backend.
//
//   absl::StatusOr<TrainableGraph> t = LiftWeights(graph);   // weights -> inputs
//   proto::CompileReport report;
//   absl::StatusOr<driver::TrainingCompileResult> r =
//       CompileForTraining(importer, options, &report);
//   // report: import, autograd (joint/forward/backward, saved values), the forward's stages
//   // (capture, prims, inductor, codegen_*, load), then the backward's as backward.<stage>
#ifndef COIL_TOOLS_COIL_COMPILE_TRAIN_H_
#define COIL_TOOLS_COIL_COMPILE_TRAIN_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/graph.h"
#include "ir/proto/report.pb.h"
#include "tools/driver/driver.h"
#include "tools/driver/training.h"

namespace coil::cli {

// A constant is a weight when it is floating and holds at least this many bytes (as
// `coil inspect --export` counts weights, tools/coil/inspect_weights.h); smaller ones
// (scalars, epsilons) stay constants.
inline constexpr int64_t kWeightBytes = 64;

struct TrainableGraph {
  Graph graph;                      // the weights are inputs after the graph's own inputs
  std::vector<bool> requires_grad;  // per input: floating inputs and the weights
  int weights = 0;                  // constants made inputs
  int64_t weight_bytes = 0;
};

// Errors: InvalidArgument when nothing floating is left to differentiate ("--train: ...").
absl::StatusOr<TrainableGraph> LiftWeights(const Graph& graph);

// Imports (timed, stage "import"), lifts the weights and runs driver::CompileTraining with
// `options` (their on_stage sees the backward's stages as "backward.<stage>"). `report` gets
// the stages in the order above; timings and pass records of the backward compile have
// "backward." before their stage and pipeline names. Errors name the stage ("import: ",
// "autograd: ", "forward prims: ", ...); `report` keeps what finished.
absl::StatusOr<driver::TrainingCompileResult> CompileForTraining(
    const driver::Importer& import, driver::DriverOptions options, proto::CompileReport* report);

}  // namespace coil::cli

#endif  // COIL_TOOLS_COIL_COMPILE_TRAIN_H_
