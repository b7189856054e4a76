// The attention pattern matcher (attention_match.h).
#include "prims/attention_match.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "ir/attribute.h"
#include "ir/op_registry.h"

namespace coil::prims {
namespace {

bool IsOp(const Value* v, const char* op) {
  return v != nullptr && v->producer() != nullptr && v->producer()->op() == op;
}

// Used by exactly one node and not a graph output.
bool SingleUse(const Graph& g, const Value* v) {
  if (v->users().size() != 1) return false;
  return !g.IsOutput(v);
}

// A one-element f32 / f64 / f16 / bf16 constant's value.
std::optional<double> ScalarConstant(const Value* v) {
  if (v->kind() != Value::Kind::kConstant) return std::nullopt;
  for (const SymExpr& d : v->type().shape) {
    if (!(d == SymExpr(1))) return std::nullopt;
  }
  const ConstantData& c = v->constant();
  if (c.is_external()) return std::nullopt;
  if (v->type().dtype == proto::FLOAT32 && c.raw.size() == 4) {
    float f;
    std::memcpy(&f, c.raw.data(), 4);
    return f;
  }
  if (v->type().dtype == proto::FLOAT64 && c.raw.size() == 8) {
    double d;
    std::memcpy(&d, c.raw.data(), 8);
    return d;
  }
  if ((v->type().dtype == proto::BFLOAT16 || v->type().dtype == proto::FLOAT16) &&
      c.raw.size() == 2) {
    uint16_t h;
    std::memcpy(&h, c.raw.data(), 2);
    if (v->type().dtype == proto::BFLOAT16) {
      const uint32_t bits = uint32_t{h} << 16;
      float f;
      std::memcpy(&f, &bits, 4);
      return f;
    }
    // IEEE half: sign, 5 exponent bits (bias 15), 10 mantissa bits.
    const double sign = (h & 0x8000) != 0 ? -1.0 : 1.0;
    const int e = (h >> 10) & 0x1f;
    const int m = h & 0x3ff;
    if (e == 0x1f) return m == 0 ? sign * HUGE_VAL : std::nan("");
    if (e == 0) return sign * std::ldexp(m, -24);
    return sign * std::ldexp(1024 + m, e - 25);
  }
  return std::nullopt;
}

// Whether `raw` (bool [l, l]) is true exactly above the diagonal (j > i).
bool IsCausalBytes(const std::string& raw, int64_t l) {
  if (static_cast<int64_t>(raw.size()) != l * l) return false;
  for (int64_t i = 0; i < l; ++i) {
    for (int64_t j = 0; j < l; ++j) {
      if ((raw[i * l + j] != 0) != (j > i)) return false;
    }
  }
  return true;
}

// Conditions computed at compile time are at most this many elements and nodes.
constexpr int64_t kMaxEvaluatedElements = int64_t{1} << 24;
constexpr size_t kMaxEvaluatedNodes = 64;

// A node whose value a compile-time evaluation may compute: pure (writes nothing, draws no
// random numbers), static attributes and output shapes.
bool IsPureStaticNode(const Node& n) {
  if (n.op() == "prims.copy_to") return false;
  const OpSchema* schema = OpRegistry::Global().Find(n.op());
  if (schema == nullptr || schema->mutated_input >= 0 || schema->op_class == OpClass::kRandom) {
    return false;
  }
  for (const auto& [name, a] : n.attrs()) {
    if (!IsStaticAttr(a)) return false;
  }
  for (const Value* out : n.outputs()) {
    if (!out->type().StaticShape().has_value()) return false;
  }
  return true;
}

// The bytes of `v` when no graph input reaches it (a causal buffer sliced to the sequence, a
// Trilu of ones compared with 0, an iota comparison): the nodes that compute it, copied into a
// graph of their own and run by `evaluate`; nullopt when an input reaches it, a node is not
// pure and static, it is too large, or the evaluation fails.
std::optional<std::string> EvaluatedBytes(const Graph& g, const Value* v,
                                          const ConstantEvaluator& evaluate) {
  if (!evaluate || v->producer() == nullptr) return std::nullopt;
  absl::flat_hash_set<const Node*> needed;
  std::vector<const Value*> stack = {v};
  while (!stack.empty()) {
    const Value* x = stack.back();
    stack.pop_back();
    if (x->kind() == Value::Kind::kConstant) continue;
    const Node* n = x->producer();
    if (n == nullptr) return std::nullopt;  // a graph input
    if (!needed.insert(n).second) continue;
    if (needed.size() > kMaxEvaluatedNodes || !IsPureStaticNode(*n)) return std::nullopt;
    for (const Value* in : n->inputs()) stack.push_back(in);
  }
  Graph sub("attention_condition");
  absl::flat_hash_map<const Value*, Value*> map;
  for (const Node* n : g.nodes()) {  // graph order: producers first
    if (!needed.contains(n)) continue;
    std::vector<Value*> inputs;
    for (Value* in : n->inputs()) {
      auto it = map.find(in);
      if (it == map.end()) {
        it = map.emplace(in, sub.AddConstant(in->type(), in->constant(), in->name())).first;
      }
      inputs.push_back(it->second);
    }
    std::vector<TensorType> types;
    for (const Value* out : n->outputs()) types.push_back(out->type());
    Node* copy = sub.AddNode(n->op(), std::move(inputs), n->attrs(), std::move(types));
    for (int i = 0; i < n->num_outputs(); ++i) map[n->output(i)] = copy->output(i);
  }
  sub.SetOutputs({map.at(v)});
  absl::StatusOr<std::vector<ConstantData>> values = evaluate(sub);
  if (!values.ok() || values->size() != 1 || (*values)[0].is_external()) return std::nullopt;
  return (*values)[0].raw;
}

// A bool [L, L] that is true exactly above the diagonal (j > i): a causal mask's masked_fill
// condition, which the op's is_causal says without a mask. A constant, or computed from
// constants only (then `evaluate` computes it).
bool IsCausalCondition(const Graph& g, const Value* v, const ConstantEvaluator& evaluate) {
  const TensorType& t = v->type();
  if (t.dtype != proto::BOOL || t.rank() != 2) return false;
  std::optional<int64_t> l = t.shape[0].AsConstant(), s = t.shape[1].AsConstant();
  if (!l.has_value() || !s.has_value() || *l != *s || *l * *s > kMaxEvaluatedElements) {
    return false;
  }
  if (v->kind() == Value::Kind::kConstant) {
    return !v->constant().is_external() && IsCausalBytes(v->constant().raw, *l);
  }
  std::optional<std::string> raw = EvaluatedBytes(g, v, evaluate);
  return raw.has_value() && IsCausalBytes(*raw, *l);
}

bool IsNegInfConstant(const Value* v) {
  std::optional<double> x = ScalarConstant(v);
  return x.has_value() && std::isinf(*x) && *x < 0;
}

// `x` = mul(y, c) or div(y, c) (true division) with c a finite non-zero one-element constant,
// used once: its node, with `scale` multiplied by c or 1 / c; else nullptr.
Node* Scaling(const Graph& g, Value* x, double& scale) {
  if (!(IsOp(x, "aten.div") || IsOp(x, "aten.mul")) || !SingleUse(g, x)) return nullptr;
  Node* n = x->producer();
  if (n->num_inputs() != 2) return nullptr;
  auto mode = n->attrs().find("rounding_mode");  // ONNX's Div: "" (true division)
  if (mode != n->attrs().end() && !(std::holds_alternative<std::string>(mode->second) &&
                                    std::get<std::string>(mode->second).empty())) {
    return nullptr;
  }
  std::optional<double> c = ScalarConstant(n->input(1));
  if (!c.has_value() || *c == 0 || !std::isfinite(*c)) return nullptr;
  scale *= n->op() == "aten.div" ? 1.0 / *c : *c;
  return n;
}

// Tries the pattern ending at `out` = matmul(p, v); rewrites it and returns true on a match.
bool IsAttentionDType(DType t) {
  return t == proto::FLOAT32 || t == proto::FLOAT16 || t == proto::BFLOAT16;
}

bool MatchAt(Graph& g, Node* out_mm, const AttentionFilter& keep,
             const ConstantEvaluator& evaluate) {
  if (out_mm->num_inputs() != 2) return false;
  Value* p = out_mm->input(0);
  Value* v = out_mm->input(1);
  Value* o = out_mm->output(0);
  const int64_t rank = o->type().rank();
  const DType dtype = o->type().dtype;
  if (rank < 3 || !IsAttentionDType(dtype) || v->type().rank() != rank) return false;
  if (!IsOp(p, "aten.softmax") || !SingleUse(g, p)) return false;
  Node* sm = p->producer();
  absl::StatusOr<int64_t> dim = GetInt(sm->attrs(), "dim");
  if (!dim.ok() || (*dim != -1 && *dim != rank - 1)) return false;
  auto dt = sm->attrs().find("dtype");
  if (dt != sm->attrs().end() &&
      !(std::holds_alternative<DType>(dt->second) && (std::get<DType>(dt->second) == dtype ||
                                                   std::get<DType>(dt->second) ==
                                                       proto::DTYPE_UNSPECIFIED))) {
    return false;
  }
  Value* s = sm->input(0);
  // Optional masked_fill.
  Value* cond = nullptr;
  Node* where = nullptr;
  if (IsOp(s, "aten.where")) {
    where = s->producer();
    if (!SingleUse(g, s) || !IsNegInfConstant(where->input(1))) return false;
    cond = where->input(0);
    if (cond->type().dtype != proto::BOOL || cond->type().rank() > rank) return false;
    s = where->input(2);
  }
  // The scale: on the scores, or on q and / or K^T before the product (the TorchScript
  // exporter's attention multiplies both by sqrt(scale)).
  double scale = 1;
  Node* scaling = Scaling(g, s, scale);
  if (scaling != nullptr) s = scaling->input(0);
  if (!IsOp(s, "aten.matmul") || !SingleUse(g, s)) return false;
  Node* qk = s->producer();
  Value* q = qk->input(0);
  Value* kt = qk->input(1);
  Node* q_scaling = Scaling(g, q, scale);
  if (q_scaling != nullptr) q = q_scaling->input(0);
  Node* k_scaling = Scaling(g, kt, scale);
  if (k_scaling != nullptr) kt = k_scaling->input(0);
  if (scaling == nullptr && q_scaling == nullptr && k_scaling == nullptr) return false;
  if (q->type().rank() != rank || kt->type().rank() != rank ||
      q->type().dtype != dtype || kt->type().dtype != dtype || v->type().dtype != dtype ||
      sm->input(0)->type().dtype != dtype) {
    return false;
  }
  // The batch dims must agree exactly (the op broadcasts, matmul does too, but keep it plain).
  for (int64_t d = 0; d < rank - 2; ++d) {
    if (!(q->type().shape[d] == kt->type().shape[d]) ||
        !(q->type().shape[d] == v->type().shape[d])) {
      return false;
    }
  }
  TensorType kt_t = kt->type();
  TensorType k_t(kt_t.dtype, kt_t.shape, kt_t.device);
  std::swap(k_t.shape[rank - 2], k_t.shape[rank - 1]);
  const bool causal = cond != nullptr && IsCausalCondition(g, cond, evaluate) &&
                      q->type().shape[rank - 2] == cond->type().shape[0] &&
                      kt->type().shape[rank - 1] == cond->type().shape[1];
  const AttrMap attrs = {{"dropout_p", 0.0},       {"is_causal", causal},
                         {"scale", scale},         {"train", true},
                         {"seed", int64_t{-1}},    {"offset", int64_t{0}}};
  if (keep) {
    std::vector<TensorType> types = {q->type(), k_t, v->type()};
    if (cond != nullptr && !causal) types.push_back(cond->type());
    if (!keep(types, attrs)) return false;
  }
  Node* k = g.InsertNodeBefore(out_mm, "aten.transpose", {kt},
                               {{"dim0", int64_t{-2}}, {"dim1", int64_t{-1}}}, {k_t});
  std::vector<Value*> inputs{q, k->output(0), v};
  if (cond != nullptr && !causal) {
    Node* keep = g.InsertNodeBefore(out_mm, "aten.logical_not", {cond}, {}, {cond->type()});
    inputs.push_back(keep->output(0));
  }
  Node* attn = g.InsertNodeBefore(out_mm, "aten.scaled_dot_product_attention", inputs, attrs,
                                  {o->type()});
  g.ReplaceAllUsesWith(o, attn->output(0));
  g.RemoveNode(out_mm);
  g.RemoveNode(sm);
  if (where != nullptr) g.RemoveNode(where);
  if (scaling != nullptr) g.RemoveNode(scaling);
  g.RemoveNode(qk);
  if (q_scaling != nullptr) g.RemoveNode(q_scaling);
  if (k_scaling != nullptr) g.RemoveNode(k_scaling);
  return true;
}

}  // namespace

int MatchAttention(Graph& graph, const AttentionFilter& keep, const ConstantEvaluator& evaluate) {
  std::vector<Node*> candidates;
  for (Node* n : graph.nodes()) {
    if (n->op() == "aten.matmul") candidates.push_back(n);
  }
  int matched = 0;
  // In topological order, a match's score matmul (removed by it) is visited before its output
  // matmul, so no candidate is visited after it is gone.
  for (Node* n : candidates) {
    if (IsOp(n->input(0), "aten.softmax") && MatchAt(graph, n, keep, evaluate)) ++matched;
  }
  return matched;
}

}  // namespace coil::prims
