// Shape guards from meta functions' assumptions, and their check at run time (shape_guards.h).
#include "ir/shape_guards.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ir/op_registry.h"
#include "ir/shape_assumption.h"
#include "ir/sym_expr.h"

namespace coil {
namespace {

bool SameGuard(const GuardInfo& a, const GuardInfo& b) {
  return a.relation == b.relation && a.lhs == b.lhs && a.rhs == b.rhs;
}

}  // namespace

bool GuardHolds(proto::Guard::Relation r, int64_t lhs, int64_t rhs) {
  switch (r) {
    case proto::Guard::EQ:
      return lhs == rhs;
    case proto::Guard::NE:
      return lhs != rhs;
    case proto::Guard::LT:
      return lhs < rhs;
    case proto::Guard::LE:
      return lhs <= rhs;
    default:
      return false;
  }
}

const char* GuardRelationSymbol(proto::Guard::Relation r) {
  switch (r) {
    case proto::Guard::EQ:
      return "==";
    case proto::Guard::NE:
      return "!=";
    case proto::Guard::LT:
      return "<";
    case proto::Guard::LE:
      return "<=";
    default:
      return "?";
  }
}

std::string GuardSource(const Node& n) {
  if (n.name().empty()) return n.Describe();
  return absl::StrCat(n.Describe(), " (node '", n.name(), "')");
}

bool AddGuardsForAssumptions(Graph& graph, absl::Span<const NodeAssumptions> nodes,
                             const Node* source) {
  std::vector<GuardInfo> added;
  // An assumption the symbols' declared ranges prove (1 <= s for a symbol of min 2) needs no
  // guard: meta functions prove without the graph's ranges.
  std::optional<SymRanges> ranges;  // made at the first assumption (most nodes make none)
  auto proven = [&](const ShapeAssumption& a) {  // a.relation is EQ or LE
    if (!ranges.has_value()) ranges = graph.SymbolRanges();
    return (a.relation == proto::Guard::LE ? ProveLe(a.lhs, a.rhs, *ranges)
                                           : ProveEq(a.lhs, a.rhs, *ranges)) == Truth::kTrue;
  };
  for (const NodeAssumptions& na : nodes) {
    const Node* n = na.node;
    for (const ShapeAssumption& a : na.assumptions) {
      if (proven(a)) continue;
      // The op the user wrote, and the prim of its decomposition that assumed it.
      std::string reason =
          source == nullptr
              ? absl::StrCat(GuardSource(*n), ": ", a.what)
              : absl::StrCat(GuardSource(*source), ": ", a.what, " (", n->op(), ")");
      GuardInfo g{a.relation, a.lhs, a.rhs, std::move(reason),
                  source == nullptr ? n->loc() : source->loc()};
      bool known = false;
      for (const GuardInfo& h : graph.guards()) known = known || SameGuard(g, h);
      for (const GuardInfo& h : added) known = known || SameGuard(g, h);
      if (!known) added.push_back(std::move(g));
    }
  }
  for (GuardInfo& g : added) graph.guards().push_back(std::move(g));
  return !added.empty();
}

absl::StatusOr<bool> AddShapeGuardsFor(Graph& graph, absl::Span<Node* const> nodes,
                                       const Node* source) {
  const OpRegistry& registry = OpRegistry::Global();
  std::vector<NodeAssumptions> collected;
  ShapeAssumptionScope scope;
  for (const Node* n : nodes) {
    const OpSchema* schema = registry.Find(n->op());
    if (schema == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(n->Describe(), ": unknown op"));
    }
    std::vector<TensorType> in_types;
    for (const Value* in : n->inputs()) in_types.push_back(in->type());
    AttrMap attrs = n->attrs();
    scope.Clear();
    absl::StatusOr<std::vector<TensorType>> out = InferOutputTypes(*schema, in_types, attrs);
    if (!out.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(n->Describe(), ": ", out.status().message()));
    }
    if (!scope.assumptions().empty()) collected.push_back({n, scope.assumptions()});
  }
  return AddGuardsForAssumptions(graph, collected, source);
}

absl::StatusOr<bool> AddShapeGuards(Graph& graph) {
  return AddShapeGuardsFor(graph, graph.nodes(), nullptr);
}

absl::Status CheckGuards(const Graph& graph,
                         const absl::flat_hash_map<std::string, int64_t>& bindings) {
  for (const GuardInfo& g : graph.guards()) {
    absl::StatusOr<int64_t> lhs = g.lhs.Evaluate(bindings);
    absl::StatusOr<int64_t> rhs = lhs.ok() ? g.rhs.Evaluate(bindings) : lhs;
    if (!lhs.ok() || !rhs.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("guard ", g.lhs.ToString(), " ", GuardRelationSymbol(g.relation), " ",
                       g.rhs.ToString(), " (", g.reason, ") cannot be checked: ",
                       (lhs.ok() ? rhs : lhs).status().message()));
    }
    if (!GuardHolds(g.relation, *lhs, *rhs)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the inputs break a guard of graph '", graph.name(), "': ", g.lhs.ToString(), " ",
          GuardRelationSymbol(g.relation), " ", g.rhs.ToString(), " is ", *lhs, " ",
          GuardRelationSymbol(g.relation), " ", *rhs, " (", g.reason, ")"));
    }
  }
  return absl::OkStatus();
}

}  // namespace coil
