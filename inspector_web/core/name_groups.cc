// BuildNameGroups, DefaultCollapsed, ParseCollapsed, MakeGroupView (name_groups.h).
#include "inspector_web/core/name_groups.h"

#include <queue>
#include <unordered_map>
#include <utility>

namespace coil::inspector {
namespace {

// The name path prefixes of `name`, outermost first: at '/' when it has one, else at '.';
// the whole name is the last prefix.
std::vector<std::string_view> Prefixes(std::string_view name) {
  std::vector<std::string_view> out;
  if (name.empty()) return out;
  const char sep = name.find('/') != std::string_view::npos ? '/' : '.';
  size_t at = name[0] == sep ? 1 : 0;
  while (true) {
    size_t next = name.find(sep, at);
    if (next == std::string_view::npos) break;
    if (next > at) out.push_back(name.substr(0, next));
    at = next + 1;
  }
  if (at < name.size()) out.push_back(name);
  return out;
}

std::string_view LastPart(std::string_view path) {
  const char sep = path.find('/') != std::string_view::npos ? '/' : '.';
  size_t cut = path.rfind(sep);
  return cut == std::string_view::npos ? path : path.substr(cut + 1);
}

}  // namespace

NameGroups BuildNameGroups(const proto::Graph& graph) {
  NameGroups out;
  const int n = graph.nodes_size();
  out.node_group.assign(n, -1);
  std::unordered_map<std::string_view, int> counts;
  std::vector<std::vector<std::string_view>> prefixes(n);
  for (int i = 0; i < n; ++i) {
    prefixes[i] = Prefixes(graph.nodes(i).name());
    for (std::string_view p : prefixes[i]) ++counts[p];
  }
  std::unordered_map<std::string_view, int> index;
  for (int i = 0; i < n; ++i) {
    int parent = -1;
    for (std::string_view p : prefixes[i]) {
      if (counts[p] < 2) continue;
      auto [it, added] = index.emplace(p, static_cast<int>(out.groups.size()));
      if (added) {
        NameGroup g;
        g.path = std::string(p);
        g.parent = parent;
        g.depth = parent < 0 ? 0 : out.groups[parent].depth + 1;
        g.first_node = i;
        if (parent >= 0) ++out.groups[parent].children;
        out.groups.push_back(std::move(g));
      }
      ++out.groups[it->second].nodes;
      parent = it->second;
    }
    out.node_group[i] = parent;
    if (parent >= 0) ++out.groups[parent].own_nodes;
  }
  for (NameGroup& g : out.groups) {
    g.label = std::string(LastPart(g.path)) + " (" + std::to_string(g.nodes) + ")";
  }
  return out;
}

std::vector<bool> DefaultCollapsed(const NameGroups& groups, int inputs, int nodes) {
  const int count = static_cast<int>(groups.groups.size());
  std::vector<bool> collapsed(count, false);
  if (nodes <= kCollapseAbove || count == 0) return collapsed;
  collapsed.assign(count, true);
  // Visible now: inputs, nodes outside every group, top-level groups.
  int visible = inputs;
  for (int g : groups.node_group) visible += g < 0 ? 1 : 0;
  std::priority_queue<std::pair<int, int>> largest;  // (nodes, group) of visible groups
  for (int g = 0; g < count; ++g) {
    if (groups.groups[g].parent < 0) {
      ++visible;
      largest.emplace(groups.groups[g].nodes, g);
    }
  }
  std::vector<std::vector<int>> children(count);
  for (int g = 0; g < count; ++g) {
    if (groups.groups[g].parent >= 0) children[groups.groups[g].parent].push_back(g);
  }
  while (!largest.empty()) {
    const int g = largest.top().second;
    largest.pop();
    const NameGroup& group = groups.groups[g];
    const int after = visible - 1 + group.children + group.own_nodes;
    if (after > kTargetItems) continue;  // too many boxes: stays collapsed (a smaller may fit)
    collapsed[g] = false;
    visible = after;
    for (int c : children[g]) largest.emplace(groups.groups[c].nodes, c);
  }
  return collapsed;
}

std::vector<bool> ParseCollapsed(std::string_view text, const NameGroups& groups, int inputs,
                                 int nodes) {
  if (text == "auto") return DefaultCollapsed(groups, inputs, nodes);
  std::vector<bool> collapsed(groups.groups.size(), false);
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find(',', at);
    if (end == std::string_view::npos) end = text.size();
    long long value = -1;
    bool digits = end > at;
    for (size_t k = at; k < end && digits; ++k) {
      if (text[k] < '0' || text[k] > '9' || k - at > 9) digits = false;
      else value = (value < 0 ? 0 : value * 10) + (text[k] - '0');
    }
    if (digits && value >= 0 && value < static_cast<long long>(collapsed.size())) {
      collapsed[value] = true;
    }
    at = end + 1;
  }
  return collapsed;
}

GroupView MakeGroupView(const NameGroups& groups, const std::vector<bool>& collapsed, int inputs,
                        int nodes) {
  const int count = static_cast<int>(groups.groups.size());
  // The outermost collapsed group at or above each group (parents come first), or -1.
  std::vector<int> shown_as(count, -1);
  for (int g = 0; g < count; ++g) {
    const int p = groups.groups[g].parent;
    shown_as[g] = p >= 0 && shown_as[p] >= 0 ? shown_as[p]
                  : (g < static_cast<int>(collapsed.size()) && collapsed[g]) ? g : -1;
  }
  GroupView view;
  view.items.reserve(inputs + nodes);
  for (int k = 0; k < inputs; ++k) view.items.push_back(k);
  view.item_of_node.assign(nodes, -1);
  std::vector<int> item_of_group(count, -1);
  for (int i = 0; i < nodes; ++i) {
    const int g = groups.node_group[i] >= 0 ? shown_as[groups.node_group[i]] : -1;
    if (g < 0) {
      view.item_of_node[i] = static_cast<int>(view.items.size());
      view.items.push_back(inputs + i);
      continue;
    }
    view.any_collapsed = true;
    if (item_of_group[g] < 0) {
      item_of_group[g] = static_cast<int>(view.items.size());
      view.items.push_back(inputs + nodes + g);
    }
    view.item_of_node[i] = item_of_group[g];
  }
  return view;
}

}  // namespace coil::inspector
