// FoldWeightScales (fold_weight_scales.h).
#include "prims/fold_weight_scales.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/attribute.h"
#include "ir/dtype.h"

namespace coil::prims {
namespace {

bool IsView(const std::string& op) {
  return op == "aten.reshape" || op == "aten.view" || op == "aten.permute" ||
         op == "aten.transpose";
}

// An inline dense f32 constant of `numel` elements.
bool InlineF32(const Value* v, int64_t numel) {
  if (v->type().dtype != proto::FLOAT32) return false;
  std::optional<std::vector<int64_t>> shape = v->InlineDenseShape();
  if (!shape.has_value()) return false;
  int64_t n = 1;
  for (int64_t d : *shape) n *= d;
  return n == numel;
}

// [start, end) of a step-1 slice of y's last dim with static bounds, or nullopt.
std::optional<std::pair<int64_t, int64_t>> LastDimSlice(const Node* s, int64_t rank, int64_t n) {
  if (s->op() != "aten.slice" || s->num_inputs() != 1) return std::nullopt;
  absl::StatusOr<int64_t> dim = GetInt(s->attrs(), "dim");
  absl::StatusOr<int64_t> step = GetInt(s->attrs(), "step");
  absl::StatusOr<SymExpr> start = GetSym(s->attrs(), "start");
  absl::StatusOr<SymExpr> end = GetSym(s->attrs(), "end");
  if (!dim.ok() || !step.ok() || !start.ok() || !end.ok() || *step != 1) return std::nullopt;
  if (*dim != rank - 1 && *dim != -1) return std::nullopt;
  if (!start->is_constant() || !end->is_constant()) return std::nullopt;
  const int64_t b = start->constant(), e = std::min(end->constant(), n);
  if (b < 0 || e < b) return std::nullopt;
  return std::make_pair(b, e);
}

// The one-element f32 scale of a mul / div node and its tensor operand, when it has one.
struct Scale {
  Value* tensor = nullptr;
  float value = 1;
  bool divide = false;
};
std::optional<Scale> ScaleOf(const Node* n) {
  if ((n->op() != "aten.mul" && n->op() != "aten.div") || n->num_inputs() != 2 ||
      n->num_outputs() != 1) {
    return std::nullopt;
  }
  Scale s;
  s.divide = n->op() == "aten.div";
  if (s.divide) {
    absl::StatusOr<std::string> mode = GetString(n->attrs(), "rounding_mode");
    if (!mode.ok() || !mode->empty()) return std::nullopt;
  }
  int c = -1;
  for (int i = 0; i < 2; ++i) {
    if (InlineF32(n->input(i), 1) && (i == 1 || !s.divide)) c = i;
  }
  if (c < 0) return std::nullopt;
  s.tensor = n->input(1 - c);
  if (s.tensor->type().dtype != proto::FLOAT32 || n->output(0)->type() != s.tensor->type()) {
    return std::nullopt;
  }
  std::memcpy(&s.value, n->input(c)->constant().raw.data(), 4);
  if (!(s.value != 0) || !std::isfinite(s.value)) return std::nullopt;
  return s;
}

// A copy of the constant `c` ([rows, n] row-major f32) with columns [b, e) scaled.
Value* ScaledColumns(Graph& graph, const Value* c, int64_t rows, int64_t n, int64_t b, int64_t e,
                     const Scale& s) {
  std::string raw = c->constant().raw;
  float* p = reinterpret_cast<float*>(raw.data());
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = b; j < e; ++j) {
      float& w = p[r * n + j];
      w = s.divide ? w / s.value : w * s.value;
    }
  }
  return graph.AddConstant(c->type(), ConstantData{std::move(raw)},
                           absl::StrCat(c->name(), s.divide ? "/" : "*", s.value));
}

// Folds the scale node `m` when it matches; returns whether it did.
bool Fold(Graph& graph, Node* m) {
  std::optional<Scale> s = ScaleOf(m);
  if (!s.has_value()) return false;
  // Back through single-use views to the slice.
  Value* v = s->tensor;
  const Node* user = m;
  while (true) {
    if (graph.IsOutput(v) || v->users().size() != 1 || v->users()[0] != user) return false;
    Node* p = v->producer();
    if (p == nullptr) return false;
    if (IsView(p->op()) && p->num_inputs() >= 1) {
      user = p;
      v = p->input(0);
      continue;
    }
    break;
  }
  Node* slice = v->producer();
  Value* y = slice->num_inputs() == 1 ? slice->input(0) : nullptr;
  if (y == nullptr || graph.IsOutput(y)) return false;
  const int64_t rank = y->type().rank();
  if (rank < 2 || !y->type().shape.back().is_constant()) return false;
  const int64_t n = y->type().shape.back().constant();
  std::optional<std::pair<int64_t, int64_t>> range = LastDimSlice(slice, rank, n);
  if (!range.has_value() || range->first == range->second) return false;
  // Every use of y a last-dim slice; only this one overlaps [b, e).
  for (const Node* u : y->users()) {
    std::optional<std::pair<int64_t, int64_t>> r = LastDimSlice(u, rank, n);
    if (!r.has_value()) return false;
    if (u != slice && r->first < range->second && range->first < r->second) return false;
  }
  // y = [add(b, ] matmul(x, W) [)].
  Node* add = nullptr;
  Node* mm = y->producer();
  if (mm == nullptr) return false;
  int bias_index = -1;
  if (mm->op() == "aten.add") {
    add = mm;
    absl::StatusOr<double> alpha = GetFloat(add->attrs(), "alpha");
    if (!alpha.ok() || *alpha != 1.0 || add->num_inputs() != 2) return false;
    for (int i = 0; i < 2; ++i) {
      if (InlineF32(add->input(i), n) && add->input(i)->type().rank() == 1) bias_index = i;
    }
    if (bias_index < 0) return false;
    Value* product = add->input(1 - bias_index);
    if (product->type() != y->type() || graph.IsOutput(product) ||
        product->users().size() != 1) {
      return false;
    }
    mm = product->producer();
    if (mm == nullptr) return false;
  }
  if ((mm->op() != "aten.matmul" && mm->op() != "aten.mm") || mm->num_inputs() != 2) return false;
  const Value* w = mm->input(1);
  if (w->type().rank() != 2 || !w->type().shape[0].is_constant() ||
      w->type().shape[1] != SymExpr(n)) {
    return false;
  }
  const int64_t k = w->type().shape[0].constant();
  if (!InlineF32(w, k * n) || mm->input(0) == w) return false;

  mm->ReplaceInput(1, ScaledColumns(graph, w, k, n, range->first, range->second, *s));
  if (add != nullptr) {
    add->ReplaceInput(bias_index, ScaledColumns(graph, add->input(bias_index), 1, n,
                                                range->first, range->second, *s));
  }
  graph.ReplaceAllUsesWith(m->output(0), s->tensor);
  graph.RemoveNode(m);
  return true;
}

}  // namespace

absl::StatusOr<int> FoldWeightScales(Graph& graph) {
  int folded = 0;
  for (Node* node : graph.nodes()) {
    if (node->op() == "aten.mul" || node->op() == "aten.div") folded += Fold(graph, node);
  }
  // Only the constants nothing reads any more go; every node stays.
  if (folded > 0) graph.RemoveDeadCode([](const Node&) { return true; });
  return folded;
}

}  // namespace coil::prims
