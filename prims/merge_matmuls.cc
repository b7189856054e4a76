// MergeSharedInputMatmuls (merge_matmuls.h).
#include "prims/merge_matmuls.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ir/attribute.h"
#include "ir/dtype.h"
#include "ir/op_registry.h"

namespace coil::prims {
namespace {

// An inline dense constant of `dtype` and this rank; its sizes, or nullopt.
std::optional<std::vector<int64_t>> InlineConstant(const Value* v, DType dtype, int64_t rank) {
  if (v->type().dtype != dtype || v->type().rank() != rank) return std::nullopt;
  return v->InlineDenseShape();
}

struct Member {
  Node* mm;
  int64_t n;              // N_i
  Node* add = nullptr;    // the bias add, when it has one
  Value* bias = nullptr;  // [N_i]
};

// The bias add that is y's only use, as merge_matmuls.h describes it; null otherwise.
Node* BiasAdd(const Graph& graph, const Value* y, int64_t n, Value** bias) {
  if (y->users().size() != 1) return nullptr;
  Node* add = y->users()[0];
  if (add->op() != "aten.add" || add->num_inputs() != 2 || add->num_outputs() != 1) return nullptr;
  absl::StatusOr<double> alpha = GetFloat(add->attrs(), "alpha");
  if (!alpha.ok() || *alpha != 1.0) return nullptr;
  Value* other = add->input(0) == y ? add->input(1) : add->input(0);
  if (other == y) return nullptr;
  std::optional<std::vector<int64_t>> shape = InlineConstant(other, y->type().dtype, 1);
  if (!shape.has_value() || (*shape)[0] != n) return nullptr;
  if (add->output(0)->type() != y->type() || graph.IsOutput(add->output(0))) return nullptr;
  *bias = other;
  return add;
}

absl::StatusOr<TensorType> InferOne(absl::string_view op, std::vector<TensorType> inputs,
                                    AttrMap& attrs) {
  const OpSchema* schema = OpRegistry::Global().Find(op);
  if (schema == nullptr) return absl::InternalError(absl::StrCat("unknown op ", op));
  absl::StatusOr<std::vector<TensorType>> out = InferOutputTypes(*schema, inputs, attrs);
  if (!out.ok()) return out.status();
  if (out->size() != 1) return absl::InternalError(absl::StrCat(op, ": not one output"));
  return (*out)[0];
}

// Concatenates the constants' rows: rows x cols_i -> rows x sum(cols_i).
std::string ConcatColumns(const std::vector<const Value*>& parts, const std::vector<int64_t>& cols,
                          int64_t rows, int64_t element) {
  int64_t total = 0;
  for (int64_t c : cols) total += c;
  std::string out;
  out.resize(static_cast<size_t>(rows * total * element));
  char* dst = out.data();
  for (int64_t r = 0; r < rows; ++r) {
    for (size_t i = 0; i < parts.size(); ++i) {
      const int64_t bytes = cols[i] * element;
      std::copy_n(parts[i]->constant().raw.data() + r * bytes, bytes, dst);
      dst += bytes;
    }
  }
  return out;
}

// Merges one group (>= 2 members, same input, op, dtype and K). Returns false when the types
// do not come out as the originals' (nothing changed then).
absl::StatusOr<bool> MergeGroup(Graph& graph, std::vector<Member>& group) {
  Node* first = group[0].mm;
  Value* x = first->input(0);
  const DType dtype = x->type().dtype;
  const int64_t k = group[0].mm->input(1)->type().StaticShape()->at(0);
  const bool biased = std::all_of(group.begin(), group.end(),
                                  [](const Member& m) { return m.add != nullptr; });
  int64_t total = 0;
  std::vector<const Value*> weights, biases;
  std::vector<int64_t> cols;
  for (const Member& m : group) {
    total += m.n;
    weights.push_back(m.mm->input(1));
    biases.push_back(m.bias);
    cols.push_back(m.n);
  }
  // Every type first, so that a mismatch changes nothing.
  const TensorType w_type(dtype, {SymExpr(k), SymExpr(total)});
  const TensorType b_type(dtype, {SymExpr(total)});
  AttrMap mm_attrs = first->attrs();
  // A merged type the meta functions refuse leaves the group as it is: an optimization never
  // turns a graph that verifies into a compile error.
  absl::StatusOr<TensorType> y_or = InferOne(first->op(), {x->type(), w_type}, mm_attrs);
  if (!y_or.ok()) return false;
  const TensorType y_type = *y_or;
  AttrMap add_attrs;
  TensorType z_type = y_type;
  if (biased) {
    add_attrs = group[0].add->attrs();
    absl::StatusOr<TensorType> z_or = InferOne("aten.add", {y_type, b_type}, add_attrs);
    if (!z_or.ok()) return false;
    z_type = *z_or;
  }
  const int64_t last = y_type.rank() - 1;
  std::vector<AttrMap> slice_attrs;
  int64_t offset = 0;
  for (const Member& m : group) {
    AttrMap a = {{"dim", last}, {"start", SymExpr(offset)}, {"end", SymExpr(offset + m.n)},
                 {"step", int64_t{1}}};
    absl::StatusOr<TensorType> t = InferOne("aten.slice", {z_type}, a);
    if (!t.ok()) return false;
    const Value* replaced = biased ? m.add->output(0) : m.mm->output(0);
    if (*t != replaced->type()) return false;
    slice_attrs.push_back(std::move(a));
    offset += m.n;
  }

  const int64_t element = ElementSize(dtype);
  std::string names;
  for (const Value* w : weights) absl::StrAppend(&names, names.empty() ? "" : "+", w->name());
  Value* w = graph.AddConstant(w_type, ConstantData{ConcatColumns(weights, cols, k, element)},
                               names);
  // Before the group's first matmul: x is defined there, and every use of a member's result
  // comes after it.
  Node* y = graph.InsertNodeBefore(first, first->op(), {x, w}, mm_attrs, {y_type});
  y->set_loc(first->loc());
  y->set_name(first->name());
  Value* z = y->output(0);
  if (biased) {
    std::string bias_names;
    for (const Value* b : biases) {
      absl::StrAppend(&bias_names, bias_names.empty() ? "" : "+", b->name());
    }
    Value* b = graph.AddConstant(b_type, ConstantData{ConcatColumns(biases, cols, 1, element)},
                                 bias_names);
    Node* add = graph.InsertNodeBefore(first, "aten.add", {z, b}, add_attrs, {z_type});
    add->set_loc(group[0].add->loc());
    z = add->output(0);
  }
  for (size_t i = 0; i < group.size(); ++i) {
    Member& m = group[i];
    Value* replaced = biased ? m.add->output(0) : m.mm->output(0);
    Node* slice = graph.InsertNodeBefore(first, "aten.slice", {z}, slice_attrs[i],
                                         {replaced->type()});
    slice->set_loc(m.mm->loc());
    graph.ReplaceAllUsesWith(replaced, slice->output(0));
  }
  // `first` is removed last: the slices went in before it.
  for (Member& m : group) {
    if (biased) graph.RemoveNode(m.add);
    graph.RemoveNode(m.mm);
  }
  return true;
}

}  // namespace

absl::StatusOr<int> MergeSharedInputMatmuls(Graph& graph) {
  // Groups by (x, op, K), in node order.
  absl::flat_hash_map<std::tuple<const Value*, std::string, int64_t>, size_t> group_of;
  std::vector<std::vector<Member>> groups;
  for (Node* node : graph.nodes()) {
    if ((node->op() != "aten.matmul" && node->op() != "aten.mm") || node->num_inputs() != 2 ||
        node->num_outputs() != 1) {
      continue;
    }
    Value* x = node->input(0);
    const DType dtype = x->type().dtype;
    if (!IsFloating(dtype) || x->type().rank() < 2) continue;
    std::optional<std::vector<int64_t>> w = InlineConstant(node->input(1), dtype, 2);
    if (!w.has_value() || node->input(1) == x) continue;
    const Value* y = node->output(0);
    if (graph.IsOutput(y) || y->type().dtype != dtype) continue;
    Member m{node, (*w)[1]};
    m.add = BiasAdd(graph, y, m.n, &m.bias);
    auto [it, inserted] = group_of.try_emplace(
        std::make_tuple(static_cast<const Value*>(x), node->op(), (*w)[0]), groups.size());
    if (inserted) groups.emplace_back();
    groups[it->second].push_back(m);
  }
  int merged = 0;
  for (std::vector<Member>& group : groups) {
    if (group.size() < 2) continue;
    absl::StatusOr<bool> done = MergeGroup(graph, group);
    if (!done.ok()) return done.status();
    if (*done) merged += static_cast<int>(group.size()) - 1;
  }
  if (merged > 0) {
    // Only the constants nothing reads any more go; every node stays.
    graph.RemoveDeadCode([](const Node&) { return true; });
  }
  return merged;
}

}  // namespace coil::prims
