// ReferenceBackend: the reference interpreter as a Backend (capture/backend.h), and the
// registry of the default backend.
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
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

namespace {
absl::Mutex default_backend_mu(absl::kConstInit);
std::function<std::shared_ptr<Backend>()>* default_backend_factory
    ABSL_GUARDED_BY(default_backend_mu) = nullptr;
}  // namespace

std::shared_ptr<Backend> DefaultBackend() {
  std::function<std::shared_ptr<Backend>()> factory;
  {
    absl::MutexLock lock(&default_backend_mu);
    if (default_backend_factory != nullptr) factory = *default_backend_factory;
  }
  return factory ? factory() : ReferenceBackend();
}

void SetDefaultBackend(std::function<std::shared_ptr<Backend>()> factory) {
  auto* fresh = new std::function<std::shared_ptr<Backend>()>(std::move(factory));
  absl::MutexLock lock(&default_backend_mu);
  delete default_backend_factory;
  default_backend_factory = fresh;
}

}  // namespace coil
