// GraphIndex: what the page needs to look things up in a proto::Graph: where each value is
// defined, a unique id per node (for `data-node-id` and deep links), and which references
// are broken.
//
// Node ids: the node's name when it has one that no other node shares, else "n<index>"
// ("n<index>_" and so on if a name already took that).
#ifndef COIL_INSPECTOR_WEB_CORE_GRAPH_INDEX_H_
#define COIL_INSPECTOR_WEB_CORE_GRAPH_INDEX_H_

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/proto/graph.pb.h"

namespace coil::inspector {

struct ValueDef {
  enum Kind { kInput, kConstant, kNode };
  Kind kind = kInput;
  int index = 0;   // into Graph.inputs / Graph.constants / Graph.nodes
  int output = 0;  // kNode: which output of the node
  const proto::Value* value = nullptr;
};

class GraphIndex {
 public:
  explicit GraphIndex(const proto::Graph& graph);

  const proto::Graph& graph() const { return *graph_; }
  // The definition of value `id`, or null if the graph defines no such value.
  const ValueDef* Find(int64_t id) const;
  const std::string& node_id(int node) const { return node_ids_[node]; }
  // Data problems found while indexing ("value %7 is defined twice", "node 3 (aten.add)
  // reads undefined value %99"), for the page to show; the graph is still drawn.
  const std::vector<std::string>& problems() const { return problems_; }

 private:
  const proto::Graph* graph_;
  std::unordered_map<int64_t, ValueDef> defs_;
  std::vector<std::string> node_ids_;
  std::vector<std::string> problems_;
};

}  // namespace coil::inspector

#endif  // COIL_INSPECTOR_WEB_CORE_GRAPH_INDEX_H_
