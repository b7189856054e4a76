// CaptureBackend: coil::Backend::Compile through driver::CompileGraph.
#include "tools/driver/capture_backend.h"

#include <utility>

namespace coil::driver {
namespace {

class Compiled : public CompiledGraph {
 public:
  explicit Compiled(std::unique_ptr<Executable> executable)
      : executable_(std::move(executable)) {}
  absl::StatusOr<std::vector<HostTensor>> Run(absl::Span<const HostTensor> inputs) override {
    return executable_->Run(inputs);
  }

 private:
  std::unique_ptr<Executable> executable_;
};

class Adapter : public coil::Backend {
 public:
  explicit Adapter(DriverOptions options) : options_(std::move(options)) {}
  std::string name() const override { return options_.backend->name(); }
  absl::StatusOr<std::unique_ptr<CompiledGraph>> Compile(const Graph& graph) override {
    absl::StatusOr<CompileResult> r = CompileGraph(graph.Clone(), options_);
    if (!r.ok()) return r.status();
    if (r->executable == nullptr) return r->load_error;
    return std::make_unique<Compiled>(std::move(r->executable));
  }

 private:
  DriverOptions options_;
};

}  // namespace

std::shared_ptr<coil::Backend> CaptureBackend(std::shared_ptr<Backend> backend,
                                              DriverOptions options) {
  options.backend = std::move(backend);
  options.stop_after = Stage::kLoad;
  options.keep_intermediates = false;
  return std::make_shared<Adapter>(std::move(options));
}

}  // namespace coil::driver
