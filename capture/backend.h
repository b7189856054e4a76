// Backends: what coil::compile hands a captured graph to.
//
// A Backend turns a graph (aten ops, possibly with in-place ops on its inputs) into a callable;
// capture/ never knows how. ReferenceBackend runs the reference interpreter (always available,
// the oracle); the compiling backends (prims -> inductor -> codegen -> runtime) are wired at the
// root (see //:coil) so capture/ does not depend on them.
#ifndef COIL_CAPTURE_BACKEND_H_
#define COIL_CAPTURE_BACKEND_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "ir/graph.h"
#include "runtime/host_tensor.h"

namespace coil {

class CompiledGraph {
 public:
  virtual ~CompiledGraph() = default;
  // Runs with concrete inputs (shapes bind the graph's symbols). Inputs the graph mutates are
  // written through (HostTensors share storage with the caller's tensors).
  virtual absl::StatusOr<std::vector<HostTensor>> Run(absl::Span<const HostTensor> inputs) = 0;
};

// A graph compiled for training (Backend::CompileTraining): a forward that also returns the
// values its backward needs, and that backward.
class CompiledTrainingGraph {
 public:
  virtual ~CompiledTrainingGraph() = default;
  // The graph's outputs, then the saved values (opaque to the caller).
  virtual absl::StatusOr<std::vector<HostTensor>> Forward(absl::Span<const HostTensor> inputs) = 0;
  // `saved`: what Forward returned after the outputs; `grads`: one per graph output, of its
  // type (zeros where no gradient reached it; ignored for non-floating outputs). Returns one
  // gradient per input that requires_grad selected, in input order.
  virtual absl::StatusOr<std::vector<HostTensor>> Backward(std::vector<HostTensor> saved,
                                                           const std::vector<HostTensor>& grads) = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  virtual absl::StatusOr<std::unique_ptr<CompiledGraph>> Compile(const Graph& graph) = 0;
  // Compiles `graph` with gradients for the inputs `requires_grad` selects (one entry per
  // input): AOT autograd's joint graph and partition. Backends without autograd (the
  // reference interpreter in //capture) return Unimplemented.
  virtual absl::StatusOr<std::unique_ptr<CompiledTrainingGraph>> CompileTraining(
      const Graph& graph, const std::vector<bool>& requires_grad) {
    (void)graph;
    (void)requires_grad;
    return absl::UnimplementedError(
        "this backend cannot compile training graphs (link //:coil for the compiled CPU "
        "backend, whose CompileTraining runs autograd/)");
  }
};

// The reference interpreter as a backend.
std::shared_ptr<Backend> ReferenceBackend();

// The backend coil::compile uses when CompileOptions.backend is null: the last factory passed
// to SetDefaultBackend, else ReferenceBackend(). //:coil registers the compiled CPU backend at
// startup, so programs linking the umbrella target compile to machine code by default, while
// programs linking //capture alone (no LLVM) keep the reference interpreter. Thread-safe.
std::shared_ptr<Backend> DefaultBackend();
void SetDefaultBackend(std::function<std::shared_ptr<Backend>()> factory);

}  // namespace coil

#endif  // COIL_CAPTURE_BACKEND_H_
