// NameGroups: a stage's nodes grouped by their name paths (the module hierarchy), and which
// groups the graph view draws collapsed, each as one box standing for all its nodes.
//
//   NameGroups groups = BuildNameGroups(graph);
//   // "/blocks.0/attn/MatMul" (ONNX: split at '/') is in "/blocks.0", "/blocks.0/attn" and,
//   // when prims made several nodes of it, "/blocks.0/attn/MatMul"; capture's
//   // "layers.3.attn.q_proj" (no '/': split at '.') in "layers", "layers.3", ...
//   std::vector<bool> collapsed = DefaultCollapsed(groups, graph.nodes_size());
//   GroupView view = MakeGroupView(groups, collapsed, graph.inputs_size(), graph.nodes_size());
//
// A group is every name path prefix that two or more nodes share (a prefix of one node says
// nothing its node does not). Groups are numbered by their first node, so a parent comes
// before its children. A collapsed group hides its nodes and its descendants; the view shows
// the outermost collapsed group containing a node in its place.
#ifndef COIL_INSPECTOR_WEB_CORE_NAME_GROUPS_H_
#define COIL_INSPECTOR_WEB_CORE_NAME_GROUPS_H_

#include <string>
#include <string_view>
#include <vector>

#include "ir/proto/graph.pb.h"

namespace coil::inspector {

struct NameGroup {
  std::string path;   // "/blocks.0/attn"
  std::string label;  // what its box shows: the last part and the node count, "attn (41)"
  int parent = -1;    // the enclosing group, or -1
  int depth = 0;      // 0 for a top-level group
  int nodes = 0;      // nodes inside it, descendants' included
  int first_node = 0;
  int children = 0;     // child groups
  int own_nodes = 0;    // nodes whose innermost group this is
};

struct NameGroups {
  std::vector<NameGroup> groups;
  std::vector<int> node_group;  // per node: its innermost group, or -1
};

NameGroups BuildNameGroups(const proto::Graph& graph);

// Graphs of more than kCollapseAbove nodes open collapsed: every group collapsed, then the
// largest ones expanded while the view keeps at most kTargetItems boxes (inputs included), so
// a GPT or a ResNet opens on its top-level modules. Smaller graphs open expanded.
inline constexpr int kCollapseAbove = 400;
inline constexpr int kTargetItems = 120;
std::vector<bool> DefaultCollapsed(const NameGroups& groups, int inputs, int nodes);

// Parses "3,5,7" (group indices) into a collapsed set; "auto" gives DefaultCollapsed.
// Indices out of range are ignored (the page asks with indices from the same stage).
std::vector<bool> ParseCollapsed(std::string_view text, const NameGroups& groups, int inputs,
                                 int nodes);

// What the view draws: items are the graph inputs (0..I-1), then visible nodes and collapsed
// groups in node order (a group where its first node was). Codes: k < I input k, I + i node
// i, I + N + g group g.
struct GroupView {
  std::vector<int> items;         // codes, in view order
  std::vector<int> item_of_node;  // per node: the view item showing it
  bool any_collapsed = false;
};

GroupView MakeGroupView(const NameGroups& groups, const std::vector<bool>& collapsed, int inputs,
                        int nodes);

}  // namespace coil::inspector

#endif  // COIL_INSPECTOR_WEB_CORE_NAME_GROUPS_H_
