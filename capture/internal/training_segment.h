// A compiled graph on the autograd tape: coil::compile runs a segment whose inputs need
// gradients through Backend::CompileTraining and records it as one GradNode whose backward is
// the compiled backward graph. Internal to capture/ (used by LazyTrace::RunSegment and the
// cached-call path of FunctionCache).
#ifndef COIL_CAPTURE_INTERNAL_TRAINING_SEGMENT_H_
#define COIL_CAPTURE_INTERNAL_TRAINING_SEGMENT_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "capture/backend.h"
#include "capture/internal/tape.h"
#include "capture/internal/tensor_impl.h"
#include "ir/graph.h"

namespace coil::capture_internal {

// Training compiles of one compiled function, by graph key + which inputs need gradients.
using TrainingCache = absl::flat_hash_map<std::string, std::shared_ptr<CompiledTrainingGraph>>;

// With grad mode on: which inputs need a gradient (floating ones on the tape); empty when
// none does (then the graph runs as inference).
std::vector<bool> InputsNeedingGrad(const std::vector<std::shared_ptr<TensorImpl>>& inputs);

struct TrainingRun {
  std::vector<HostTensor> outputs;  // the graph's outputs
  std::shared_ptr<GradNode> node;   // graph output i is the node's output i
  // Whether graph output i is on the tape (requires grad): a floating value computed from an
  // input whose gradient is needed. Others are plain tensors, as in eager.
  std::vector<bool> requires_grad;
  bool compiled = false;            // whether this run compiled (a cache miss)
};

// Compiles `graph` for training (cached in `cache` under `key` and `needs`), runs its forward
// on `data` and makes the tape node (`name` and `location` name it in errors). Throws
// coil::Error naming the backend and the graph on failure.
TrainingRun RunForTraining(Backend& backend, const Graph& graph, const std::string& key,
                           TrainingCache& cache,
                           const std::vector<std::shared_ptr<TensorImpl>>& inputs,
                           const std::vector<HostTensor>& data, const std::vector<bool>& needs,
                           const std::string& name);

}  // namespace coil::capture_internal

#endif  // COIL_CAPTURE_INTERNAL_TRAINING_SEGMENT_H_
