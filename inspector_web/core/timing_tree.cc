// The Timings chart's tree: stage rows with their pass records nested (see timing_tree.h).
#include "inspector_web/core/timing_tree.h"

#include <map>

namespace coil::inspector {

std::string PipelineStage(const std::string& pipeline) {
  const size_t dot = pipeline.find('.');
  return dot == std::string::npos ? pipeline : pipeline.substr(0, dot);
}

TimingTree BuildTimingTree(const proto::CompileReport& report) {
  TimingTree tree;
  std::map<std::string, std::vector<int>> rows_of;  // stage name -> indices into tree.stages
  for (int i = 0; i < report.timings_size(); ++i) {
    tree.stages.push_back(TimingNode{i, {}});
    rows_of[report.timings(i).stage()].push_back(i);
  }
  std::map<std::string, size_t> cursor;  // stage name -> position in rows_of[name]
  std::vector<double> filled(tree.stages.size(), 0.0);
  for (int p = 0; p < report.passes_size(); ++p) {
    const proto::PassRun& run = report.passes(p);
    // The longest dot-separated prefix of the pipeline that names a row
    // ("backward.inductor.graph" -> a "backward.inductor" row), else the first part.
    auto rows = rows_of.end();
    for (std::string prefix = run.pipeline(); !prefix.empty();) {
      rows = rows_of.find(prefix);
      const size_t dot = prefix.rfind('.');
      if (rows != rows_of.end() || dot == std::string::npos) break;
      prefix.resize(dot);
    }
    if (rows == rows_of.end()) {
      tree.unplaced.push_back(p);
      continue;
    }
    size_t& at = cursor[rows->first];
    while (at + 1 < rows->second.size()) {
      const int row = rows->second[at];
      if (filled[row] + run.seconds() <= report.timings(row).seconds()) break;
      ++at;
    }
    const int row = rows->second[at];
    tree.stages[row].pass_indices.push_back(p);
    filled[row] += run.seconds();
  }
  return tree;
}

namespace {

void WritePass(const proto::PassRun& run, JsonWriter& w) {
  w.BeginObject();
  w.Field("pipeline", run.pipeline());
  w.Field("pass", run.pass());
  w.Field("seconds", run.seconds());
  w.Field("changed", run.changed());
  w.EndObject();
}

}  // namespace

void WriteTimingTreeJson(const proto::CompileReport& report, JsonWriter& w) {
  const TimingTree tree = BuildTimingTree(report);
  w.BeginObject();
  w.Key("stages");
  w.BeginArray();
  for (const TimingNode& node : tree.stages) {
    const proto::StageTiming& t = report.timings(node.timing_index);
    w.BeginObject();
    w.Field("stage", t.stage());
    w.Field("seconds", t.seconds());
    w.Field("cpu_seconds", t.cpu_seconds());
    w.Key("passes");
    w.BeginArray();
    for (int p : node.pass_indices) WritePass(report.passes(p), w);
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.Key("unplaced");
  w.BeginArray();
  for (int p : tree.unplaced) WritePass(report.passes(p), w);
  w.EndArray();
  w.EndObject();
}

}  // namespace coil::inspector
