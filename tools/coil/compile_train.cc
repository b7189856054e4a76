// LiftWeights and CompileForTraining (compile_train.h).
#include "tools/coil/compile_train.h"

#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ir/dtype.h"
#include "tools/driver/stage_clock.h"

namespace coil::cli {
namespace {

// Static byte size of a constant's type, or -1 when a dimension is symbolic.
int64_t StaticBytes(const proto::TensorType& type) {
  int64_t n = ElementSize(type.dtype());
  for (const proto::SymExpr& d : type.shape()) {
    if (d.kind() != proto::SymExpr::CONST) return -1;
    n *= d.value();
  }
  return n;
}

}  // namespace

absl::StatusOr<TrainableGraph> LiftWeights(const Graph& graph) {
  proto::Graph p = graph.ToProto();
  TrainableGraph t;
  google::protobuf::RepeatedPtrField<proto::Constant> kept;
  for (proto::Constant& c : *p.mutable_constants()) {
    const int64_t bytes = StaticBytes(c.value().type());
    if (IsFloating(c.value().type().dtype()) && bytes >= kWeightBytes) {
      *p.add_inputs() = c.value();
      ++t.weights;
      t.weight_bytes += bytes;
    } else {
      *kept.Add() = std::move(c);
    }
  }
  p.mutable_constants()->Swap(&kept);
  for (const proto::Value& v : p.inputs()) t.requires_grad.push_back(IsFloating(v.type().dtype()));
  bool any = false;
  for (bool r : t.requires_grad) any = any || r;
  if (!any) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--train: the model has no floating input and no weight (a floating constant of ",
        kWeightBytes, " bytes or more) to differentiate"));
  }
  absl::StatusOr<Graph> g = Graph::FromProto(std::move(p));
  if (!g.ok()) return g.status();
  t.graph = *std::move(g);
  return t;
}

absl::StatusOr<driver::TrainingCompileResult> CompileForTraining(
    const driver::Importer& import, driver::DriverOptions options, proto::CompileReport* report) {
  driver::StageClock clock;
  absl::StatusOr<Graph> graph = import();
  proto::StageTiming import_timing;
  import_timing.set_stage("import");
  clock.Record(import_timing);
  *report->add_timings() = import_timing;
  if (!graph.ok()) return absl::Status(graph.status().code(), absl::StrCat("import: ", graph.status().message()));
  if (options.on_stage) {
    options.on_stage(driver::StageEvent{"import", import_timing.seconds(),
                                        absl::StrCat(graph->num_nodes(), " nodes")});
  }
  proto::StageArtifact import_artifact;
  if (options.record_artifacts) {
    import_artifact.set_stage("import");
    import_artifact.set_seconds(import_timing.seconds());
    *import_artifact.mutable_graph() = graph->ToProto();
  }
  absl::StatusOr<TrainableGraph> t = LiftWeights(*graph);
  if (!t.ok()) return t.status();
  // CompileTraining compiles the forward, then the backward, each from its capture stage on:
  // the second "capture" event starts the backward.
  auto captures = std::make_shared<int>(0);
  if (options.on_stage) {
    auto print = options.on_stage;
    options.on_stage = [print, captures](const driver::StageEvent& e) {
      if (e.stage == "capture") ++*captures;
      driver::StageEvent named = e;
      if (*captures > 1) named.stage = "backward." + e.stage;
      print(named);
    };
  }
  driver::TrainingOptions training;
  training.requires_grad = t->requires_grad;
  absl::StatusOr<driver::TrainingCompileResult> r =
      driver::CompileTraining(std::move(t->graph), training, options);
  if (!r.ok()) return r.status();
  // import, then the forward's report (autograd first), then the backward's, renamed.
  proto::CompileReport out = r->forward.report;
  if (options.record_artifacts) {
    out.mutable_stages()->Add(std::move(import_artifact));
    for (int i = out.stages_size() - 1; i > 0; --i) out.mutable_stages()->SwapElements(i, i - 1);
  }
  out.mutable_timings()->Add()->CopyFrom(import_timing);
  for (int i = out.timings_size() - 1; i > 0; --i) out.mutable_timings()->SwapElements(i, i - 1);
  for (const proto::StageArtifact& a : r->backward.report.stages()) {
    proto::StageArtifact* b = out.add_stages();
    *b = a;
    b->set_stage("backward." + a.stage());
  }
  for (const proto::StageTiming& s : r->backward.report.timings()) {
    proto::StageTiming* b = out.add_timings();
    *b = s;
    b->set_stage("backward." + s.stage());
  }
  for (const proto::PassRun& p : r->backward.report.passes()) {
    proto::PassRun* b = out.add_passes();
    *b = p;
    b->set_pipeline("backward." + p.pipeline());
  }
  for (const proto::LogLine& l : r->backward.report.logs()) *out.add_logs() = l;
  for (const auto& [k, v] : r->backward.report.options()) (*out.mutable_options())[k] = v;
  (*out.mutable_options())["train"] = absl::StrCat(
      t->weights, " weights lifted to inputs (", t->weight_bytes, " bytes); saved ",
      r->saved_bytes, " bytes for backward (save everything: ", r->save_everything_bytes,
      " bytes), ", r->recomputed_nodes, " nodes recomputed");
  driver::StoreConstantsOnce(out);
  *report = std::move(out);
  return r;
}

}  // namespace coil::cli
