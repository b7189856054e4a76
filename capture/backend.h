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

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  virtual absl::StatusOr<std::unique_ptr<CompiledGraph>> Compile(const Graph& graph) = 0;
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
