// WriteNodeJson (node_json.h).
#include "inspector_web/core/node_json.h"

#include <algorithm>
#include <vector>

#include "inspector_web/core/check.h"
#include "inspector_web/core/format.h"
#include "inspector_web/core/provenance.h"
#include "inspector_web/core/schedule_json.h"

namespace coil::inspector {
namespace {

const char* DefKindName(const ValueDef* def) {
  if (def == nullptr) return "undefined";
  switch (def->kind) {
    case ValueDef::kInput: return "input";
    case ValueDef::kConstant: return "constant";
    case ValueDef::kNode: return "node";
  }
  return "undefined";
}

}  // namespace

void WriteNodeJson(const Stage& stage, const GraphIndex& index, int node, JsonWriter& w) {
  const proto::Graph& g = index.graph();
  INSPECTOR_CHECK(node >= 0 && node < g.nodes_size(), "node index out of range");
  const proto::Node& n = g.nodes(node);
  w.BeginObject();
  w.Field("index", node);
  w.Field("id", index.node_id(node));
  w.Field("op", n.op());
  w.Field("name", n.name());
  w.Field("loc", FormatLoc(n.loc()));

  w.Key("inputs");
  w.BeginArray();
  for (int64_t id : n.inputs()) {
    const ValueDef* def = index.Find(id);
    w.BeginObject();
    w.Field("value", id);
    w.Field("name", def != nullptr ? def->value->name() : std::string());
    w.Field("type", def != nullptr ? FormatType(def->value->type()) : std::string("?"));
    w.Field("def", DefKindName(def));
    bool from_node = def != nullptr && def->kind == ValueDef::kNode;
    w.Field("node", from_node ? def->index : -1);
    w.Field("node_id", from_node ? index.node_id(def->index) : std::string());
    w.EndObject();
  }
  w.EndArray();

  w.Key("outputs");
  w.BeginArray();
  for (const proto::Value& v : n.outputs()) {
    w.BeginObject();
    w.Field("value", v.id());
    w.Field("name", v.name());
    w.Field("type", FormatType(v.type()));
    bool out = std::find(g.outputs().begin(), g.outputs().end(), v.id()) != g.outputs().end();
    w.Field("graph_output", out);
    w.EndObject();
  }
  w.EndArray();

  w.Key("attrs");
  w.BeginArray();
  for (const proto::NamedAttribute& a : n.attrs()) {
    w.BeginArray();
    w.String(a.name());
    w.String(FormatAttribute(a.value()));
    w.EndArray();
  }
  w.EndArray();

  // Users: nodes reading any of this node's outputs, in graph order, each once.
  w.Key("users");
  w.BeginArray();
  for (int u = 0; u < g.nodes_size(); ++u) {
    for (int64_t id : g.nodes(u).inputs()) {
      const ValueDef* def = index.Find(id);
      if (def != nullptr && def->kind == ValueDef::kNode && def->index == node) {
        w.BeginObject();
        w.Field("node", u);
        w.Field("node_id", index.node_id(u));
        w.EndObject();
        break;
      }
    }
  }
  w.EndArray();

  w.Key("kernel");
  int k = stage.schedule != nullptr ? KernelOfNode(*stage.schedule, n) : -1;
  if (k < 0) {
    w.Null();
  } else {
    const proto::Kernel& kernel = stage.schedule->kernels(k);
    w.BeginObject();
    w.Field("index", k);
    w.Field("name", kernel.name());
    w.Field("kind", KernelKindName(kernel.kind()));
    w.Field("extern_op", kernel.extern_op());
    w.Field("colour", KernelColour(k));
    w.EndObject();
  }

  bool saved = false;
  if (stage.autograd != nullptr && stage.autograd_part == "joint") {
    for (const proto::Value& v : n.outputs()) {
      const auto& s = stage.autograd->saved_values();
      saved = saved || std::find(s.begin(), s.end(), v.id()) != s.end();
    }
  }
  w.Field("saved", saved);
  w.EndObject();
}

}  // namespace coil::inspector
