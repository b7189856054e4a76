// GraphIndex (graph_index.h).
#include "inspector_web/core/graph_index.h"

#include <unordered_set>

namespace coil::inspector {

GraphIndex::GraphIndex(const proto::Graph& graph) : graph_(&graph) {
  constexpr size_t kMaxProblems = 20;
  auto problem = [&](std::string text) {
    if (problems_.size() < kMaxProblems) problems_.push_back(std::move(text));
  };
  auto define = [&](const proto::Value& v, ValueDef def) {
    def.value = &v;
    if (!defs_.emplace(v.id(), def).second) {
      problem("value %" + std::to_string(v.id()) + " is defined more than once");
    }
  };
  for (int i = 0; i < graph.inputs_size(); ++i) {
    define(graph.inputs(i), {ValueDef::kInput, i, 0, nullptr});
  }
  for (int i = 0; i < graph.constants_size(); ++i) {
    define(graph.constants(i).value(), {ValueDef::kConstant, i, 0, nullptr});
  }
  for (int i = 0; i < graph.nodes_size(); ++i) {
    const proto::Node& n = graph.nodes(i);
    for (int o = 0; o < n.outputs_size(); ++o)
      define(n.outputs(o), {ValueDef::kNode, i, o, nullptr});
  }
  for (int i = 0; i < graph.nodes_size(); ++i) {
    const proto::Node& n = graph.nodes(i);
    for (int64_t id : n.inputs()) {
      if (defs_.count(id) == 0) {
        problem("node " + std::to_string(i) + " (" + n.op() + ") reads undefined value %" +
                std::to_string(id));
      }
    }
  }
  for (int64_t id : graph.outputs()) {
    if (defs_.count(id) == 0) problem("graph output %" + std::to_string(id) + " is undefined");
  }

  // Node ids: unique names, else n<index>.
  std::unordered_map<std::string, int> name_count;
  for (const proto::Node& n : graph.nodes()) {
    if (!n.name().empty()) ++name_count[n.name()];
  }
  std::unordered_set<std::string> taken;
  for (const proto::Node& n : graph.nodes()) {
    if (!n.name().empty() && name_count[n.name()] == 1) taken.insert(n.name());
  }
  node_ids_.reserve(graph.nodes_size());
  for (int i = 0; i < graph.nodes_size(); ++i) {
    const std::string& name = graph.nodes(i).name();
    if (!name.empty() && name_count[name] == 1) {
      node_ids_.push_back(name);
      continue;
    }
    std::string id = "n" + std::to_string(i);
    while (!taken.insert(id).second) id += "_";
    node_ids_.push_back(id);
  }
}

const ValueDef* GraphIndex::Find(int64_t id) const {
  auto it = defs_.find(id);
  return it == defs_.end() ? nullptr : &it->second;
}

}  // namespace coil::inspector
