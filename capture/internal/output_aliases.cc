// FindOutputAliases and RestoreOutputAliases.
#include "capture/internal/output_aliases.h"

#include <algorithm>
#include <optional>
#include <source_location>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "capture/dispatch.h"
#include "capture/error.h"
#include "ir/op_registry.h"
#include "runtime/interpreter.h"

namespace coil::capture_internal {
namespace {

// The value a view or in-place op's output 0 aliases (its base), or null for other values.
// `view` is set when the step is a view op to replay (in-place ops return their input).
Value* AliasedBase(const Value* v, bool& view) {
  Node* p = v->producer();
  if (p == nullptr || v->output_index() != 0) return nullptr;
  const OpSchema* schema = OpRegistry::Global().Find(p->op());
  if (schema == nullptr) return nullptr;
  if (schema->mutated_input >= 0 && schema->mutated_input < p->num_inputs()) {
    view = false;
    return p->input(schema->mutated_input);
  }
  // Replayable views: one tensor input (the base). Symbolic sizes in their attributes are
  // bound from the inputs at replay (RestoreOutputAliases).
  if (schema->is_view && p->num_inputs() == 1) {
    view = true;
    return p->input(0);
  }
  return nullptr;
}

// The value whose tensor `v` is: an in-place op's output is the input it wrote into.
const Value* SameTensor(const Value* v) {
  for (;;) {
    bool view = false;
    const Value* base = AliasedBase(v, view);
    if (base == nullptr || view) return v;
    v = base;
  }
}

// Whether a sym / syms attribute is not a constant.
bool NamesSymbols(const AttrMap& attrs) {
  for (const auto& [name, value] : attrs) {
    if (const SymExpr* e = std::get_if<SymExpr>(&value); e != nullptr && !e->is_constant()) {
      return true;
    }
    if (const SymList* l = std::get_if<SymList>(&value)) {
      for (const SymExpr& e : *l) {
        if (!e.is_constant()) return true;
      }
    }
  }
  return false;
}

// A result's view could not be made again after the run (its symbolic attributes did not
// bind): the inputs ran the graph, so this is not expected; it is reported, not a crash.
[[noreturn]] void ThrowViewReplayError(const Node& view, const absl::Status& status) {
  throw Error(absl::Status(
      status.code(), absl::StrCat("making ", view.Describe(),
                                  " of a result again after the compiled run: ", status.message())));
}

}  // namespace

std::vector<Value*> SharedViewBases(const std::vector<Value*>& outputs, int num_results) {
  // The results, and the values whose tensors they are (`relu_(z)` returned: z's tensor).
  absl::flat_hash_map<const Value*, int> results;
  for (int i = 0; i < num_results; ++i) results.emplace(outputs[i], i);
  for (int i = 0; i < num_results; ++i) results.emplace(SameTensor(outputs[i]), i);
  absl::flat_hash_map<Value*, int> viewers;
  std::vector<Value*> order;
  for (int i = 0; i < num_results; ++i) {
    Value* v = outputs[i];
    int views = 0;
    bool other_result = false;  // the chain reaches another result's tensor
    for (;;) {
      bool view = false;
      Value* base = AliasedBase(v, view);
      if (base == nullptr) break;
      v = base;
      views += view ? 1 : 0;
      if (auto r = results.find(v); r != results.end() && r->second != i) {
        other_result = true;
        break;
      }
    }
    // A chain of at least one view ending at an intermediate (a producer, not a result).
    if (views == 0 || other_result || v->producer() == nullptr) continue;
    if (viewers[v]++ == 1) order.push_back(v);
  }
  return order;
}

std::vector<OutputAlias> FindOutputAliases(const Graph& graph, int num_results) {
  absl::flat_hash_map<const Value*, int> input_index;
  for (size_t i = 0; i < graph.inputs().size(); ++i) input_index[graph.inputs()[i]] = i;
  // The first result holding each value: a later result with that value aliases it. Shared
  // view bases (graph outputs after the results) are bases too.
  // A result written in place (`z.relu_()` returned) is z's tensor: views of z view it.
  absl::flat_hash_map<const Value*, int> first_result;
  for (int i = 0; i < num_results; ++i) first_result.emplace(graph.outputs()[i], i);
  for (int i = 0; i < num_results; ++i) first_result.emplace(SameTensor(graph.outputs()[i]), i);
  const std::vector<Value*> shared = SharedViewBases(graph.outputs(), num_results);
  for (size_t i = num_results; i < graph.outputs().size(); ++i) {
    const Value* v = graph.outputs()[i];
    if (std::find(shared.begin(), shared.end(), v) != shared.end()) first_result.emplace(v, i);
  }

  std::vector<OutputAlias> found;
  for (int i = 0; i < num_results; ++i) {
    OutputAlias a{.result = i};
    const Value* v = graph.outputs()[i];
    bool done = false;
    for (int steps = 0; !done; ++steps) {
      if (auto r = first_result.find(v);
          r != first_result.end() && r->second != i && (steps > 0 || r->second < i)) {
        a.base_result = r->second;
        done = true;
      } else if (auto in = input_index.find(v); in != input_index.end()) {
        a.base_input = in->second;
        done = true;
      } else {
        bool view = false;
        const Value* base = AliasedBase(v, view);
        if (base == nullptr) break;
        if (view) a.chain.push_back(v->producer());
        v = base;
      }
    }
    if (!done) continue;
    std::reverse(a.chain.begin(), a.chain.end());
    found.push_back(std::move(a));
  }
  // Bases first: a result that views another result comes after it (a result's base result
  // is an ancestor of its value, so the order exists; depth by following base_result). The
  // depths are computed before sorting: a comparator must not read the vector it sorts.
  absl::flat_hash_map<int, int> depth;
  for (const OutputAlias& a : found) {
    int d = 0;
    for (const OutputAlias* x = &a; x->base_result >= 0; ++d) {
      auto next = std::find_if(found.begin(), found.end(),
                               [&](const OutputAlias& y) { return y.result == x->base_result; });
      if (next == found.end()) break;
      x = &*next;
    }
    depth[a.result] = d;
  }
  std::stable_sort(found.begin(), found.end(), [&](const OutputAlias& a, const OutputAlias& b) {
    return depth.at(a.result) < depth.at(b.result);
  });
  return found;
}

void RestoreOutputAliases(const std::vector<OutputAlias>& aliases, const Graph& graph,
                          const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs) {
  std::vector<Tensor>& results = outputs;
  // The symbols' values in this call, bound from the inputs' sizes the first time a view's
  // attribute names one (a reshape to [s0, 4], a slice ending at s0).
  std::optional<absl::flat_hash_map<std::string, int64_t>> bindings;
  for (const OutputAlias& a : aliases) {
    Tensor t = a.base_input >= 0 ? inputs[a.base_input] : results[a.base_result];
    for (const Node* n : a.chain) {
      AttrMap attrs = n->attrs();
      if (NamesSymbols(attrs)) {
        if (!bindings.has_value()) {
          std::vector<HostTensor> hosts;
          for (const Tensor& in : inputs) hosts.push_back(in.host());
          absl::StatusOr<absl::flat_hash_map<std::string, int64_t>> b = BindSymbols(graph, hosts);
          // The graph has just run on these inputs, which bound the same symbols.
          if (!b.ok()) ThrowViewReplayError(*n, b.status());
          bindings = *std::move(b);
        }
        if (absl::Status bound = BindSymAttrs(attrs, *bindings); !bound.ok()) {
          ThrowViewReplayError(*n, bound);
        }
      }
      t = Dispatch(n->op(), {t}, std::move(attrs), std::source_location::current())[0];
    }
    // A reshape in the chain that could not view its input's layout (of an expand, a
    // transpose) copied: then the result is no alias, and the replay read the base after the
    // function's writes into it. The graph's own result is the value.
    const Tensor& base = a.base_input >= 0 ? inputs[a.base_input] : results[a.base_result];
    if (!t.host().SharesStorageWith(base.host())) continue;
    results[a.result] = t;
  }
}

}  // namespace coil::capture_internal
