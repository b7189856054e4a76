// Provenance (provenance.h): a node's ancestors and descendants on the other stages.
#include "inspector_web/core/provenance.h"

#include <algorithm>
#include <set>

#include "inspector_web/core/format.h"
#include "inspector_web/core/graph_index.h"
#include "inspector_web/core/schedule_json.h"

namespace coil::inspector {

std::string ProvenanceKey(const proto::Node &node) {
  if (!node.name().empty()) return node.name();
  return FormatLoc(node.loc());
}

int KernelOfNode(const proto::Schedule &schedule, const proto::Node &node) {
  for (int k = 0; k < schedule.kernels_size(); ++k) {
    const auto &values = schedule.kernels(k).source_values();
    for (const proto::Value &out : node.outputs()) {
      if (std::find(values.begin(), values.end(), out.id()) != values.end()) return k;
    }
  }
  return -1;
}

void WriteProvenanceJson(const std::vector<Stage> &stages, int stage, int node, JsonWriter &w) {
  const std::string key = ProvenanceKey(stages[stage].graph->nodes(node));
  w.BeginObject();
  w.Field("key", key);
  w.Key("stages");
  w.BeginArray();
  for (int s = 0; !key.empty() && s < static_cast<int>(stages.size()); ++s) {
    if (s == stage) continue;
    const proto::Graph &g = *stages[s].graph;
    std::vector<int> matches;
    for (int i = 0; i < g.nodes_size(); ++i) {
      if (ProvenanceKey(g.nodes(i)) == key) matches.push_back(i);
    }
    if (matches.empty()) continue;
    GraphIndex index(g);
    w.BeginObject();
    w.Field("stage", s);
    w.Field("stage_key", stages[s].key);
    w.Field("title", stages[s].title);
    w.Field("relation", s < stage ? "earlier" : "later");
    w.Field("total", static_cast<int>(matches.size()));
    w.Key("nodes");
    w.BeginArray();
    for (size_t m = 0; m < matches.size() && m < static_cast<size_t>(kMaxListed); ++m) {
      w.BeginObject();
      w.Field("index", matches[m]);
      w.Field("id", index.node_id(matches[m]));
      w.Field("op", g.nodes(matches[m]).op());
      w.EndObject();
    }
    w.EndArray();
    // Every kernel that computes one of these nodes (a node recomputed in several kernels is
    // in each), in program order, each once.
    w.Key("kernels");
    w.BeginArray();
    if (stages[s].schedule != nullptr) {
      std::set<int64_t> outputs;
      for (int i : matches) {
        for (const proto::Value& v : g.nodes(i).outputs()) outputs.insert(v.id());
      }
      std::set<int> kernels;
      for (int k = 0; k < stages[s].schedule->kernels_size(); ++k) {
        for (int64_t v : stages[s].schedule->kernels(k).source_values()) {
          if (outputs.count(v) != 0) kernels.insert(k);
        }
      }
      for (int k : kernels) {
        w.BeginObject();
        w.Field("index", k);
        w.Field("name", stages[s].schedule->kernels(k).name());
        w.Field("colour", KernelColour(k));
        w.EndObject();
      }
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
}

}  // namespace coil::inspector
