// The graph text printer (grammar in printer.h).
#include "ir/printer.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace coil {
namespace {

// Words the parser reads as keywords where a name could also stand; names equal to one print
// quoted.
constexpr absl::string_view kKeywords[] = {"graph", "symbol", "guard", "constant", "return",
                                           "name",  "loc",    "dense", "external"};

bool IsBareName(absl::string_view s) {
  if (s.empty()) return false;
  auto start = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (!start(s[0])) return false;
  for (char c : s) {
    if (!start(c) && !(c >= '0' && c <= '9') && c != '.') return false;
  }
  for (absl::string_view k : kKeywords) {
    if (s == k) return false;
  }
  return true;
}

std::string Quote(absl::string_view s) { return absl::StrCat("\"", absl::CEscape(s), "\""); }

std::string NameText(absl::string_view s) { return IsBareName(s) ? std::string(s) : Quote(s); }

void AppendExprs(std::string& out, const std::vector<SymExpr>& exprs) {
  out += absl::StrJoin(exprs, ", ", [](std::string* o, const SymExpr& e) {
    o->append(e.ToString());
  });
}

void AppendType(std::string& out, const TensorType& t) {
  absl::StrAppend(&out, DTypeName(t.dtype), "[");
  AppendExprs(out, t.shape);
  out += "]";
  if (!t.strides.empty()) {
    out += "{";
    AppendExprs(out, t.strides);
    out += "}";
  }
  if (t.device != Device{}) {
    absl::StrAppend(&out, "@", t.device.kind == proto::Device::CUDA ? "cuda" : "cpu", ":",
                    t.device.index);
  }
}

void AppendDef(std::string& out, const Value* v) {
  absl::StrAppend(&out, "%", v->id());
  if (!v->name().empty()) absl::StrAppend(&out, " ", Quote(v->name()));
  out += ": ";
  AppendType(out, v->type());
}

void AppendLoc(std::string& out, const SourceLoc& loc) {
  if (loc.file.empty() && loc.line == 0 && loc.column == 0 && loc.function.empty()) return;
  absl::StrAppend(&out, " loc(", Quote(loc.file), ":", loc.line, ":", loc.column);
  if (!loc.function.empty()) absl::StrAppend(&out, " in ", Quote(loc.function));
  out += ")";
}

absl::string_view RelationText(proto::Guard::Relation r) {
  switch (r) {
    case proto::Guard::EQ: return "==";
    case proto::Guard::NE: return "!=";
    case proto::Guard::LT: return "<";
    case proto::Guard::LE: return "<=";
    default: return "?";
  }
}

void AppendValueRefs(std::string& out, absl::Span<Value* const> values) {
  out += absl::StrJoin(values, ", ", [](std::string* o, const Value* v) {
    absl::StrAppend(o, "%", v->id());
  });
}

void AppendNode(std::string& out, const Node* n) {
  out += "  ";
  for (int i = 0; i < n->num_outputs(); ++i) {
    if (i > 0) out += ", ";
    AppendDef(out, n->output(i));
  }
  if (n->num_outputs() > 0) out += " = ";
  absl::StrAppend(&out, NameText(n->op()), "(");
  AppendValueRefs(out, n->inputs());
  out += ")";
  if (!n->attrs().empty()) {
    out += " {";
    bool first = true;
    for (const auto& [name, value] : n->attrs()) {
      if (!first) out += ", ";
      first = false;
      absl::StrAppend(&out, NameText(name), " = ", AttrToString(value));
    }
    out += "}";
  }
  if (!n->name().empty()) absl::StrAppend(&out, " name ", Quote(n->name()));
  AppendLoc(out, n->loc());
  out += "\n";
}

}  // namespace

std::string PrintGraph(const Graph& graph) {
  std::string out = absl::StrCat("graph @", NameText(graph.name()), "(");
  for (size_t i = 0; i < graph.inputs().size(); ++i) {
    if (i > 0) out += ", ";
    AppendDef(out, graph.inputs()[i]);
  }
  out += ") {\n";
  for (const SymbolInfo& s : graph.symbols()) {
    absl::StrAppend(&out, "  symbol ", NameText(s.name), " min ", s.min, " max ", s.max,
                    " hint ", s.hint);
    if (!s.value_of.empty()) absl::StrAppend(&out, " value_of ", Quote(s.value_of));
    out += "\n";
  }
  for (const GuardInfo& g : graph.guards()) {
    absl::StrAppend(&out, "  guard ", g.lhs.ToString(), " ", RelationText(g.relation), " ",
                    g.rhs.ToString());
    if (!g.reason.empty()) absl::StrAppend(&out, " ", Quote(g.reason));
    AppendLoc(out, g.loc);
    out += "\n";
  }
  for (const Value* c : graph.constants()) {
    out += "  ";
    AppendDef(out, c);
    const ConstantData& d = c->constant();
    if (d.is_external()) {
      absl::StrAppend(&out, " = constant external ", Quote(d.external_path), " offset ",
                      d.external_offset, " length ", d.external_length, "\n");
    } else {
      absl::StrAppend(&out, " = constant dense \"", absl::BytesToHexString(d.raw), "\"\n");
    }
  }
  for (const Node* n : graph.nodes()) AppendNode(out, n);
  out += "  return";
  if (!graph.outputs().empty()) out += " ";
  AppendValueRefs(out, graph.outputs());
  out += "\n}\n";
  return out;
}

}  // namespace coil
