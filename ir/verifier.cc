// The graph verifier (see verifier.h for the list of checks).
#include "ir/verifier.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/functional/function_ref.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/io/data_path.h"

namespace coil {
namespace {

absl::Status NodeError(const Node* n, int index, absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("node ", index, " ", n->Describe(), ": ", what));
}

std::string TypeList(absl::Span<const TensorType> types) {
  return absl::StrJoin(types, ", ", [](std::string* o, const TensorType& t) {
    o->append(t.ToString());
  });
}

// Messages are built only for errors: the verifier runs several times per compile over every
// value, and building "output %12 of type f32[...]" for each one was most of its time.
using What = absl::FunctionRef<std::string()>;

// A type whose byte size does not fit in int64 cannot exist; rejecting it here keeps meta
// functions (whose SymExpr arithmetic CHECK-fails on overflow) from multiplying its dimensions.
// Static shapes multiply with checked int64 arithmetic; a symbolic one goes through
// SymExpr::FromProto, which multiplies with overflow checks and reports an overflow as an error
// (once per distinct shape and element size: most values share a few shapes).
class SizeChecker {
 public:
  absl::Status Check(const TensorType& t, What what) {
    if (!IsValidDType(t.dtype)) return absl::OkStatus();
    const int64_t element = ElementSize(t.dtype);
    int64_t bytes = element;
    bool is_static = true, overflow = false;
    for (const SymExpr& d : t.shape) {
      std::optional<int64_t> c = d.AsConstant();
      if (!c.has_value()) {
        is_static = false;
        break;
      }
      overflow = overflow || __builtin_mul_overflow(bytes, *c, &bytes);
    }
    bool fits = !overflow;
    if (!is_static) {
      auto [it, inserted] = symbolic_.try_emplace(std::make_pair(element, t.shape), true);
      if (inserted) it->second = Fits(element, t.shape);
      fits = it->second;
    }
    if (fits) return absl::OkStatus();
    return absl::InvalidArgumentError(
        absl::StrCat(what(), " has type ", t.ToString(), " whose size overflows int64"));
  }

 private:
  static bool Fits(int64_t element, const std::vector<SymExpr>& shape) {
    proto::SymExpr bytes;
    bytes.set_kind(proto::SymExpr::MUL);
    bytes.add_args()->set_kind(proto::SymExpr::CONST);
    bytes.mutable_args(0)->set_value(element);
    for (const SymExpr& d : shape) *bytes.add_args() = d.ToProto();
    return SymExpr::FromProto(bytes).ok();
  }

  absl::flat_hash_map<std::pair<int64_t, std::vector<SymExpr>>, bool> symbolic_;
};

// The graph's declared symbols (Graph::symbols(), `symbol NAME ...` lines in text IR). Code
// generation binds only these at run time, so a shape or attribute using any other symbol
// cannot be compiled; the verifier refuses it up front.
class DeclaredSymbols {
 public:
  explicit DeclaredSymbols(const Graph& graph) {
    for (const SymbolInfo& s : graph.symbols()) names_.insert(s.name);
    // Runners bind a symbol from an input dimension that is that symbol alone (BindSymbols).
    for (const Value* in : graph.inputs()) {
      for (const SymExpr& d : in->type().shape) {
        if (d.is_symbol()) bound_.insert(d.ToString());
      }
    }
    // Value symbols are bound from a 0-d int64 input's value (SymbolInfo::value_of).
    for (const SymbolInfo& s : graph.symbols()) {
      if (s.value_of.empty()) continue;
      value_syms_.insert(s.name);
      bound_.insert(s.name);
    }
  }

  // OK when every value symbol names a 0-d int64 graph input and no shape binds it too.
  static absl::Status CheckValueSymbols(const Graph& graph) {
    for (const SymbolInfo& s : graph.symbols()) {
      if (s.value_of.empty()) continue;
      const Value* source = nullptr;
      for (const Value* in : graph.inputs()) {
        if (in->name() == s.value_of) source = in;
      }
      if (source == nullptr) {
        return absl::InvalidArgumentError(absl::StrCat(
            "symbol '", s.name, "' is bound by the value of input '", s.value_of,
            "', which the graph does not have"));
      }
      if (source->type().dtype != proto::INT64 || source->type().rank() != 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "symbol '", s.name, "' is bound by the value of input '", s.value_of, "' (%",
            source->id(), "), which is ", source->type().ToString(), ", not a 0-d int64 tensor"));
      }
    }
    return absl::OkStatus();
  }

  // OK when every symbol of `e` is declared and bound by an input; otherwise InvalidArgument
  // "WHAT uses symbol 't', which the graph does not declare (declared: s)" or "..., which no
  // graph input binds ...". Expressions found fine are remembered (most repeat).
  absl::Status Check(const SymExpr& e, What what) {
    if (e.is_constant() || fine_.contains(e)) return absl::OkStatus();
    for (const std::string& name : e.Symbols()) {
      if (!names_.contains(name)) {
        return absl::InvalidArgumentError(absl::StrCat(what(), " uses symbol '", name,
                                                       "', which the graph does not declare (",
                                                       Declared(), ")"));
      }
      if (!bound_.contains(name)) {
        return absl::InvalidArgumentError(absl::StrCat(
            what(), " uses symbol '", name,
            "', which no graph input binds (a symbol takes its value at run time from an input "
            "dimension that is the symbol alone)"));
      }
    }
    fine_.insert(e);
    return absl::OkStatus();
  }

  absl::Status Check(const TensorType& t, What what) {
    for (const SymExpr& d : t.shape) {
      if (!value_syms_.empty() && !d.is_constant()) {
        for (const std::string& name : d.Symbols()) {
          if (value_syms_.contains(name)) {
            return absl::InvalidArgumentError(absl::StrCat(
                what(), " of type ", t.ToString(), " uses symbol '", name,
                "' in a shape, but it is bound from an input's value (sizes come from shapes)"));
          }
        }
      }
      if (absl::Status s =
              Check(d, [&] { return absl::StrCat(what(), " of type ", t.ToString()); });
          !s.ok()) {
        return s;
      }
    }
    return absl::OkStatus();
  }

  absl::Status CheckAttrs(const AttrMap& attrs) {
    for (const auto& [name, value] : attrs) {
      auto what = [&, &name = name, &value = value] {
        return absl::StrCat("attribute '", name, "' = ", AttrToString(value));
      };
      if (const SymExpr* e = std::get_if<SymExpr>(&value)) {
        if (absl::Status s = Check(*e, what); !s.ok()) return s;
      } else if (const SymList* list = std::get_if<SymList>(&value)) {
        for (const SymExpr& item : *list) {
          if (absl::Status s = Check(item, what); !s.ok()) return s;
        }
      }
    }
    return absl::OkStatus();
  }

 private:
  std::string Declared() const {
    std::vector<std::string> sorted(names_.begin(), names_.end());
    std::sort(sorted.begin(), sorted.end());
    return sorted.empty() ? "the graph declares no symbols"
                          : absl::StrCat("declared: ", absl::StrJoin(sorted, ", "));
  }

  absl::flat_hash_set<std::string> names_;
  absl::flat_hash_set<std::string> bound_;
  absl::flat_hash_set<std::string> value_syms_;
  absl::flat_hash_set<SymExpr> fine_;
};

}  // namespace

absl::Status Verify(const Graph& graph, const OpRegistry& registry) {
  if (absl::Status s = DeclaredSymbols::CheckValueSymbols(graph); !s.ok()) return s;
  DeclaredSymbols symbols(graph);
  SizeChecker sizes;
  absl::flat_hash_set<const Value*> defined;
  for (const Value* v : graph.inputs()) {
    if (!IsValidDType(v->type().dtype)) {
      return absl::InvalidArgumentError(absl::StrCat("graph input %", v->id(), " has no dtype"));
    }
    auto what = [v] { return absl::StrCat("graph input %", v->id()); };
    if (absl::Status s = symbols.Check(v->type(), what); !s.ok()) return s;
    if (absl::Status s = sizes.Check(v->type(), what); !s.ok()) return s;
    defined.insert(v);
  }
  for (const Value* v : graph.constants()) {
    if (!v->type().IsStatic()) {
      return absl::InvalidArgumentError(
          absl::StrCat("constant %", v->id(), " has symbolic type ", v->type().ToString()));
    }
    if (v->constant().is_external()) {
      if (absl::Status s = CheckDataPath(v->constant().external_path); !s.ok()) {
        return absl::InvalidArgumentError(absl::StrCat("constant %", v->id(), ": ", s.message()));
      }
    }
    defined.insert(v);
  }
  std::vector<Node*> nodes = graph.nodes();
  // How often each value lists each node as a user, counted once over every use list: counting
  // a value's users per use was quadratic in its fan-out (a weight every layer reads).
  absl::flat_hash_map<std::pair<const Value*, const Node*>, int> listed;
  absl::flat_hash_set<const Value*> counted;
  auto count_users = [&](const Value* v) {
    if (!counted.insert(v).second) return;
    for (const Node* u : v->users()) ++listed[{v, u}];
  };
  for (const Value* v : graph.inputs()) count_users(v);
  for (const Value* v : graph.constants()) count_users(v);
  for (const Node* n : nodes) {
    for (const Value* out : n->outputs()) count_users(out);
  }
  for (int i = 0; i < static_cast<int>(nodes.size()); ++i) {
    const Node* n = nodes[i];
    for (int k = 0; k < n->num_inputs(); ++k) {
      const Value* in = n->input(k);
      if (!defined.contains(in)) {
        return NodeError(n, i, absl::StrCat("input ", k, " (%", in->id(),
                                            ") is used before it is defined (cycle or bad order)"));
      }
      auto it = listed.find(std::make_pair(in, n));
      if ((it == listed.end() ? 0 : it->second) !=
          std::count(n->inputs().begin(), n->inputs().end(), in)) {
        return NodeError(n, i, absl::StrCat("use list of %", in->id(), " is out of sync"));
      }
    }
    if (absl::Status s = symbols.CheckAttrs(n->attrs()); !s.ok()) {
      return NodeError(n, i, s.message());
    }
    for (const Value* out : n->outputs()) {
      if (out->producer() != n) return NodeError(n, i, "output's producer is another node");
      auto what = [out] { return absl::StrCat("output %", out->id()); };
      if (absl::Status s = symbols.Check(out->type(), what); !s.ok()) {
        return NodeError(n, i, s.message());
      }
      if (absl::Status s = sizes.Check(out->type(), what); !s.ok()) {
        return NodeError(n, i, s.message());
      }
      defined.insert(out);
    }
    const OpSchema* schema = registry.Find(n->op());
    if (schema == nullptr) return NodeError(n, i, absl::StrCat("unknown op '", n->op(), "'"));
    AttrMap attrs = n->attrs();
    std::vector<TensorType> in_types;
    in_types.reserve(n->num_inputs());
    for (const Value* in : n->inputs()) in_types.push_back(in->type());
    absl::StatusOr<std::vector<TensorType>> expected = InferOutputTypes(*schema, in_types, attrs);
    if (!expected.ok()) return NodeError(n, i, expected.status().message());
    if (attrs.size() != n->attrs().size()) {
      for (const AttrSpec& spec : schema->attrs) {
        if (!HasAttr(n->attrs(), spec.name)) {
          return NodeError(n, i, absl::StrCat("attribute '", spec.name,
                                              "' is missing (defaults must be explicit)"));
        }
      }
    }
    bool same = static_cast<int>(expected->size()) == n->num_outputs();
    for (int k = 0; same && k < n->num_outputs(); ++k) {
      same = n->output(k)->type() == (*expected)[k];
    }
    if (!same) {
      std::vector<TensorType> actual;
      for (const Value* out : n->outputs()) actual.push_back(out->type());
      return NodeError(n, i, absl::StrCat("output types [", TypeList(actual),
                                          "] differ from inferred [", TypeList(*expected), "]"));
    }
  }
  for (size_t k = 0; k < graph.guards().size(); ++k) {
    const GuardInfo& g = graph.guards()[k];
    auto what = [&] {
      return absl::StrCat("guard ", k, " (", g.lhs.ToString(), " ",
                          proto::Guard::Relation_Name(g.relation), " ", g.rhs.ToString(), ")");
    };
    if (absl::Status s = symbols.Check(g.lhs, what); !s.ok()) return s;
    if (absl::Status s = symbols.Check(g.rhs, what); !s.ok()) return s;
  }
  for (size_t k = 0; k < graph.outputs().size(); ++k) {
    const Value* v = graph.outputs()[k];
    if (v == nullptr || !defined.contains(v)) {
      return absl::InvalidArgumentError(absl::StrCat("graph output ", k, " is not defined"));
    }
  }
  return absl::OkStatus();
}

}  // namespace coil
