// CompileTraining: autograd (joint graph, decompose, partition), then the forward and backward
// graphs through CompileGraph. CompileOptimizer: an optimizer graph through CompileGraph, with
// its zero state.
#include "tools/driver/training.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "autograd/joint_graph.h"
#include "prims/decompose.h"

namespace coil::driver {
namespace {

absl::Status Prefixed(const absl::Status& s, absl::string_view prefix) {
  return absl::Status(s.code(), absl::StrCat(prefix, s.message()));
}

}  // namespace

absl::StatusOr<TrainingCompileResult> CompileTraining(Graph graph, const TrainingOptions& training,
                                                      const DriverOptions& options) {
  auto start = std::chrono::steady_clock::now();
  absl::StatusOr<autograd::JointGraph> joint =
      autograd::BuildJointGraph(graph, training.requires_grad, training.output_tangents);
  if (!joint.ok()) return joint.status();  // already "autograd: ..."
  // The partitioner sees prims (pointwise chains it may recompute) and externs (never).
  absl::StatusOr<bool> decomposed = prims::Decompose(joint->graph, EffectiveDecompose(options));
  if (!decomposed.ok()) return Prefixed(decomposed.status(), "autograd: decomposing the joint graph: ");
  absl::StatusOr<autograd::Partition> everything = autograd::PartitionJoint(
      *joint, {autograd::PartitionStrategy::kSaveEverything, 1.0});
  if (!everything.ok()) return Prefixed(everything.status(), "autograd: ");
  absl::StatusOr<autograd::Partition> p = autograd::PartitionJoint(*joint, training.partition);
  if (!p.ok()) return Prefixed(p.status(), "autograd: ");
  TrainingCompileResult r;
  r.autograd_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.num_forward_outputs = p->num_forward_outputs;
  r.saved = p->saved;
  r.saved_bytes = p->saved_bytes;
  r.save_everything_bytes = everything->saved_bytes;
  r.recomputed_nodes = p->recomputed_nodes;
  for (const autograd::SavedValue& v : p->saved) r.autograd.add_saved_values(v.value_id);
  r.autograd.set_saved_bytes(p->saved_bytes);
  if (options.record_artifacts) {
    *r.autograd.mutable_joint() = joint->graph.ToProto();
    *r.autograd.mutable_forward() = p->forward.ToProto();
    *r.autograd.mutable_backward() = p->backward.ToProto();
  }
  absl::StatusOr<CompileResult> fw = CompileGraph(std::move(p->forward), options);
  if (!fw.ok()) return Prefixed(fw.status(), "forward ");
  absl::StatusOr<CompileResult> bw = CompileGraph(std::move(p->backward), options);
  if (!bw.ok()) return Prefixed(bw.status(), "backward ");
  if (options.record_artifacts) {
    proto::StageArtifact* a = fw->report.add_stages();
    a->set_stage("autograd");
    a->set_seconds(r.autograd_seconds);
    *a->mutable_autograd() = r.autograd;
    proto::StageTiming* t = fw->report.add_timings();
    t->set_stage("autograd");
    t->set_seconds(r.autograd_seconds);
    // The autograd stage ran first: its entries go before the forward compile's stages.
    for (int i = fw->report.stages_size() - 1; i > 0; --i) {
      fw->report.mutable_stages()->SwapElements(i, i - 1);
    }
    for (int i = fw->report.timings_size() - 1; i > 0; --i) {
      fw->report.mutable_timings()->SwapElements(i, i - 1);
    }
    StoreConstantsOnce(fw->report);
  }
  r.forward = *std::move(fw);
  r.backward = *std::move(bw);
  return r;
}

absl::StatusOr<TrainingStepResult> TrainingCompileResult::Run(
    const std::vector<HostTensor>& primals, const std::vector<HostTensor>& tangents) const {
  if (forward.executable == nullptr || backward.executable == nullptr) {
    return absl::FailedPreconditionError("training step: the forward or backward graph was not "
                                         "loaded (stop_after before kLoad, or a load error)");
  }
  absl::StatusOr<std::vector<HostTensor>> fw = forward.executable->Run(primals);
  if (!fw.ok()) return Prefixed(fw.status(), "forward: ");
  TrainingStepResult r;
  r.outputs.assign(fw->begin(), fw->begin() + num_forward_outputs);
  std::vector<HostTensor> bw_in(fw->begin() + num_forward_outputs, fw->end());
  bw_in.insert(bw_in.end(), tangents.begin(), tangents.end());
  absl::StatusOr<std::vector<HostTensor>> bw = backward.executable->Run(bw_in);
  if (!bw.ok()) return Prefixed(bw.status(), "backward: ");
  r.gradients = *std::move(bw);
  return r;
}

absl::StatusOr<CompiledOptimizer> CompileOptimizer(autograd::OptimizerGraph graph,
                                                   const DriverOptions& options) {
  CompiledOptimizer r;
  r.num_params = graph.num_params;
  r.state_names = graph.state_names;
  const std::vector<Value*>& inputs = graph.graph.inputs();
  for (size_t i = 2 * graph.num_params; i < inputs.size(); ++i) {
    std::vector<int64_t> shape;
    for (const SymExpr& d : inputs[i]->type().shape) {
      if (!d.is_constant()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "optimizer: parameter shapes must be static, got ", inputs[i]->type().ToString()));
      }
      shape.push_back(d.constant());
    }
    r.state.push_back(HostTensor::Zeros(inputs[i]->type().dtype, shape));
  }
  absl::StatusOr<CompileResult> c = CompileGraph(std::move(graph.graph), options);
  if (!c.ok()) return Prefixed(c.status(), "optimizer ");
  if (c->executable == nullptr) {
    return absl::FailedPreconditionError("optimizer: the graph was not loaded (stop_after)");
  }
  r.compiled = *std::move(c);
  return r;
}

absl::Status CompiledOptimizer::Step(const std::vector<HostTensor>& params,
                                     const std::vector<HostTensor>& grads) {
  if (static_cast<int>(params.size()) != num_params ||
      static_cast<int>(grads.size()) != num_params) {
    return absl::InvalidArgumentError(absl::StrCat("optimizer step: expected ", num_params,
                                                   " parameters and gradients, got ",
                                                   params.size(), " and ", grads.size()));
  }
  for (int i = 0; i < num_params; ++i) {
    const HostTensor& p = params[i];
    if (grads[i].shape() != p.shape() || grads[i].dtype() != p.dtype()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "optimizer step: gradient ", i, " differs from its parameter in shape or dtype"));
    }
  }
  std::vector<HostTensor> args = params;
  args.insert(args.end(), grads.begin(), grads.end());
  args.insert(args.end(), state.begin(), state.end());
  absl::StatusOr<std::vector<HostTensor>> out = compiled.executable->Run(args);
  if (!out.ok()) return Prefixed(out.status(), "optimizer step: ");
  return absl::OkStatus();
}

}  // namespace coil::driver
