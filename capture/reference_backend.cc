// ReferenceBackend: the reference interpreter as a Backend (capture/backend.h).
#include <memory>
#include <string>
#include <vector>

#include "capture/backend.h"
#include "runtime/interpreter.h"

namespace coil {
namespace {

class InterpretedGraph : public CompiledGraph {
 public:
  explicit InterpretedGraph(Graph graph) : graph_(std::move(graph)) {}
  absl::StatusOr<std::vector<HostTensor>> Run(absl::Span<const HostTensor> inputs) override {
    return Interpret(graph_, inputs);
  }

 private:
  Graph graph_;
};

class Reference : public Backend {
 public:
  std::string name() const override { return "reference"; }
  absl::StatusOr<std::unique_ptr<CompiledGraph>> Compile(const Graph& graph) override {
    return std::make_unique<InterpretedGraph>(graph.Clone());
  }
};

}  // namespace

std::shared_ptr<Backend> ReferenceBackend() {
  static std::shared_ptr<Backend> backend = std::make_shared<Reference>();
  return backend;
}

}  // namespace coil
