// Compiled segments on the autograd tape (capture/internal/training_segment.h).
#include "capture/internal/training_segment.h"

#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "capture/error.h"
#include "ir/check.h"

namespace coil::capture_internal {
namespace {

// One compiled segment: its backward is the training compile's backward graph.
class CompiledSegmentNode : public GradNode {
 public:
  CompiledSegmentNode(std::string name, std::vector<GradEdge> edges,
                      std::vector<std::pair<DType, std::vector<int64_t>>> outputs,
                      std::shared_ptr<CompiledTrainingGraph> compiled, std::vector<HostTensor> saved,
                      std::vector<bool> needs)
      : GradNode(std::move(name), "compiled", std::move(edges), std::move(outputs)),
        compiled_(std::move(compiled)),
        saved_(std::move(saved)),
        needs_(std::move(needs)) {}

  absl::StatusOr<std::vector<std::optional<HostTensor>>> Apply(
      const std::vector<std::optional<HostTensor>>& grads) override {
    if (released_) {
      return absl::FailedPreconditionError(absl::StrCat(name(), ": saved values were freed"));
    }
    std::vector<HostTensor> full;
    for (size_t k = 0; k < outputs().size(); ++k) {
      full.push_back(k < grads.size() && grads[k].has_value()
                         ? *grads[k]
                         : HostTensor::Zeros(outputs()[k].first, outputs()[k].second));
    }
    absl::StatusOr<std::vector<HostTensor>> g = compiled_->Backward(saved_, full);
    if (!g.ok()) {
      return absl::Status(g.status().code(), absl::StrCat("compiled backward of ", name(), ": ",
                                                          g.status().message()));
    }
    std::vector<std::optional<HostTensor>> out(inputs().size());
    size_t k = 0;
    for (size_t i = 0; i < needs_.size(); ++i) {
      if (!needs_[i]) continue;
      COIL_CHECK(k < g->size());
      out[i] = (*g)[k++];
    }
    return out;
  }
  void Release() override {
    saved_.clear();
    released_ = true;
  }

 private:
  std::shared_ptr<CompiledTrainingGraph> compiled_;
  std::vector<HostTensor> saved_;
  std::vector<bool> needs_;
};

}  // namespace

std::vector<bool> InputsNeedingGrad(const std::vector<std::shared_ptr<TensorImpl>>& inputs) {
  if (!GradEnabled()) return {};
  std::vector<bool> needs(inputs.size(), false);
  bool any = false;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorImpl* impl = inputs[i].get();
    needs[i] = impl != nullptr && !impl->is_lazy() && IsFloating(impl->dtype()) && NeedsGrad(impl);
    any = any || needs[i];
  }
  if (!any) needs.clear();
  return needs;
}

// Which graph outputs depend on an input in `needs` through floating values (an integer value,
// an index or a comparison, carries no gradient).
std::vector<bool> OutputsRequiringGrad(const Graph& graph, const std::vector<bool>& needs) {
  absl::flat_hash_set<const Value*> on_tape;
  for (size_t i = 0; i < graph.inputs().size() && i < needs.size(); ++i) {
    if (needs[i]) on_tape.insert(graph.inputs()[i]);
  }
  for (const Node* n : graph.nodes()) {  // in topological order
    bool from_tape = false;
    for (const Value* in : n->inputs()) from_tape = from_tape || on_tape.contains(in);
    if (!from_tape) continue;
    for (const Value* out : n->outputs()) {
      if (IsFloating(out->type().dtype)) on_tape.insert(out);
    }
  }
  std::vector<bool> result;
  for (const Value* out : graph.outputs()) result.push_back(on_tape.contains(out));
  return result;
}

TrainingRun RunForTraining(Backend& backend, const Graph& graph, const std::string& key,
                           TrainingCache& cache,
                           const std::vector<std::shared_ptr<TensorImpl>>& inputs,
                           const std::vector<HostTensor>& data, const std::vector<bool>& needs,
                           const std::string& name) {
  TrainingRun run;
  std::string full_key = key + ":grad:";
  for (bool b : needs) full_key.push_back(b ? '1' : '0');
  std::shared_ptr<CompiledTrainingGraph> compiled;
  auto it = cache.find(full_key);
  if (it != cache.end()) {
    compiled = it->second;
  } else {
    absl::StatusOr<std::unique_ptr<CompiledTrainingGraph>> c =
        backend.CompileTraining(graph, needs);
    if (!c.ok()) {
      throw Error(absl::Status(c.status().code(),
                               absl::StrCat("backend ", backend.name(),
                                            " failed to compile ", name, " for training: ",
                                            c.status().message())));
    }
    compiled = std::shared_ptr<CompiledTrainingGraph>(std::move(*c));
    cache.emplace(full_key, compiled);
    run.compiled = true;
  }
  absl::StatusOr<std::vector<HostTensor>> out = compiled->Forward(data);
  if (!out.ok()) {
    throw Error(absl::Status(out.status().code(), absl::StrCat("running ", name, " (training): ",
                                                               out.status().message())));
  }
  size_t n = graph.outputs().size();
  COIL_CHECK(out->size() >= n);
  run.outputs.assign(out->begin(), out->begin() + n);
  std::vector<HostTensor> saved(out->begin() + n, out->end());
  std::vector<GradEdge> edges(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (needs[i]) edges[i] = EdgeOf(inputs[i]);
  }
  std::vector<std::pair<DType, std::vector<int64_t>>> types;
  for (const HostTensor& t : run.outputs) types.push_back({t.dtype(), t.shape()});
  run.node = std::make_shared<CompiledSegmentNode>(name, std::move(edges), std::move(types),
                                                   std::move(compiled), std::move(saved), needs);
  run.requires_grad = OutputsRequiringGrad(graph, needs);
  return run;
}

}  // namespace coil::capture_internal
