// CaptureBackend: coil::Backend::Compile through driver::CompileGraph.
#include "tools/driver/capture_backend.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "capture/logging.h"
#include "ir/printer.h"
#include "tools/driver/training.h"

namespace coil::driver {
namespace {

// A training compile (CompileTraining: joint graph, partition, forward and backward compiled).
class CompiledTraining : public CompiledTrainingGraph {
 public:
  explicit CompiledTraining(TrainingCompileResult r) : r_(std::move(r)) {}
  absl::StatusOr<std::vector<HostTensor>> Forward(absl::Span<const HostTensor> inputs) override {
    return r_.forward.executable->Run(inputs);
  }
  absl::StatusOr<std::vector<HostTensor>> Backward(std::vector<HostTensor> saved,
                                                   const std::vector<HostTensor>& grads) override {
    // Tangents: one per floating forward output (TrainingOptions::output_tangents empty).
    for (const HostTensor& g : grads) {
      if (IsFloating(g.dtype())) saved.push_back(g);
    }
    return r_.backward.executable->Run(saved);
  }

 private:
  TrainingCompileResult r_;
};

std::string GraphText(const proto::Graph& g) {
  absl::StatusOr<Graph> graph = Graph::FromProto(g);
  return graph.ok() ? PrintGraph(*graph) : std::string(graph.status().message());
}

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
  Adapter(DriverOptions options, autograd::PartitionOptions partition)
      : options_(std::move(options)), partition_(partition) {}
  std::string name() const override { return options_.backend->name(); }
  absl::StatusOr<std::unique_ptr<CompiledGraph>> Compile(const Graph& graph) override {
    absl::StatusOr<CompileResult> r = CompileGraph(graph.Clone(), options_);
    if (!r.ok()) return r.status();
    if (r->executable == nullptr) return r->load_error;
    return std::make_unique<Compiled>(std::move(r->executable));
  }
  absl::StatusOr<std::unique_ptr<CompiledTrainingGraph>> CompileTraining(
      const Graph& graph, const std::vector<bool>& requires_grad) override {
    DriverOptions options = options_;
    const bool log = LogEnabled(LogStream::kAotGraphs);
    if (log) options.record_artifacts = true;
    TrainingOptions training;
    training.requires_grad = requires_grad;
    training.partition = partition_;
    absl::StatusOr<TrainingCompileResult> r =
        driver::CompileTraining(graph.Clone(), training, options);
    if (!r.ok()) return r.status();
    if (r->forward.executable == nullptr) return r->forward.load_error;
    if (r->backward.executable == nullptr) return r->backward.load_error;
    if (log) {
      const proto::AutogradResult& a = r->autograd;
      LogLine(LogStream::kAotGraphs,
              absl::StrCat(graph.name(), ": saved ", r->saved.size(), " values, ", r->saved_bytes,
                           " bytes (save-everything: ", r->save_everything_bytes, "), ",
                           r->recomputed_nodes, " nodes recomputed in the backward\n",
                           "joint graph:\n", GraphText(a.joint()), "forward graph:\n",
                           GraphText(a.forward()), "backward graph:\n", GraphText(a.backward())));
    }
    return std::make_unique<CompiledTraining>(*std::move(r));
  }

 private:
  DriverOptions options_;
  autograd::PartitionOptions partition_;
};

}  // namespace

std::shared_ptr<coil::Backend> CaptureBackend(std::shared_ptr<Backend> backend,
                                              DriverOptions options,
                                              autograd::PartitionOptions partition) {
  options.backend = std::move(backend);
  options.stop_after = Stage::kLoad;
  options.keep_intermediates = false;
  return std::make_shared<Adapter>(std::move(options), partition);
}

}  // namespace coil::driver
