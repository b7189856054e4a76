// Graph <-> proto::Graph conversion. FromProto checks structure only (ids, references,
// types, attributes, cycles); op semantics are the verifier's job.
#include <queue>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ir/io/data_path.h"
#include "ir/check.h"
#include "ir/graph.h"

namespace coil {
namespace {

proto::SourceLocation LocToProto(const SourceLoc& loc) {
  proto::SourceLocation p;
  p.set_file(loc.file);
  p.set_line(loc.line);
  p.set_column(loc.column);
  p.set_function(loc.function);
  return p;
}

SourceLoc LocFromProto(const proto::SourceLocation& p) {
  return SourceLoc{p.file(), p.line(), p.column(), p.function()};
}

void ValueToProto(const Value* v, proto::Value* p) {
  p->set_id(v->id());
  p->set_name(v->name());
  *p->mutable_type() = v->type().ToProto();
}

std::string NodeWhere(int index, const proto::Node& n) {
  std::string s = absl::StrCat("node ", index, " (", n.op().empty() ? "<no op>" : n.op());
  if (!n.name().empty()) absl::StrAppend(&s, " '", n.name(), "'");
  if (!n.loc().file().empty()) absl::StrAppend(&s, " at ", n.loc().file(), ":", n.loc().line());
  return s + ")";
}

absl::Status Err(absl::string_view where, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(where, ": ", what));
}

}  // namespace

proto::Graph Graph::ToProto() const& {
  proto::Graph g;
  g.set_name(name_);
  for (const Value* v : inputs_) ValueToProto(v, g.add_inputs());
  for (const Value* v : constants_) {
    proto::Constant* c = g.add_constants();
    ValueToProto(v, c->mutable_value());
    const ConstantData& d = v->constant();
    if (d.is_external()) {
      c->mutable_external()->set_path(d.external_path);
      c->mutable_external()->set_offset(d.external_offset);
      c->mutable_external()->set_length(d.external_length);
    } else {
      c->set_raw(d.raw);
    }
  }
  for (const auto& n : nodes_) {
    proto::Node* p = g.add_nodes();
    p->set_op(n->op());
    p->set_name(n->name());
    for (const Value* in : n->inputs()) p->add_inputs(in->id());
    for (const auto& [name, attr] : n->attrs()) {
      proto::NamedAttribute* a = p->add_attrs();
      a->set_name(name);
      *a->mutable_value() = AttrToProto(attr);
    }
    for (const Value* out : n->outputs()) ValueToProto(out, p->add_outputs());
    if (!n->loc().empty()) *p->mutable_loc() = LocToProto(n->loc());
  }
  for (const Value* v : outputs_) g.add_outputs(v->id());
  for (const SymbolInfo& s : symbols_) {
    proto::Symbol* p = g.add_symbols();
    p->set_name(s.name);
    p->set_min(s.min);
    p->set_max(s.max);
    p->set_hint(s.hint);
    p->set_value_of(s.value_of);
  }
  for (const GuardInfo& gi : guards_) {
    proto::Guard* p = g.add_guards();
    p->set_relation(gi.relation);
    *p->mutable_lhs() = gi.lhs.ToProto();
    *p->mutable_rhs() = gi.rhs.ToProto();
    p->set_reason(gi.reason);
    if (!gi.loc.empty()) *p->mutable_loc() = LocToProto(gi.loc);
  }
  return g;
}

absl::StatusOr<Graph> Graph::FromProto(const proto::Graph& p) { return FromProtoImpl(p, nullptr); }

absl::StatusOr<Graph> Graph::FromProto(proto::Graph&& p) { return FromProtoImpl(p, &p); }

proto::Graph Graph::ToProto() && {
  // The constants' bytes are moved, not copied: lent out while the rest converts.
  std::vector<std::string> bytes;
  for (Value* v : constants_) bytes.push_back(std::move(v->constant_->raw));
  proto::Graph g = static_cast<const Graph&>(*this).ToProto();
  for (int i = 0; i < g.constants_size(); ++i) {
    if (!constants_[i]->constant_->is_external()) {
      g.mutable_constants(i)->set_raw(std::move(bytes[i]));
    }
  }
  return g;
}

absl::StatusOr<Graph> Graph::FromProtoImpl(const proto::Graph& p, proto::Graph* movable) {
  Graph g(p.name());
  // Pass 1: every defined id, and which node (if any) defines it.
  absl::flat_hash_map<int64_t, int> defined_by;  // id -> node index, -1 for inputs/constants
  auto define = [&](int64_t id, int node, absl::string_view where) -> absl::Status {
    if (id < 0) return Err(where, absl::StrCat("negative value id ", id));
    if (!defined_by.emplace(id, node).second) {
      return Err(where, absl::StrCat("value %", id, " is defined more than once"));
    }
    return absl::OkStatus();
  };
  for (int i = 0; i < p.inputs_size(); ++i) {
    absl::Status s = define(p.inputs(i).id(), -1, absl::StrCat("graph input ", i));
    if (!s.ok()) return s;
  }
  for (int i = 0; i < p.constants_size(); ++i) {
    absl::Status s = define(p.constants(i).value().id(), -1, absl::StrCat("constant ", i));
    if (!s.ok()) return s;
  }
  for (int i = 0; i < p.nodes_size(); ++i) {
    for (const proto::Value& out : p.nodes(i).outputs()) {
      absl::Status s = define(out.id(), i, NodeWhere(i, p.nodes(i)));
      if (!s.ok()) return s;
    }
  }
  // Pass 2: references resolve, and the nodes have a topological order.
  std::vector<int> pending(p.nodes_size(), 0);
  std::vector<std::vector<int>> users(p.nodes_size());
  for (int i = 0; i < p.nodes_size(); ++i) {
    const proto::Node& n = p.nodes(i);
    if (n.op().empty()) return Err(NodeWhere(i, n), "node has no op");
    for (int k = 0; k < n.inputs_size(); ++k) {
      auto it = defined_by.find(n.inputs(k));
      if (it == defined_by.end()) {
        return Err(NodeWhere(i, n),
                   absl::StrCat("input ", k, " refers to undefined value %", n.inputs(k)));
      }
      if (it->second >= 0) {
        ++pending[i];
        users[it->second].push_back(i);
      }
    }
  }
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (int i = 0; i < p.nodes_size(); ++i) {
    if (pending[i] == 0) ready.push(i);
  }
  std::vector<int> order;
  while (!ready.empty()) {
    int i = ready.top();
    ready.pop();
    order.push_back(i);
    for (int u : users[i]) {
      if (--pending[u] == 0) ready.push(u);
    }
  }
  if (static_cast<int>(order.size()) != p.nodes_size()) {
    for (int i = 0; i < p.nodes_size(); ++i) {
      if (pending[i] > 0) return Err(NodeWhere(i, p.nodes(i)), "node is on a cycle");
    }
  }
  // Pass 3: build.
  auto type_of = [](const proto::Value& v, absl::string_view where) -> absl::StatusOr<TensorType> {
    absl::StatusOr<TensorType> t = TensorType::FromProto(v.type());
    if (!t.ok()) return Err(where, absl::StrCat("value %", v.id(), ": ", t.status().message()));
    return t;
  };
  for (int i = 0; i < p.inputs_size(); ++i) {
    absl::StatusOr<TensorType> t = type_of(p.inputs(i), absl::StrCat("graph input ", i));
    if (!t.ok()) return t.status();
    Value* v = g.NewValue(Value::Kind::kInput, *std::move(t), p.inputs(i).id());
    v->name_ = p.inputs(i).name();
    g.inputs_.push_back(v);
  }
  for (int i = 0; i < p.constants_size(); ++i) {
    const proto::Constant& c = p.constants(i);
    std::string where = absl::StrCat("constant ", i);
    absl::StatusOr<TensorType> t = type_of(c.value(), where);
    if (!t.ok()) return t.status();
    if (!t->IsStatic()) return Err(where, "constant has a symbolic shape");
    ConstantData data;
    if (c.data_case() == proto::Constant::kByReference) {
      return Err(where, absl::StrCat("constant %", c.value().id(),
                                     " is stored by reference (its bytes are in another artifact):"
                                     " resolve it first (ir/constant_refs.h)"));
    }
    if (c.has_external()) {
      if (c.external().path().empty()) return Err(where, "external data has no path");
      // The same rules as the ONNX importer's (ir/io/data_path.h): a graph reads only files in
      // its own folder.
      if (absl::Status s = CheckDataPath(c.external().path()); !s.ok()) {
        return Err(absl::StrCat("constant %", c.value().id()), s.message());
      }
      if (c.external().offset() < 0 || c.external().length() < 0) {
        return Err(where, "external data has a negative offset or length");
      }
      data.external_path = c.external().path();
      data.external_offset = c.external().offset();
      data.external_length = c.external().length();
    } else if (movable != nullptr) {
      data.raw = std::move(*movable->mutable_constants(i)->mutable_raw());
    } else {
      data.raw = c.raw();
    }
    // Multiplied with overflow checks: the dimensions come from the (untrusted) proto.
    int64_t expected = ElementSize(t->dtype);
    for (const SymExpr& d : t->shape) {
      if (__builtin_mul_overflow(expected, d.constant(), &expected)) {
        return Err(where, absl::StrCat("constant %", c.value().id(), " of type ", t->ToString(),
                                       " is too large"));
      }
    }
    int64_t actual = data.is_external() ? data.external_length : static_cast<int64_t>(data.raw.size());
    if (actual != expected) {
      return Err(where, absl::StrCat("constant %", c.value().id(), " of type ", t->ToString(),
                                     " needs ", expected, " bytes, has ", actual));
    }
    Value* v = g.NewValue(Value::Kind::kConstant, *std::move(t), c.value().id());
    v->name_ = c.value().name();
    v->constant_ = std::make_unique<ConstantData>(std::move(data));
    g.constants_.push_back(v);
  }
  for (int i : order) {
    const proto::Node& n = p.nodes(i);
    std::string where = NodeWhere(i, n);
    std::vector<Value*> inputs;
    for (int64_t id : n.inputs()) inputs.push_back(g.FindValue(id));
    AttrMap attrs;
    for (const proto::NamedAttribute& a : n.attrs()) {
      if (a.name().empty()) return Err(where, "attribute with an empty name");
      absl::StatusOr<Attribute> v = AttrFromProto(a.value());
      if (!v.ok()) {
        return Err(where, absl::StrCat("attribute '", a.name(), "': ", v.status().message()));
      }
      if (!attrs.emplace(a.name(), *std::move(v)).second) {
        return Err(where, absl::StrCat("attribute '", a.name(), "' given twice"));
      }
    }
    std::vector<TensorType> types;
    std::vector<int64_t> ids;
    for (const proto::Value& out : n.outputs()) {
      absl::StatusOr<TensorType> t = type_of(out, where);
      if (!t.ok()) return t.status();
      types.push_back(*std::move(t));
      ids.push_back(out.id());
    }
    Node* node = g.MakeNode(n.op(), std::move(inputs), std::move(attrs), std::move(types), ids);
    node->name_ = n.name();
    node->loc_ = LocFromProto(n.loc());
    for (int k = 0; k < n.outputs_size(); ++k) node->outputs_[k]->name_ = n.outputs(k).name();
  }
  for (int k = 0; k < p.outputs_size(); ++k) {
    Value* v = g.FindValue(p.outputs(k));
    if (v == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("graph output ", k, " refers to undefined value %", p.outputs(k)));
    }
    g.outputs_.push_back(v);
  }
  for (const proto::Symbol& s : p.symbols()) {
    if (s.name().empty()) return absl::InvalidArgumentError("symbol with an empty name");
    g.symbols_.push_back(SymbolInfo{s.name(), s.min(), s.max(), s.hint(), s.value_of()});
  }
  for (int k = 0; k < p.guards_size(); ++k) {
    const proto::Guard& gp = p.guards(k);
    absl::StatusOr<SymExpr> lhs = SymExpr::FromProto(gp.lhs());
    absl::StatusOr<SymExpr> rhs = SymExpr::FromProto(gp.rhs());
    if (!lhs.ok() || !rhs.ok() || gp.relation() == proto::Guard::RELATION_UNSPECIFIED ||
        !proto::Guard::Relation_IsValid(gp.relation())) {
      return absl::InvalidArgumentError(absl::StrCat("guard ", k, " is malformed"));
    }
    g.guards_.push_back(GuardInfo{gp.relation(), *lhs, *rhs, gp.reason(), LocFromProto(gp.loc())});
  }
  return g;
}

Graph Graph::Clone() const {
  absl::StatusOr<Graph> g = FromProto(ToProto());
  COIL_CHECK(g.ok()) << g.status().ToString();
  return *std::move(g);
}

}  // namespace coil
