// Op histograms and diffs (summary.h).
#include "inspector_web/core/summary.h"

#include <algorithm>
#include <map>

namespace coil::inspector {

OpHistogram CountOps(const proto::Graph& graph) {
  std::map<std::string, int64_t> counts;
  for (const proto::Node& n : graph.nodes()) ++counts[n.op()];
  OpHistogram h(counts.begin(), counts.end());
  std::stable_sort(h.begin(), h.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  return h;
}

OpDiff DiffOps(const OpHistogram& before, const OpHistogram& after) {
  std::map<std::string, OpDiffRow> rows;
  for (const auto& [op, count] : before) {
    rows[op].op = op;
    rows[op].before += count;
  }
  for (const auto& [op, count] : after) {
    rows[op].op = op;
    rows[op].after += count;
  }
  OpDiff d;
  for (auto& [op, row] : rows) {
    if (row.before > 0 && row.after == 0) d.removed.push_back(op);
    if (row.before == 0 && row.after > 0) d.added.push_back(op);
    d.rows.push_back(std::move(row));
  }
  return d;
}

void WriteSummaryJson(const proto::Graph& graph, JsonWriter& w) {
  int64_t constant_bytes = 0;
  for (const proto::Constant& c : graph.constants()) {
    constant_bytes +=
        c.has_external()       ? c.external().length()
        : c.has_by_reference() ? c.by_reference().length()
                               : static_cast<int64_t>(c.raw().size());
  }
  w.BeginObject();
  w.Field("nodes", graph.nodes_size());
  w.Field("inputs", graph.inputs_size());
  w.Field("constants", graph.constants_size());
  w.Field("constant_bytes", constant_bytes);
  w.Field("outputs", graph.outputs_size());
  w.Key("ops");
  w.BeginArray();
  for (const auto& [op, count] : CountOps(graph)) {
    w.BeginArray();
    w.String(op);
    w.Int(count);
    w.EndArray();
  }
  w.EndArray();
  w.EndObject();
}

void WriteDiffJson(const OpDiff& diff, JsonWriter& w) {
  w.BeginObject();
  w.Key("rows");
  w.BeginArray();
  for (const OpDiffRow& r : diff.rows) {
    w.BeginArray();
    w.String(r.op);
    w.Int(r.before);
    w.Int(r.after);
    w.EndArray();
  }
  w.EndArray();
  w.Key("removed");
  w.BeginArray();
  for (const std::string& op : diff.removed) w.String(op);
  w.EndArray();
  w.Key("added");
  w.BeginArray();
  for (const std::string& op : diff.added) w.String(op);
  w.EndArray();
  w.EndObject();
}

}  // namespace coil::inspector
