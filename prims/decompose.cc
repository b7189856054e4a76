// The decomposition pass (rebuilds the graph node by node through the Emitter) and the prims
// stage's pass list.
#include "prims/decompose.h"

#include <algorithm>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "ir/op_registry.h"
#include "ir/printer.h"
#include "ir/shape_guards.h"
#include "ir/verifier.h"
#include "prims/attention_match.h"
#include "prims/decomposition_registry.h"
#include "prims/emitter.h"
#include "prims/functionalize.h"

namespace coil::prims {
namespace {

// Whether `op` stays whole: prims, externs and the backend's `keep` ops, except attention with
// a dropout_p (the backends' fused attention kernels have no dropout: it decomposes into the
// philox mask that autograd's rule draws again).
bool KeptWhole(const DecomposeOptions& options, absl::string_view op, const AttrMap& attrs) {
  if (IsPrim(op) || IsExtern(op)) return true;
  if (std::find(options.keep.begin(), options.keep.end(), op) == options.keep.end()) return false;
  return op != "aten.scaled_dot_product_attention" ||
         GetFloat(attrs, "dropout_p").value_or(0.0) == 0;
}

// An attention node the backend's filter (DecomposeOptions::keep_attention) refuses.
bool RefusedAttention(const DecomposeOptions& options, const Node& n) {
  if (!options.keep_attention || n.op() != "aten.scaled_dot_product_attention") return false;
  std::vector<TensorType> types;
  for (const Value* v : n.inputs()) types.push_back(v->type());
  return !options.keep_attention(types, n.attrs());
}

bool NeedsDecomposition(const Graph& graph, const DecomposeOptions& options) {
  for (const Node* n : graph.nodes()) {
    if (!KeptWhole(options, n->op(), n->attrs()) || RefusedAttention(options, *n)) return true;
  }
  return false;
}

// Adds the guards of the nodes of `graph` from the assumptions the emitter collected as it
// inferred their types (`assumed`: only nodes that assumed something). A node that `source_of`
// maps to the aten node it was decomposed from is named after that node, each run of nodes
// from one source together (AddShapeGuardsFor); any other node (a prim the graph had, or one
// functionalize added) names itself, as AddShapeGuards would.
void GuardDecomposedNodes(
    Graph& graph, const absl::flat_hash_map<const Node*, const Node*>& source_of,
    const absl::flat_hash_map<const Node*, const std::vector<ShapeAssumption>*>& assumed) {
  std::vector<NodeAssumptions> run;
  const Node* source = nullptr;
  auto flush = [&] {
    if (!run.empty()) AddGuardsForAssumptions(graph, run, source);
    run.clear();
  };
  for (const Node* n : graph.nodes()) {
    auto it = source_of.find(n);
    const Node* s = it == source_of.end() ? nullptr : it->second;
    if (s != source) {
      flush();
      source = s;
    }
    auto a = assumed.find(n);
    if (a != assumed.end()) run.push_back({n, *a->second});
  }
  flush();
}

}  // namespace

absl::StatusOr<bool> DecomposeOps(Graph& graph, const DecomposeOptions& options) {
  // A backend that runs attention whole also gets the attention that ONNX exports spell out.
  if (std::find(options.keep.begin(), options.keep.end(), "aten.scaled_dot_product_attention") !=
      options.keep.end()) {
    MatchAttention(graph, options.keep_attention, options.evaluate_constants);
  }
  // Nothing to decompose: the graph's own prims (some added by functionalize after the
  // shape_guards pass) make their assumptions known the usual way.
  if (!NeedsDecomposition(graph, options)) return AddShapeGuards(graph);

  Graph out(graph.name());
  out.symbols() = graph.symbols();
  out.guards() = graph.guards();
  absl::flat_hash_map<const Value*, Value*> map;
  for (const Value* in : graph.inputs()) {
    map[in] = out.AddInput(in->type(), in->name());
  }
  // The constants' bytes move into `out` (a GPT-2's 500 MB were copied here); decompositions
  // read only `out`'s values. On an error they move back, so the caller's graph loses nothing.
  std::vector<std::pair<Value*, Value*>> moved;
  for (Value* c : graph.constants()) {
    Value* copy = out.AddConstant(c->type(), std::move(c->mutable_constant()), c->name());
    map[c] = copy;
    moved.push_back({c, copy});
  }
  struct GiveBack {
    std::vector<std::pair<Value*, Value*>>& moved;
    bool done = false;
    ~GiveBack() {
      if (done) return;
      for (auto& [original, copy] : moved) original->mutable_constant() = std::move(copy->mutable_constant());
    }
  } give_back{moved};
  // The nodes [begin, end) of `out` that aten node `source` decomposed into.
  struct Emitted {
    int begin, end;
    const Node* source;
  };
  std::vector<Emitted> emitted_from;
  // Only symbolic sizes make assumptions (static ones are proved or refuted), and every
  // symbol comes from an input's shape: a static graph needs no meta function run again.
  bool symbolic = false;
  for (const Value* in : graph.inputs()) {
    for (const SymExpr& d : in->type().shape) symbolic = symbolic || !d.is_constant();
  }
  const DecompositionRegistry& table = DecompositionRegistry::Global();
  // An attention node the backend's filter refuses decomposes (set per source node).
  bool refuse_attention = false;
  Emitter e(
      out, [&table](absl::string_view op) { return table.Find(op); },
      [&options, &refuse_attention](absl::string_view op, const AttrMap& attrs) {
        if (refuse_attention && op == "aten.scaled_dot_product_attention") return false;
        return KeptWhole(options, op, attrs);
      });
  if (symbolic) e.CollectAssumptions();
  for (const Node* n : graph.nodes()) {
    std::vector<Val> inputs;
    for (const Value* v : n->inputs()) inputs.push_back(e.Wrap(map.at(v)));
    e.set_loc(n->loc());
    e.set_name(n->name());
    refuse_attention = RefusedAttention(options, *n);
    const int first = out.num_nodes();
    std::vector<Val> outs = e.Op(n->op(), std::move(inputs), n->attrs());
    if (!e.ok()) {
      return absl::Status(e.status().code(), absl::StrCat("decomposing ", n->Describe(),
                                                          n->loc().empty() ? "" : " at ",
                                                          n->loc().ToString(), ": ",
                                                          e.status().message()));
    }
    if (symbolic && !IsPrim(n->op())) emitted_from.push_back({first, out.num_nodes(), n});
    for (int i = 0; i < n->num_outputs(); ++i) {
      Value* v = outs[i].value();
      if (v->name().empty() && !n->output(i)->name().empty()) v->set_name(n->output(i)->name());
      map[n->output(i)] = v;
    }
  }
  std::vector<Value*> outputs;
  for (const Value* v : graph.outputs()) outputs.push_back(map.at(v));
  out.SetOutputs(std::move(outputs));
  absl::flat_hash_map<const Node*, const Node*> source_of;
  absl::flat_hash_map<const Node*, const std::vector<ShapeAssumption>*> assumed;
  {
    std::vector<Node*> all = out.nodes();
    for (const Emitted& r : emitted_from) {
      for (int i = r.begin; i < r.end; ++i) source_of[all[i]] = r.source;
    }
    for (const NodeAssumptions& a : e.assumptions()) assumed[a.node] = &a.assumptions;
  }
  // Keep the write-backs of mutated inputs (prims.copy_to) that Functionalize appended.
  out.RemoveDeadCode([](const Node& n) {
    const OpSchema* schema = OpRegistry::Global().Find(n.op());
    return schema != nullptr && schema->mutated_input >= 0;
  });
  // What the emitted prims that are still used assume about symbolic sizes becomes guards
  // named after the op the user wrote (or the prim itself when the user wrote a prim).
  GuardDecomposedNodes(out, source_of, assumed);
  give_back.done = true;
  graph = std::move(out);
  return true;
}

PassPipeline<Graph> PrimsPipeline(const DecomposeOptions& options) {
  PassPipeline<Graph> p("prims", {.verify = [](const Graph& g) { return Verify(g); },
                                  .print = [](const Graph& g) { return PrintGraph(g); }});
  // What the meta functions assumed about symbolic sizes becomes guards first (checked by
  // every runner at run time, ir/shape_guards.h). Decompositions are pure rewrites, so
  // mutation and aliasing go before them.
  p.Add("shape_guards", [](Graph& g) { return AddShapeGuards(g); })
      .Add("functionalize", [](Graph& g) { return Functionalize(g); });
  if (options.merge_matmuls) {
    p.Add("merge_matmuls", [](Graph& g) -> absl::StatusOr<bool> {
      absl::StatusOr<int> merged = MergeSharedInputMatmuls(g);
      if (!merged.ok()) return merged.status();
      return *merged > 0;
    });
  }
  if (options.fold_weight_scales) {
    p.Add("fold_weight_scales", [](Graph& g) -> absl::StatusOr<bool> {
      absl::StatusOr<int> folded = FoldWeightScales(g);
      if (!folded.ok()) return folded.status();
      return *folded > 0;
    });
  }
  if (options.precision != Precision::kF32) {
    // Attention that ONNX spells out is found before casts sit between its ops (a backend
    // that keeps aten.scaled_dot_product_attention whole; DecomposeOps does it otherwise).
    const bool attention =
        std::find(options.keep.begin(), options.keep.end(),
                  "aten.scaled_dot_product_attention") != options.keep.end();
    // The backend judges each attention by the types autocast gives it, as the decompose
    // pass will: a call kept here and refused there would decompose from the fused op's form.
    AttentionFilter keep_attention = options.keep_attention;
    if (keep_attention != nullptr) {
      keep_attention = [keep = options.keep_attention, precision = options.precision](
                           absl::Span<const TensorType> in, const AttrMap& attrs) {
        return keep(AutocastInputTypes("aten.scaled_dot_product_attention", in, attrs, precision),
                    attrs);
      };
    }
    p.Add("autocast", [precision = options.precision, attention, keep_attention,
                       evaluate = options.evaluate_constants](Graph& g) {
      const bool matched = attention && MatchAttention(g, keep_attention, evaluate) > 0;
      absl::StatusOr<bool> changed = Autocast(g, precision);
      if (!changed.ok()) return changed;
      return absl::StatusOr<bool>(*changed || matched);
    });
  }
  // Also turns the prims' own assumptions (slice bounds of a narrow, a reshape's element
  // count) into guards, from the types it inferred as it emitted them.
  p.Add("decompose", [options](Graph& g) { return DecomposeOps(g, options); });
  return p;
}

absl::StatusOr<bool> Decompose(Graph& graph, const DecomposeOptions& options,
                               const PassPipelineOptions& passes,
                               std::vector<PassRecord>* records) {
  return PrimsPipeline(options).Run(graph, passes, records);
}

absl::StatusOr<proto::Graph> Decompose(const proto::Graph& graph,
                                       const DecomposeOptions& options,
                                       const PassPipelineOptions& passes,
                                       std::vector<PassRecord>* records) {
  absl::StatusOr<Graph> g = Graph::FromProto(graph);
  if (!g.ok()) return g.status();
  absl::StatusOr<bool> changed = Decompose(*g, options, passes, records);
  if (!changed.ok()) return changed.status();
  return g->ToProto();
}

}  // namespace coil::prims
