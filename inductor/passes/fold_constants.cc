// FoldConstants: candidates in graph order, groups joined through weights (union-find), the
// growth test per group, one reference-interpreter run per accepted group.
#include "inductor/passes/fold_constants.h"

#include <algorithm>
#include <numeric>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "ir/check.h"
#include "ir/op_registry.h"

namespace coil::inductor {
namespace {

// Constants up to this size neither join groups (a shared scalar such as an epsilon would
// otherwise tie unrelated weights together) nor count as freed; a group may add this much.
constexpr int64_t kSmallBytes = 64;
// A node may produce more than it reads (a scalar broadcast to a vector before arithmetic)
// up to this size; whether that is kept is the group's growth test. Bounds compile-time memory.
constexpr int64_t kScratchBytes = int64_t{1} << 20;

bool IsRandomOp(const std::string& op) {
  static const auto* ops = new absl::flat_hash_set<std::string>{
      "prims.philox_uniform", "aten.rand",      "aten.rand_like",  "aten.randn",
      "aten.randn_like",      "aten.randint",   "aten.randint_like", "aten.randperm",
      "aten.bernoulli",       "aten.dropout",   "aten.native_dropout", "aten.normal",
      "aten.uniform",         "aten.multinomial", "aten.rrelu"};
  return ops->contains(op);
}

// Bytes of a value with a static, contiguous type; nullopt otherwise.
std::optional<int64_t> StaticBytes(const TensorType& t) {
  if (!t.strides.empty() && t.strides != t.ContiguousStrides()) return std::nullopt;
  std::optional<std::vector<int64_t>> shape = t.StaticShape();
  if (!shape.has_value() || !IsValidDType(t.dtype)) return std::nullopt;
  int64_t n = ElementSize(t.dtype);
  for (int64_t d : *shape) {
    if (d < 0 || __builtin_mul_overflow(n, d, &n)) return std::nullopt;
  }
  return n;
}

bool IsFoldableOp(const Node& n) {
  if (n.num_inputs() == 0 || IsRandomOp(n.op()) || n.op() == "prims.copy_to") return false;
  const OpSchema* schema = OpRegistry::Global().Find(n.op());
  if (schema == nullptr || schema->mutated_input >= 0) return false;
  return std::all_of(n.attrs().begin(), n.attrs().end(),
                     [](const auto& kv) { return IsStaticAttr(kv.second); });
}

struct UnionFind {
  std::vector<int> parent;
  int Add() {
    parent.push_back(static_cast<int>(parent.size()));
    return parent.back();
  }
  int Find(int x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  }
  void Union(int a, int b) { parent[Find(a)] = Find(b); }
};

int64_t ConstantBytes(const Graph& graph) {
  int64_t total = 0;
  for (const Value* c : graph.constants()) {
    const ConstantData& d = c->constant();
    total += d.is_external() ? d.external_length : static_cast<int64_t>(d.raw.size());
  }
  return total;
}

struct Group {
  std::vector<Node*> nodes;            // graph order
  std::vector<Value*> materialized;    // results still needed by the rest of the graph
  int64_t added = 0;
  int64_t freed = 0;
};

// Runs `group` through the injected evaluator; the materialized values' bytes, or an error.
absl::StatusOr<std::vector<ConstantData>> Evaluate(const Group& group,
                                                   const FoldConstantsOptions& options) {
  Graph sub("fold_constants");
  absl::flat_hash_map<const Value*, Value*> map;
  for (const Node* n : group.nodes) {
    std::vector<Value*> inputs;
    for (Value* in : n->inputs()) {
      auto it = map.find(in);
      if (it == map.end()) {
        COIL_CHECK(in->kind() == Value::Kind::kConstant) << n->Describe();
        it = map.emplace(in, sub.AddConstant(in->type(), in->constant(), in->name())).first;
      }
      inputs.push_back(it->second);
    }
    std::vector<TensorType> types;
    for (const Value* out : n->outputs()) types.push_back(out->type());
    Node* copy = sub.AddNode(n->op(), std::move(inputs), n->attrs(), std::move(types));
    for (int i = 0; i < n->num_outputs(); ++i) map[n->output(i)] = copy->output(i);
  }
  std::vector<Value*> outputs;
  for (const Value* v : group.materialized) outputs.push_back(map.at(v));
  sub.SetOutputs(std::move(outputs));
  return options.evaluate(sub);
}

}  // namespace

absl::StatusOr<bool> FoldConstants(Graph& graph, const FoldConstantsOptions& options,
                                   FoldConstantsStats* stats) {
  FoldConstantsStats local;
  FoldConstantsStats& st = stats != nullptr ? *stats : local;
  st = FoldConstantsStats();
  st.constant_bytes_before = ConstantBytes(graph);
  st.constant_bytes_after = st.constant_bytes_before;
  if (!options.evaluate) return false;  // nothing to compute values with: fold nothing

  // Candidates: foldable ops over constants (or other candidates).
  absl::flat_hash_map<const Value*, int64_t> known_bytes;  // usable constants, candidate results
  for (const Value* c : graph.constants()) {
    if (c->constant().is_external() && options.external_data_dir.empty()) continue;
    if (std::optional<int64_t> b = StaticBytes(c->type())) known_bytes[c] = *b;
  }
  std::vector<Node*> candidates;
  absl::flat_hash_map<const Node*, int> candidate_index;
  for (Node* n : graph.nodes()) {
    if (!IsFoldableOp(*n)) continue;
    int64_t in_bytes = 0, out_bytes = 0;
    bool ok = true;
    absl::flat_hash_set<const Value*> seen;
    for (const Value* in : n->inputs()) {
      auto it = known_bytes.find(in);
      if (it == known_bytes.end()) {
        ok = false;
        break;
      }
      if (seen.insert(in).second) in_bytes += it->second;
    }
    std::vector<int64_t> out_sizes;
    for (const Value* out : n->outputs()) {
      std::optional<int64_t> b = StaticBytes(out->type());
      ok = ok && b.has_value();
      if (!ok) break;
      out_sizes.push_back(*b);
      out_bytes += *b;
    }
    if (!ok || out_bytes > std::max(in_bytes, kScratchBytes)) continue;
    candidate_index[n] = static_cast<int>(candidates.size());
    candidates.push_back(n);
    for (int i = 0; i < n->num_outputs(); ++i) known_bytes[n->output(i)] = out_sizes[i];
  }
  if (candidates.empty()) return false;

  // Groups: a candidate joins its candidate producers and the weights it reads.
  UnionFind uf;
  for (size_t i = 0; i < candidates.size(); ++i) uf.Add();
  absl::flat_hash_map<const Value*, int> weight_element;
  for (size_t i = 0; i < candidates.size(); ++i) {
    for (const Value* in : candidates[i]->inputs()) {
      if (const Node* p = in->producer()) {
        uf.Union(static_cast<int>(i), candidate_index.at(p));
      } else if (known_bytes.at(in) > kSmallBytes) {
        auto [it, added] = weight_element.emplace(in, 0);
        if (added) it->second = uf.Add();
        uf.Union(static_cast<int>(i), it->second);
      }
    }
  }
  const absl::flat_hash_set<const Value*> graph_outputs(graph.outputs().begin(),
                                                        graph.outputs().end());
  auto all_users_are_candidates = [&](const Value* v) {
    return std::all_of(v->users().begin(), v->users().end(),
                       [&](const Node* u) { return candidate_index.contains(u); });
  };
  absl::flat_hash_map<int, Group> groups;
  for (Node* n : candidates) {
    Group& g = groups[uf.Find(candidate_index.at(n))];
    g.nodes.push_back(n);
    for (Value* out : n->outputs()) {
      if (graph_outputs.contains(out) || !all_users_are_candidates(out)) {
        g.materialized.push_back(out);
        g.added += known_bytes.at(out);
      }
    }
  }
  for (const auto& [weight, element] : weight_element) {
    if (!graph_outputs.contains(weight) && all_users_are_candidates(weight)) {
      groups[uf.Find(element)].freed += known_bytes.at(weight);
    }
  }
  // Fold groups in graph order (deterministic constant order).
  std::vector<Group*> order;
  for (auto& [root, g] : groups) order.push_back(&g);
  std::sort(order.begin(), order.end(), [&](const Group* a, const Group* b) {
    return candidate_index.at(a->nodes.front()) < candidate_index.at(b->nodes.front());
  });

  absl::flat_hash_set<const Node*> folded;
  for (Group* g : order) {
    if (g->materialized.empty()) continue;  // dead code: not this pass's business
    if (g->added > g->freed + kSmallBytes) {
      ++st.groups_rejected;
      continue;
    }
    absl::StatusOr<std::vector<ConstantData>> values = Evaluate(*g, options);
    if (!values.ok()) continue;  // e.g. an index out of range: the runtime reports it
    COIL_CHECK(values->size() == g->materialized.size());
    for (size_t i = 0; i < values->size(); ++i) {
      Value* v = g->materialized[i];
      ConstantData data = std::move((*values)[i]);
      const int64_t want = StaticBytes(v->type()).value_or(-1);
      if (data.is_external() || static_cast<int64_t>(data.raw.size()) != want) {
        return absl::InternalError(absl::StrCat(
            "fold_constants: the constant evaluator returned ", data.raw.size(), " bytes for ",
            v->type().ToString(), " in ", v->producer()->Describe()));
      }
      TensorType type(v->type().dtype, v->type().shape, v->type().device);
      std::string name = v->name().empty()
                             ? absl::StrCat("folded.", v->producer()->op(), ".", v->id())
                             : v->name();
      graph.ReplaceAllUsesWith(v, graph.AddConstant(std::move(type), std::move(data),
                                                    std::move(name)));
      ++st.constants_added;
    }
    for (const Node* n : g->nodes) folded.insert(n);
  }
  if (folded.empty()) return false;
  st.nodes_folded = static_cast<int>(folded.size());
  graph.RemoveDeadCode([&](const Node& n) { return !folded.contains(&n); });
  st.constant_bytes_after = ConstantBytes(graph);
  return true;
}

}  // namespace coil::inductor
