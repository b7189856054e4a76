// CompileNumber, WriteCompileIndexJson (compile_index.h).
#include "inspector_web/core/compile_index.h"

#include <algorithm>
#include <set>
#include <string>

namespace coil::inspector {

int CompileNumber(const proto::CaptureResult& capture) {
  return capture.recompiles_size() == 0 ? 1 : std::max(1, capture.recompiles().rbegin()->count());
}

void WriteCompileIndexJson(const proto::CompileReport& report, const std::vector<Stage>& stages,
                           JsonWriter& w) {
  std::set<int> numbers;
  int highest = 0;
  w.Key("compiles");
  w.BeginArray();
  for (int a = 0; a < report.stages_size(); ++a) {
    if (!report.stages(a).has_capture()) continue;
    const proto::CaptureResult& c = report.stages(a).capture();
    const int number = CompileNumber(c);
    numbers.insert(number);
    highest = std::max(highest, number);
    std::string reason;
    for (const proto::CaptureResult::Recompile& r : c.recompiles()) {
      if (r.count() == number) reason = r.reason();
    }
    w.BeginObject();
    w.Field("compile", number);
    w.Field("artifact", a);
    w.Field("reason", reason);
    w.Field("graphs", c.graphs_size());
    w.Field("guards", c.guards_size());
    w.Field("breaks", c.breaks_size());
    w.Key("stages");
    w.BeginArray();
    for (size_t i = 0; i < stages.size(); ++i) {
      if (stages[i].artifact_index == a) w.Int(static_cast<int>(i));
    }
    w.EndArray();
    w.Key("nodes");
    w.BeginArray();
    for (const Stage& s : stages) {
      if (s.artifact_index == a) w.Int(s.graph->nodes_size());
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.Key("compiles_missing");
  w.BeginArray();
  for (int n = 1; n < highest; ++n) {
    if (numbers.count(n) == 0) w.Int(n);
  }
  w.EndArray();
}

}  // namespace coil::inspector
