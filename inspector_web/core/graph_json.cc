// WriteGraphJson (graph_json.h).
#include "inspector_web/core/graph_json.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "inspector_web/core/format.h"
#include "inspector_web/core/layout.h"

namespace coil::inspector {
namespace {

// Pixel values are written with one decimal: enough for SVG, and a 5,000-node layout stays
// small.

int64_t ConstantBytes(const proto::Constant& c) {
  if (c.has_external()) return c.external().length();
  // Stored once per report: the bytes are in an earlier stage's artifact.
  if (c.has_by_reference()) return c.by_reference().length();
  return static_cast<int64_t>(c.raw().size());
}

void WriteValue(const proto::Value& v, JsonWriter& w) {
  w.BeginObject();
  w.Field("value", v.id());
  w.Field("name", v.name());
  w.Field("type", FormatType(v.type()));
  w.EndObject();
}

}  // namespace

void WriteViewLayout(const GraphIndex& index, const NameGroups& groups, const GroupView& view,
                     JsonWriter& w) {
  const proto::Graph& g = index.graph();
  const int inputs = g.inputs_size(), nodes = g.nodes_size();
  LayoutInput in;
  in.widths.reserve(view.items.size());
  for (int code : view.items) {
    if (code < inputs) {
      in.widths.push_back(LabelWidth(std::max<size_t>(g.inputs(code).name().size(), 4)));
    } else if (code < inputs + nodes) {
      in.widths.push_back(LabelWidth(NodeLabel(g.nodes(code - inputs).op()).size()));
    } else {
      in.widths.push_back(LabelWidth(groups.groups[code - inputs - nodes].label.size() + 2));
    }
  }
  // Edges between view items: a collapsed group's edges are its nodes' edges to the outside,
  // one per (from, to) pair of items; edges inside a group are not drawn.
  std::vector<int64_t> edge_values;
  std::unordered_set<int64_t> seen;  // from * items + to, for collapsed views
  const int64_t item_count = static_cast<int64_t>(view.items.size());
  for (int i = 0; i < nodes; ++i) {
    const int to = view.item_of_node[i];
    for (int64_t id : g.nodes(i).inputs()) {
      const ValueDef* def = index.Find(id);
      if (def == nullptr || def->kind == ValueDef::kConstant) continue;
      int from = def->kind == ValueDef::kInput ? def->index : view.item_of_node[def->index];
      if (view.any_collapsed) {
        if (from == to) continue;
        if (!seen.insert(from * item_count + to).second) continue;
      }
      in.edges.emplace_back(from, to);
      edge_values.push_back(id);
    }
  }
  Layout layout = LayeredLayout(in);
  w.Key("layout");
  w.BeginObject();
  w.Key("width");
  w.Decimal1(layout.width);
  w.Key("height");
  w.Decimal1(layout.height);
  w.Field("layers", layout.layers);
  w.Field("crossings", layout.crossings);
  w.Field("dummies", layout.dummies);
  w.Key("boxes");
  w.BeginArray();
  for (size_t i = 0; i < in.widths.size(); ++i) {
    w.Decimal1(layout.x[i]);
    w.Decimal1(layout.y[i]);
    w.Decimal1(in.widths[i]);
    w.Decimal1(in.height);
  }
  w.EndArray();
  if (view.any_collapsed) {
    w.Key("items");
    w.BeginArray();
    for (int code : view.items) w.Int(code);
    w.EndArray();
  }
  w.Key("edges");
  w.BeginArray();
  // Each drawn edge's value type, as an index into "types" (distinct type texts), so edges
  // can be labelled with shapes without repeating the text.
  std::vector<std::string> types;
  std::unordered_map<std::string, int> type_index;
  std::vector<int> edge_type;
  for (size_t k = 0; k < in.edges.size(); ++k) {
    if (layout.edges[k].empty()) continue;
    w.BeginArray();
    w.Int(in.edges[k].first);
    w.Int(in.edges[k].second);
    w.Int(edge_values[k]);
    for (double p : layout.edges[k]) w.Decimal1(p);
    w.EndArray();
    const ValueDef* def = index.Find(edge_values[k]);
    std::string text = def != nullptr ? FormatType(def->value->type()) : std::string("?");
    auto [it, added] = type_index.emplace(text, static_cast<int>(types.size()));
    if (added) types.push_back(text);
    edge_type.push_back(it->second);
  }
  w.EndArray();
  w.Key("types");
  w.BeginArray();
  for (const std::string& t : types) w.String(t);
  w.EndArray();
  w.Key("edge_type");
  w.BeginArray();
  for (int t : edge_type) w.Int(t);
  w.EndArray();
  w.EndObject();
}

void WriteNameGroupsJson(const NameGroups& groups, const std::vector<bool>& collapsed,
                         JsonWriter& w) {
  w.Key("groups");
  w.BeginArray();
  for (const NameGroup& group : groups.groups) {
    w.BeginObject();
    w.Field("path", group.path);
    w.Field("label", group.label);
    w.Field("parent", group.parent);
    w.Field("depth", group.depth);
    w.Field("nodes", group.nodes);
    w.Field("first", group.first_node);
    w.EndObject();
  }
  w.EndArray();
  w.Key("node_group");
  w.BeginArray();
  for (int g : groups.node_group) w.Int(g);
  w.EndArray();
  w.Key("collapsed");
  w.BeginArray();
  for (size_t g = 0; g < collapsed.size(); ++g) {
    if (collapsed[g]) w.Int(static_cast<int>(g));
  }
  w.EndArray();
}

std::string NodeLabel(const std::string& op) {
  size_t dot = op.find('.');
  if (dot == std::string::npos || dot + 1 == op.size()) return op;
  return op.substr(dot + 1);
}

double LabelWidth(size_t chars) {
  constexpr double kCharWidth = 7.3;  // 12 px monospace
  return std::max(40.0, std::ceil(chars * kCharWidth) + 16);
}

void WriteGraphJson(const GraphIndex& index, JsonWriter& w) {
  const proto::Graph& g = index.graph();
  w.BeginObject();
  w.Field("name", g.name());
  w.Field("node_count", g.nodes_size());
  w.Key("inputs");
  w.BeginArray();
  for (const proto::Value& v : g.inputs()) WriteValue(v, w);
  w.EndArray();
  w.Key("constants");
  w.BeginArray();
  for (const proto::Constant& c : g.constants()) {
    w.BeginObject();
    w.Field("value", c.value().id());
    w.Field("name", c.value().name());
    w.Field("type", FormatType(c.value().type()));
    w.Field("bytes", ConstantBytes(c));
    w.Field("external", c.has_external() ? c.external().path() : std::string());
    w.EndObject();
  }
  w.EndArray();
  w.Key("outputs");
  w.BeginArray();
  for (int64_t id : g.outputs()) w.Int(id);
  w.EndArray();
  w.Key("output_nodes");
  w.BeginArray();
  std::vector<bool> is_output(g.nodes_size(), false);
  for (int64_t id : g.outputs()) {
    const ValueDef* def = index.Find(id);
    if (def != nullptr && def->kind == ValueDef::kNode) is_output[def->index] = true;
  }
  for (int i = 0; i < g.nodes_size(); ++i) {
    if (is_output[i]) w.Int(i);
  }
  w.EndArray();
  w.Key("symbols");
  w.BeginArray();
  for (const proto::Symbol& s : g.symbols()) {
    w.BeginObject();
    w.Field("name", s.name());
    w.Field("min", s.min());
    w.Field("max", s.max());
    w.Field("hint", s.hint());
    w.EndObject();
  }
  w.EndArray();
  w.Key("guards");
  w.BeginArray();
  for (const proto::Guard& guard : g.guards()) {
    w.BeginObject();
    w.Field("text", GuardText(guard));
    // A check without a relation states itself in its reason.
    w.Field("relation", guard.relation() != proto::Guard::RELATION_UNSPECIFIED);
    w.Field("reason", guard.reason());
    w.Field("loc", FormatLoc(guard.loc()));
    w.EndObject();
  }
  w.EndArray();
  w.Key("nodes");
  w.BeginArray();
  for (int i = 0; i < g.nodes_size(); ++i) {
    const proto::Node& n = g.nodes(i);
    w.BeginObject();
    w.Field("id", index.node_id(i));
    w.Field("op", n.op());
    w.Field("name", n.name());
    w.Field("loc", FormatLoc(n.loc()));
    w.EndObject();
  }
  w.EndArray();
  w.Key("problems");
  w.BeginArray();
  for (const std::string& p : index.problems()) w.String(p);
  w.EndArray();
  // Name path groups, and the layout of the view the stage opens with (name_groups.h).
  NameGroups groups = BuildNameGroups(g);
  std::vector<bool> collapsed = DefaultCollapsed(groups, g.inputs_size(), g.nodes_size());
  WriteNameGroupsJson(groups, collapsed, w);
  WriteViewLayout(index, groups, MakeGroupView(groups, collapsed, g.inputs_size(), g.nodes_size()),
                  w);
  w.EndObject();
}

}  // namespace coil::inspector
