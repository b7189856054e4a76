// Inspector (inspector.h): the overview, per-stage and diff JSON documents.
#include "inspector_web/core/inspector.h"

#include <algorithm>
#include <set>
#include <unordered_set>

#include "inspector_web/core/compare.h"
#include "inspector_web/core/compile_index.h"
#include "inspector_web/core/format.h"
#include "inspector_web/core/graph_index.h"
#include "inspector_web/core/graph_json.h"
#include "inspector_web/core/json_writer.h"
#include "inspector_web/core/kernel_module_json.h"
#include "inspector_web/core/load.h"
#include "inspector_web/core/memory_json.h"
#include "inspector_web/core/name_groups.h"
#include "inspector_web/core/node_json.h"
#include "inspector_web/core/provenance.h"
#include "inspector_web/core/schedule_json.h"
#include "inspector_web/core/summary.h"
#include "inspector_web/core/timing_tree.h"

namespace coil::inspector {
namespace {

std::string ErrorJson(const std::string& error) {
  JsonWriter w;
  w.BeginObject();
  w.Field("ok", false);
  w.Field("error", error);
  w.EndObject();
  return w.Take();
}

void WriteCapture(const Stage& s, JsonWriter& w) {
  const proto::CaptureResult& c = *s.capture;
  w.Key("capture");
  w.BeginObject();
  w.Field("index", s.capture_index);
  w.Field("graphs", c.graphs_size());
  // A CaptureResult holds the graphs of the function's latest compile: the how-manieth one it
  // is (1 + recompiles; a recompile records its count).
  int compile = 1;
  for (const proto::CaptureResult::Recompile& r : c.recompiles()) {
    compile = std::max(compile, std::max(r.count(), 1 + c.recompiles_size()));
  }
  w.Field("compile", compile);
  w.Key("guards");
  w.BeginArray();
  for (const proto::Guard& g : c.guards()) {
    w.BeginObject();
    w.Field("text", GuardText(g));
    // A check without a relation states itself in its reason.
    w.Field("relation", g.relation() != proto::Guard::RELATION_UNSPECIFIED);
    w.Field("reason", g.reason());
    w.Field("loc", FormatLoc(g.loc()));
    w.EndObject();
  }
  w.EndArray();
  // Break i ends segment graph i (the trace resumes in graph i + 1).
  w.Key("breaks");
  w.BeginArray();
  for (int i = 0; i < c.breaks_size(); ++i) {
    const proto::GraphBreak& b = c.breaks(i);
    w.BeginObject();
    w.Field("reason", b.reason());
    w.Field("op", b.op());
    w.Field("loc", FormatLoc(b.loc()));
    w.Field("after_graph", i);
    w.EndObject();
  }
  w.EndArray();
  w.Key("recompiles");
  w.BeginArray();
  for (const proto::CaptureResult::Recompile& r : c.recompiles()) {
    w.BeginObject();
    w.Field("reason", r.reason());
    w.Field("count", r.count());
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
}

void WriteAutograd(const Stage& s, const GraphIndex& index, JsonWriter& w) {
  const proto::AutogradResult& a = *s.autograd;
  w.Key("autograd");
  w.BeginObject();
  w.Field("part", s.autograd_part);
  w.Field("saved_bytes", a.saved_bytes());
  // Saved values are joint-graph ids.
  std::unordered_set<int64_t> saved(a.saved_values().begin(), a.saved_values().end());
  const proto::Graph& joint = a.joint();
  GraphIndex joint_index(joint);
  w.Key("saved_values");
  w.BeginArray();
  for (int64_t id : a.saved_values()) {
    const ValueDef* def = joint_index.Find(id);
    w.BeginObject();
    w.Field("value", id);
    w.Field("type", def != nullptr ? FormatType(def->value->type()) : std::string("undefined"));
    w.EndObject();
  }
  w.EndArray();
  // Which nodes and inputs of this part hold saved values. The joint graph: those defining a
  // saved id. The forward and backward graphs have ids of their own, but the partition lays
  // them out by position (autograd/partition.h): the forward's outputs are its outputs, then
  // the saved values in order; the backward's inputs are the saved values, then the tangents.
  std::vector<int> saved_nodes, saved_inputs;
  const proto::Graph& g = index.graph();
  const int saved_count = a.saved_values_size();
  if (s.autograd_part == "joint") {
    for (int i = 0; i < g.nodes_size(); ++i) {
      for (const proto::Value& v : g.nodes(i).outputs()) {
        if (saved.count(v.id()) != 0) {
          saved_nodes.push_back(i);
          break;
        }
      }
    }
    for (int i = 0; i < g.inputs_size(); ++i) {
      if (saved.count(g.inputs(i).id()) != 0) saved_inputs.push_back(i);
    }
  } else if (s.autograd_part == "forward" && g.outputs_size() >= saved_count) {
    std::set<int> nodes, inputs;
    for (int k = g.outputs_size() - saved_count; k < g.outputs_size(); ++k) {
      const ValueDef* def = index.Find(g.outputs(k));
      if (def == nullptr) continue;
      if (def->kind == ValueDef::kNode) nodes.insert(def->index);
      if (def->kind == ValueDef::kInput) inputs.insert(def->index);
    }
    saved_nodes.assign(nodes.begin(), nodes.end());
    saved_inputs.assign(inputs.begin(), inputs.end());
  } else if (s.autograd_part == "backward") {
    for (int i = 0; i < std::min(saved_count, g.inputs_size()); ++i) saved_inputs.push_back(i);
  }
  w.Key("saved_nodes");
  w.BeginArray();
  for (int i : saved_nodes) w.Int(i);
  w.EndArray();
  w.Key("saved_inputs");
  w.BeginArray();
  for (int i : saved_inputs) w.Int(i);
  w.EndArray();
  w.EndObject();
}

}  // namespace

Inspector::Inspector() : report_(std::make_unique<proto::CompileReport>()) {}
Inspector::~Inspector() = default;

std::string Inspector::Open(std::string_view bytes, std::string_view file_name) {
  // A file that fails to load leaves the loaded one in place (the page keeps showing it).
  auto loaded = std::make_unique<proto::CompileReport>();
  LoadInfo info;
  if (!LoadReport(bytes, file_name, loaded.get(), &info)) return ErrorJson(info.error);
  report_ = std::move(loaded);
  stages_ = ListStages(*report_);
  file_name_ = std::string(file_name);
  other_.reset();
  other_stages_.clear();
  other_name_.clear();

  JsonWriter w;
  w.BeginObject();
  w.Field("ok", true);
  w.Field("file", file_name);
  w.Field("bytes", static_cast<int64_t>(bytes.size()));
  w.Field("kind", MessageKindName(info.kind));
  w.Field("warning", info.warning);
  w.Field("model", report_->model());
  w.Field("coil_version", report_->coil_version());
  w.Key("options");
  w.BeginArray();
  // A proto map has no order; sort for a stable page.
  std::vector<std::pair<std::string, std::string>> options(report_->options().begin(),
                                                           report_->options().end());
  std::sort(options.begin(), options.end());
  for (const auto& [k, v] : options) {
    w.BeginArray();
    w.String(k);
    w.String(v);
    w.EndArray();
  }
  w.EndArray();
  w.Key("stages");
  w.BeginArray();
  for (size_t i = 0; i < stages_.size(); ++i) {
    const Stage& s = stages_[i];
    w.BeginObject();
    w.Field("key", s.key);
    w.Field("title", s.title);
    w.Field("kind", StageKindName(s.kind));
    w.Field("artifact", report_->stages(s.artifact_index).stage());
    w.Field("node_count", s.graph->nodes_size());
    w.Field("seconds", s.seconds);
    w.EndObject();
  }
  w.EndArray();
  WriteCompileIndexJson(*report_, stages_, w);
  w.Key("artifacts");
  w.BeginArray();
  for (const proto::StageArtifact& a : report_->stages()) {
    w.BeginObject();
    w.Field("stage", a.stage());
    w.Field("seconds", a.seconds());
    w.EndObject();
  }
  w.EndArray();
  w.Key("timings");
  w.BeginArray();
  for (const proto::StageTiming& t : report_->timings()) {
    w.BeginObject();
    w.Field("stage", t.stage());
    w.Field("seconds", t.seconds());
    w.Field("cpu_seconds", t.cpu_seconds());
    w.EndObject();
  }
  w.EndArray();
  w.Key("timing_tree");
  WriteTimingTreeJson(*report_, w);
  w.Key("logs");
  w.BeginArray();
  for (const proto::LogLine& l : report_->logs()) {
    w.BeginObject();
    w.Field("channel", l.channel());
    w.Field("text", l.text());
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return w.Take();
}

std::string Inspector::StageJson(int index) const {
  if (index < 0 || index >= static_cast<int>(stages_.size())) {
    return ErrorJson("no stage " + std::to_string(index) + " (the file has " +
                     std::to_string(stages_.size()) + ")");
  }
  const Stage& s = stages_[index];
  GraphIndex graph_index(*s.graph);
  JsonWriter w;
  w.Reserve(4096 + 200 * static_cast<size_t>(s.graph->nodes_size()));  // ~what layouts take
  w.BeginObject();
  w.Field("ok", true);
  w.Field("index", index);
  w.Field("key", s.key);
  w.Field("title", s.title);
  w.Field("kind", StageKindName(s.kind));
  w.Field("seconds", s.seconds);
  w.Key("graph");
  WriteGraphJson(graph_index, w);
  w.Key("summary");
  WriteSummaryJson(*s.graph, w);
  // The diff against the previous stage, which is what the Diff view opens with.
  w.Field("previous", index - 1);
  if (index > 0) {
    w.Key("diff");
    WriteDiffJson(DiffOps(CountOps(*stages_[index - 1].graph), CountOps(*s.graph)), w);
  }
  if (s.capture != nullptr) WriteCapture(s, w);
  if (s.autograd != nullptr) WriteAutograd(s, graph_index, w);
  if (s.schedule != nullptr) {
    w.Key("schedule");
    WriteScheduleJson(*s.schedule, graph_index, w);
  }
  if (s.kernel_module != nullptr) {
    w.Key("kernel_module");
    WriteKernelModuleJson(*s.kernel_module, w);
  }
  w.EndObject();
  return w.Take();
}

std::string Inspector::NodeJson(int stage, int node) const {
  if (stage < 0 || stage >= static_cast<int>(stages_.size())) {
    return ErrorJson("no stage " + std::to_string(stage) + " (the file has " +
                     std::to_string(stages_.size()) + ")");
  }
  const Stage& s = stages_[stage];
  if (node < 0 || node >= s.graph->nodes_size()) {
    return ErrorJson("stage " + s.key + " has no node " + std::to_string(node) + " (it has " +
                     std::to_string(s.graph->nodes_size()) + ")");
  }
  GraphIndex index(*s.graph);
  JsonWriter w;
  w.BeginObject();
  w.Field("ok", true);
  w.Key("node");
  WriteNodeJson(s, index, node, w);
  w.Key("provenance");
  WriteProvenanceJson(stages_, stage, node, w);
  w.EndObject();
  return w.Take();
}

std::string Inspector::MemoryJson(int stage, std::string_view typed) const {
  if (stage < 0 || stage >= static_cast<int>(stages_.size())) {
    return ErrorJson("no stage " + std::to_string(stage) + " (the file has " +
                     std::to_string(stages_.size()) + ")");
  }
  const Stage& s = stages_[stage];
  if (s.schedule == nullptr) return ErrorJson("stage " + s.key + " has no memory plan");
  auto dim = report_->options().find("dim");
  JsonWriter w;
  w.BeginObject();
  w.Field("ok", true);
  w.Key("memory");
  WriteMemoryJson(*s.schedule, dim == report_->options().end() ? "" : dim->second, typed, w);
  w.EndObject();
  return w.Take();
}

std::string Inspector::ViewJson(int stage, std::string_view collapsed) const {
  if (stage < 0 || stage >= static_cast<int>(stages_.size())) {
    return ErrorJson("no stage " + std::to_string(stage) + " (the file has " +
                     std::to_string(stages_.size()) + ")");
  }
  const proto::Graph& g = *stages_[stage].graph;
  GraphIndex index(g);
  NameGroups groups = BuildNameGroups(g);
  std::vector<bool> set = ParseCollapsed(collapsed, groups, g.inputs_size(), g.nodes_size());
  JsonWriter w;
  w.BeginObject();
  w.Field("ok", true);
  w.Key("collapsed");
  w.BeginArray();
  for (size_t k = 0; k < set.size(); ++k) {
    if (set[k]) w.Int(static_cast<int>(k));
  }
  w.EndArray();
  WriteViewLayout(index, groups, MakeGroupView(groups, set, g.inputs_size(), g.nodes_size()), w);
  w.EndObject();
  return w.Take();
}

std::string Inspector::DiffJson(int before, int after) const {
  int n = static_cast<int>(stages_.size());
  if (before < 0 || before >= n || after < 0 || after >= n) {
    return ErrorJson("no stages " + std::to_string(before) + " and " + std::to_string(after) +
                     " (the file has " + std::to_string(n) + ")");
  }
  JsonWriter w;
  w.BeginObject();
  w.Field("ok", true);
  w.Field("before", stages_[before].key);
  w.Field("after", stages_[after].key);
  w.Key("diff");
  WriteDiffJson(DiffOps(CountOps(*stages_[before].graph), CountOps(*stages_[after].graph)), w);
  w.EndObject();
  return w.Take();
}

std::string Inspector::OpenCompare(std::string_view bytes, std::string_view file_name) {
  auto loaded = std::make_unique<proto::CompileReport>();
  LoadInfo info;
  if (!LoadReport(bytes, file_name, loaded.get(), &info)) return ErrorJson(info.error);
  other_ = std::move(loaded);
  other_stages_ = ListStages(*other_);
  other_name_ = std::string(file_name);
  JsonWriter w;
  w.BeginObject();
  w.Field("ok", true);
  w.Field("file", file_name);
  w.Field("stages", static_cast<int64_t>(other_stages_.size()));
  w.EndObject();
  return w.Take();
}

std::string Inspector::CompareJson() const {
  if (other_ == nullptr) return ErrorJson("no file to compare with: open one first");
  return coil::inspector::CompareJson(*report_, stages_, file_name_, *other_, other_stages_,
                                      other_name_);
}

}  // namespace coil::inspector
