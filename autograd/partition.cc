// PartitionJoint: classify the joint graph's values (forward side: computable from primals
// alone; backward side: depends on a tangent), choose the saved set (every forward value the
// backward reads, or a minimum cut), and extract the two graphs.
#include "autograd/partition.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "autograd/min_cut.h"
#include "ir/dtype.h"
#include "ir/op_registry.h"

namespace coil::autograd {
namespace {

using ValueSet = absl::flat_hash_set<const Value*>;

// Whether the backward may recompute `n`'s outputs (cheap to recompute from its inputs).
bool Recomputable(const Node& n, bool allow_reductions) {
  const OpSchema* schema = OpRegistry::Global().Find(n.op());
  if (schema == nullptr) return false;
  switch (schema->op_class) {
    case OpClass::kElementwise:
    case OpClass::kShape:
    case OpClass::kCreation:
      return true;
    case OpClass::kReduction:
    case OpClass::kNormalization:
      return allow_reductions;
    case OpClass::kRandom:
      // philox_uniform is a function of its attributes (seed, offset): drawing it again in the
      // backward gives the forward's values, so a dropout mask is recomputed, never saved.
      return n.op() == "prims.philox_uniform";
    default:
      return false;
  }
}

// The nodes `outputs` need, in graph order, not looking past `stop`.
std::vector<const Node*> Closure(const Graph& g, const std::vector<Value*>& outputs,
                                 const ValueSet& stop) {
  absl::flat_hash_set<const Node*> needed;
  std::vector<const Value*> work(outputs.begin(), outputs.end());
  while (!work.empty()) {
    const Value* v = work.back();
    work.pop_back();
    if (stop.contains(v) || v->producer() == nullptr) continue;
    if (!needed.insert(v->producer()).second) continue;
    for (const Value* in : v->producer()->inputs()) work.push_back(in);
  }
  std::vector<const Node*> order;
  for (const Node* n : g.nodes()) {
    if (needed.contains(n)) order.push_back(n);
  }
  return order;
}

// A graph computing `outputs` from `inputs` with the nodes of `src` between them, plus the
// nodes `effects` need (writes into inputs, whose results are no output). Values reached that
// are neither inputs, constants nor node outputs are an internal error.
absl::StatusOr<Graph> Extract(const Graph& src, const std::string& name,
                              const std::vector<const Value*>& inputs,
                              const std::vector<Value*>& outputs, int* num_nodes,
                              const std::vector<Value*>& effects = {}) {
  Graph g(name);
  g.guards() = src.guards();
  absl::flat_hash_map<const Value*, Value*> map;
  ValueSet stop;
  absl::flat_hash_set<std::string> input_names;
  for (const Value* in : inputs) {
    if (map.contains(in)) continue;
    map[in] = g.AddInput(in->type(), in->name());
    stop.insert(in);
    input_names.insert(in->name());
  }
  // A symbol bound by an input's value stays declared only where that input is.
  for (const SymbolInfo& s : src.symbols()) {
    if (s.value_of.empty() || input_names.contains(s.value_of)) g.symbols().push_back(s);
  }
  std::vector<Value*> roots = outputs;
  roots.insert(roots.end(), effects.begin(), effects.end());
  std::vector<const Node*> nodes = Closure(src, roots, stop);
  for (const Node* n : nodes) {
    std::vector<Value*> ins;
    for (const Value* v : n->inputs()) {
      auto it = map.find(v);
      if (it == map.end()) {
        if (v->kind() != Value::Kind::kConstant) {
          return absl::InternalError(absl::StrCat("partition: ", name, " needs %", v->id(),
                                                  ", which is neither saved nor computable"));
        }
        it = map.emplace(v, g.AddConstant(v->type(), v->constant(), v->name())).first;
      }
      ins.push_back(it->second);
    }
    std::vector<TensorType> types;
    for (const Value* o : n->outputs()) types.push_back(o->type());
    Node* copy = g.AddNode(n->op(), ins, n->attrs(), types);
    copy->set_loc(n->loc());
    copy->set_name(n->name());
    for (int i = 0; i < n->num_outputs(); ++i) {
      copy->output(i)->set_name(n->output(i)->name());
      map[n->output(i)] = copy->output(i);
    }
  }
  std::vector<Value*> outs;
  for (const Value* v : outputs) {
    auto it = map.find(v);
    if (it == map.end()) {
      if (v->kind() != Value::Kind::kConstant) {
        return absl::InternalError(absl::StrCat("partition: ", name, " cannot compute %",
                                                v->id()));
      }
      it = map.emplace(v, g.AddConstant(v->type(), v->constant(), v->name())).first;
    }
    outs.push_back(it->second);
  }
  g.SetOutputs(std::move(outs));
  if (num_nodes != nullptr) *num_nodes = static_cast<int>(nodes.size());
  return g;
}

struct Sides {
  ValueSet backward;              // values that depend on a tangent
  std::vector<const Value*> forward_values;  // the others that the backward side reads, in order
};

// The saved set that AOTAutograd's default partition chooses: every forward value a
// backward-side node (or gradient output) reads.
std::vector<const Value*> SaveEverything(const Graph& g, const JointGraph& joint,
                                         const ValueSet& backward) {
  std::vector<const Value*> saved;
  ValueSet seen;
  auto read = [&](const Value* v) {
    if (!backward.contains(v) && v->kind() != Value::Kind::kConstant && seen.insert(v).second) {
      saved.push_back(v);
    }
  };
  ValueSet bw_needed;
  std::vector<Value*> grads(g.outputs().begin() + joint.num_forward_outputs, g.outputs().end());
  for (const Node* n : Closure(g, grads, {})) {
    if (!backward.contains(n->output(0))) continue;
    for (const Value* in : n->inputs()) read(in);
  }
  for (const Value* v : grads) read(v);
  return saved;
}

// The saved set on a minimum cut (see partition.h).
std::vector<const Value*> MinCutSaved(const Graph& g, const JointGraph& joint,
                                      const ValueSet& backward, bool allow_reductions) {
  std::vector<Value*> grads(g.outputs().begin() + joint.num_forward_outputs, g.outputs().end());
  std::vector<const Node*> needed = Closure(g, grads, {});
  // Vertices: 0 source, 1 sink, then (in, out) per forward-side value the backward may need.
  absl::flat_hash_map<const Value*, int> index;
  std::vector<const Value*> values;
  auto vertex = [&](const Value* v) {
    auto [it, inserted] = index.emplace(v, static_cast<int>(values.size()));
    if (inserted) values.push_back(v);
    return it->second;
  };
  for (int i = 0; i < joint.num_primals; ++i) vertex(g.inputs()[i]);
  for (const Node* n : needed) {
    for (const Value* in : n->inputs()) {
      if (!backward.contains(in) && in->kind() != Value::Kind::kConstant) vertex(in);
    }
    for (const Value* o : n->outputs()) {
      if (!backward.contains(o)) vertex(o);
    }
  }
  for (const Value* v : grads) {
    if (!backward.contains(v) && v->kind() != Value::Kind::kConstant) vertex(v);
  }
  auto in_of = [](int i) { return 2 + 2 * i; };
  auto out_of = [](int i) { return 3 + 2 * i; };
  MinCut cut(2 + 2 * static_cast<int>(values.size()));
  const int source = 0, sink = 1;
  for (size_t i = 0; i < values.size(); ++i) {
    const Value* v = values[i];
    int vi = static_cast<int>(i);
    cut.AddEdge(in_of(vi), out_of(vi), std::max<int64_t>(1, EstimatedBytes(g, v->type())));
    const Node* p = v->producer();
    if (p == nullptr || !Recomputable(*p, allow_reductions)) {
      cut.AddEdge(source, in_of(vi), kInfiniteCapacity);  // must come from the forward
    } else {
      for (const Value* in : p->inputs()) {
        auto it = index.find(in);
        if (it != index.end()) cut.AddEdge(out_of(it->second), in_of(vi), kInfiniteCapacity);
      }
    }
  }
  // Backward-side nodes (and gradient outputs that are forward values) read from the sink's
  // side: the value must be available there.
  for (const Node* n : needed) {
    if (!backward.contains(n->output(0))) continue;
    for (const Value* in : n->inputs()) {
      auto it = index.find(in);
      if (it != index.end()) cut.AddEdge(out_of(it->second), sink, kInfiniteCapacity);
    }
  }
  for (const Value* v : grads) {
    auto it = index.find(v);
    if (it != index.end()) cut.AddEdge(out_of(it->second), sink, kInfiniteCapacity);
  }
  cut.Solve(source, sink);
  const std::vector<bool>& side = cut.SourceSide();
  std::vector<const Value*> saved;
  for (size_t i = 0; i < values.size(); ++i) {
    int vi = static_cast<int>(i);
    if (side[in_of(vi)] && !side[out_of(vi)]) saved.push_back(values[i]);
  }
  return saved;
}

// The primal inputs that bind value symbols (SymbolInfo::value_of, a dropout's counter offset)
// which the backward's nodes use, added to `saved` (8 bytes each): the backward draws a mask
// again from the same offset, so it must bind the same symbol.
void SaveValueSymbolInputs(const Graph& g, const JointGraph& joint, const ValueSet& tangents,
                           std::vector<const Value*>& saved) {
  absl::flat_hash_map<std::string, const Value*> binder;  // symbol -> its primal input
  for (const SymbolInfo& s : g.symbols()) {
    if (s.value_of.empty()) continue;
    for (int i = 0; i < joint.num_primals; ++i) {
      if (g.inputs()[i]->name() == s.value_of) binder[s.name] = g.inputs()[i];
    }
  }
  if (binder.empty()) return;
  ValueSet stop(saved.begin(), saved.end());
  stop.insert(tangents.begin(), tangents.end());
  std::vector<Value*> grads(g.outputs().begin() + joint.num_forward_outputs, g.outputs().end());
  absl::flat_hash_set<const Value*> needed;
  auto use = [&](const SymExpr& e) {
    if (e.is_constant()) return;
    for (const std::string& name : e.Symbols()) {
      auto it = binder.find(name);
      if (it != binder.end()) needed.insert(it->second);
    }
  };
  for (const Node* n : Closure(g, grads, stop)) {
    for (const auto& [name, value] : n->attrs()) {
      if (const SymExpr* e = std::get_if<SymExpr>(&value)) use(*e);
      if (const SymList* list = std::get_if<SymList>(&value)) {
        for (const SymExpr& e : *list) use(e);
      }
    }
  }
  for (const Value* in : g.inputs()) {
    if (needed.contains(in) && !stop.contains(in)) saved.push_back(in);
  }
}

int64_t SavedBytes(const Graph& g, const std::vector<const Value*>& saved) {
  int64_t total = 0;
  for (const Value* v : saved) total += EstimatedBytes(g, v->type());
  return total;
}

}  // namespace

int64_t EstimatedBytes(const Graph& graph, const TensorType& t) {
  absl::flat_hash_map<std::string, int64_t> sizes;
  for (const SymbolInfo& s : graph.symbols()) {
    sizes[s.name] = s.hint > 0 ? s.hint : std::max<int64_t>(s.min, 2);
  }
  absl::StatusOr<int64_t> n = t.NumElements().Evaluate(sizes);
  return (n.ok() ? *n : 0) * ElementSize(t.dtype);
}

absl::StatusOr<Partition> PartitionJoint(const JointGraph& joint, const PartitionOptions& options) {
  double budget = options.activation_memory_budget;
  if (!(budget >= 0 && budget <= 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("partition: activation_memory_budget must be in [0, 1], got ", budget));
  }
  const Graph& g = joint.graph;
  ValueSet backward;
  for (size_t i = joint.num_primals; i < g.inputs().size(); ++i) backward.insert(g.inputs()[i]);
  for (const Node* n : g.nodes()) {
    bool any = false;
    for (const Value* in : n->inputs()) any = any || backward.contains(in);
    if (!any) continue;
    for (const Value* o : n->outputs()) backward.insert(o);
  }
  Partition p;
  p.num_forward_outputs = joint.num_forward_outputs;
  std::vector<const Value*> saved = SaveEverything(g, joint, backward);
  if (options.strategy == PartitionStrategy::kMinCut) {
    int64_t everything = SavedBytes(g, saved);
    saved = MinCutSaved(g, joint, backward, /*allow_reductions=*/false);
    if (budget < 1 && (budget == 0 || SavedBytes(g, saved) > budget * everything)) {
      saved = MinCutSaved(g, joint, backward, /*allow_reductions=*/true);
      p.recomputed_reductions = true;
    }
  }
  {
    ValueSet tangents(g.inputs().begin() + joint.num_primals, g.inputs().end());
    SaveValueSymbolInputs(g, joint, tangents, saved);
  }
  for (const Value* v : saved) {
    bool primal = v->kind() == Value::Kind::kInput;
    p.saved.push_back({v->name().empty() ? absl::StrCat("%", v->id()) : v->name(), v->type(),
                       EstimatedBytes(g, v->type()), primal, v->id()});
    p.saved_bytes += p.saved.back().bytes;
  }

  std::vector<const Value*> primals(g.inputs().begin(), g.inputs().begin() + joint.num_primals);
  std::vector<Value*> fw_outputs(g.outputs().begin(),
                                 g.outputs().begin() + joint.num_forward_outputs);
  for (const Value* v : saved) fw_outputs.push_back(const_cast<Value*>(v));
  // The forward's writes into its inputs (a batch_norm's running statistics) run in the
  // forward graph. A saved input (or view of one) that the forward overwrites is a forward
  // output, copied before the write (inductor/passes/lower.cc, outputs read before a
  // write-back), so the backward reads the value from before it.
  std::vector<Value*> writes;
  for (const Node* n : g.nodes()) {
    if (n->op() == "prims.copy_to") writes.push_back(const_cast<Value*>(n->output(0)));
  }
  absl::StatusOr<Graph> forward =
      Extract(g, absl::StrCat(g.name(), "_forward"), primals, fw_outputs, nullptr, writes);
  if (!forward.ok()) return forward.status();
  std::vector<const Value*> bw_inputs = saved;
  bw_inputs.insert(bw_inputs.end(), g.inputs().begin() + joint.num_primals, g.inputs().end());
  std::vector<Value*> grads(g.outputs().begin() + joint.num_forward_outputs, g.outputs().end());
  int bw_nodes = 0;
  absl::StatusOr<Graph> bw =
      Extract(g, absl::StrCat(g.name(), "_backward"), bw_inputs, grads, &bw_nodes);
  if (!bw.ok()) return bw.status();
  int recomputed = 0;
  ValueSet stop(bw_inputs.begin(), bw_inputs.end());
  for (const Node* n : Closure(g, grads, stop)) {
    if (!backward.contains(n->output(0))) ++recomputed;
  }
  p.forward = *std::move(forward);
  p.backward = *std::move(bw);
  p.recomputed_nodes = recomputed;
  return p;
}

}  // namespace coil::autograd
