// MatchExternEpilogue (extern_epilogue.h): the epilogue's expression tree read back into
// post-op steps, innermost first.
#include "runtime/cpu/internal/extern_epilogue.h"

#include <cmath>
#include <utility>
#include <limits>
#include <string>
#include <variant>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "ir/attribute.h"
#include "ir/channels_last.h"

namespace coil::cpu {
namespace {

using Step = EpilogueMatch::Step;
using Steps = std::vector<Step>;

// The epilogue of a result of type `dtype`: f32, or bf16 (--precision bf16), whose epilogue
// computes in bf16 or in f32 between converts (a residual add: bf16 -> f32, add, -> bf16).
// oneDNN applies the post-ops to its f32 accumulator and rounds to bf16 once at the end, where
// the generated epilogue rounds the convolution's result first: at most one bf16 rounding apart.
class Matcher {
 public:
  // `mm`: an aten.mm's epilogue, which may also start with a bias and apply a GELU.
  // `result`: the buffer whose identity load starts a chain (the extern's result, or -1 for
  // it; a scaled input's activation).
  Matcher(const proto::Kernel& k, int rank, DType dtype, bool mm, const ScalarConstant& scalar,
          int result = -1)
      : k_(k), rank_(rank), dtype_(dtype), mm_(mm), scalar_(scalar),
        result_(result >= 0 ? result : k.extern_output()) {
    for (const proto::Expr& e : k.loops(0).body()) exprs_[e.id()] = &e;
  }

  // The steps that turn the extern's result into the value `id`, or nullopt.
  std::optional<Steps> Chain(int id) const {
    const proto::Expr* e = Find(Strip(id));
    if (e == nullptr) return std::nullopt;
    if (IsResultLoad(*e)) return Steps{};
    if (e->kind() != proto::Expr::APPLY || !Computed(e->dtype()) || e->args_size() != 2) {
      return std::nullopt;
    }
    const int a = e->args(0), b = e->args(1);
    const std::string& op = e->op();
    if (mm_ && op == "prims.mul") {
      if (std::optional<std::pair<int, ExternEpilogueStep::Kind>> g = Gelu(*e)) {
        std::optional<Steps> s = Chain(g->first);
        if (!s) return std::nullopt;
        s->push_back(Step{g->second});
        return s;
      }
    }
    for (auto [x, y] : {std::pair(a, b), std::pair(b, a)}) {
      if (op == "prims.add" && mm_ && BiasLoad(y) != 0) {  // the bias: first, or not at all
        std::optional<Steps> s = Chain(x);
        if (!s || !s->empty()) continue;
        return Steps{Step{ExternEpilogueStep::kBias, 0, 0, BiasLoad(y)}};
      }
      if (op == "prims.add") {
        const int residual = ResidualLoad(y);
        if (residual == 0) continue;
        std::optional<Steps> s = Chain(x);
        if (!s) continue;
        s->push_back(Step{ExternEpilogueStep::kAdd, 0, 0, residual});
        return s;
      }
      if (op == "prims.maximum" || op == "prims.minimum") {
        std::optional<double> c = Literal(y);
        if (!c) continue;
        std::optional<Steps> s = Chain(x);
        if (!s) continue;
        const float v = static_cast<float>(*c);
        constexpr float kInf = std::numeric_limits<float>::infinity();
        if (op == "prims.maximum") {
          s->push_back(v == 0 ? Step{ExternEpilogueStep::kRelu}
                              : Step{ExternEpilogueStep::kClip, v, kInf});
        } else if (!s->empty() && s->back().kind == ExternEpilogueStep::kRelu) {
          s->back() = Step{ExternEpilogueStep::kClip, 0, v};  // relu6 and clamp(0, v)
        } else if (!s->empty() && s->back().kind == ExternEpilogueStep::kClip &&
                   s->back().hi == kInf && v >= s->back().lo) {
          s->back().hi = v;
        } else {
          s->push_back(Step{ExternEpilogueStep::kClip, -kInf, v});
        }
        return s;
      }
      if (op == "prims.mul" && IsHardSigmoidOf(y, x)) {  // x * min(max(x / 6 + 1/2, 0), 1)
        std::optional<Steps> s = Chain(x);
        if (!s) continue;
        s->push_back(Step{ExternEpilogueStep::kHardswish});
        return s;
      }
    }
    // x * min(max(x + 3, 0), 6) / 6 (aten.hardswish's decomposition).
    if (op == "prims.div" && Near(Literal(b), 6)) {
      const proto::Expr* m = Apply(a, "prims.mul");
      if (m == nullptr) return std::nullopt;
      for (auto [x, y] : {std::pair(m->args(0), m->args(1)), std::pair(m->args(1), m->args(0))}) {
        if (!IsClamp(y, 0, 6, [&](int z) { return IsAddOf(z, x, 3); })) continue;
        std::optional<Steps> s = Chain(x);
        if (!s) continue;
        s->push_back(Step{ExternEpilogueStep::kHardswish});
        return s;
      }
    }
    return std::nullopt;
  }

  // The residual buffer `id` loads (0 when it is not a plain load of another buffer of the
  // result's type).
  int ResidualLoad(int id) const {
    const proto::Expr* e = Find(Strip(id));
    if (e == nullptr || e->kind() != proto::Expr::LOAD || e->dtype() != dtype_ ||
        e->mask() != 0 || e->buffer() == k_.extern_output() || !Identity(*e)) {
      return 0;
    }
    return e->buffer();
  }

  // The bias buffer `id` loads (0 when it is not a load of another buffer of the result's type
  // at the last index alone: one value per column).
  int BiasLoad(int id) const {
    const proto::Expr* e = Find(id);
    if (e == nullptr || e->kind() != proto::Expr::LOAD || e->dtype() != dtype_ ||
        e->mask() != 0 || e->buffer() == k_.extern_output() || e->index_size() != 1) {
      return 0;
    }
    const proto::SymExpr& i = e->index(0);
    if (i.kind() != proto::SymExpr::SYMBOL || i.name() != absl::StrCat("_i", rank_ - 1)) return 0;
    return e->buffer();
  }

  bool Identity(const proto::Expr& e) const {
    if (e.index_size() != rank_) return false;
    for (int d = 0; d < rank_; ++d) {
      const proto::SymExpr& i = e.index(d);
      if (i.kind() != proto::SymExpr::SYMBOL || i.name() != absl::StrCat("_i", d)) return false;
    }
    return true;
  }

  const proto::Expr* Find(int id) const {
    auto it = exprs_.find(id);
    return it == exprs_.end() ? nullptr : it->second;
  }

 private:
  // Whether the epilogue may compute in `t`: f32, or the result's type.
  bool Computed(DType t) const { return t == proto::FLOAT32 || t == dtype_; }
  // `id` without the converts between f32 and a bf16 result's type around it.
  int Strip(int id) const {
    if (dtype_ == proto::FLOAT32) return id;
    for (const proto::Expr* e = Find(id);
         e != nullptr && e->kind() == proto::Expr::APPLY &&
         e->op() == "prims.convert_element_type" && e->args_size() == 1 && Computed(e->dtype());
         e = Find(id)) {
      const proto::Expr* from = Find(e->args(0));
      if (from == nullptr || !Computed(from->dtype())) break;
      id = e->args(0);
    }
    return id;
  }
  bool IsResultLoad(const proto::Expr& e) const {
    return e.kind() == proto::Expr::LOAD && e.buffer() == result_ && e.mask() == 0 &&
           e.dtype() == dtype_ && Identity(e);
  }
  // A literal, or a load of a scalar constant (ONNX exports keep GELU's constants as
  // initializers).
  std::optional<double> Literal(int id) const {
    const proto::Expr* e = Find(Strip(id));
    if (e == nullptr || !Computed(e->dtype())) return std::nullopt;
    if (e->kind() == proto::Expr::LITERAL) return e->literal();
    if (e->kind() == proto::Expr::LOAD && e->index_size() == 0 && e->mask() == 0 && scalar_) {
      return scalar_(e->buffer());
    }
    return std::nullopt;
  }
  // The unary APPLY `op` of `id`'s argument, or nullopt.
  std::optional<int> UnaryArg(int id, const char* op) const {
    const proto::Expr* e = Find(id);
    if (e == nullptr || e->kind() != proto::Expr::APPLY || e->op() != op || e->args_size() != 1) {
      return std::nullopt;
    }
    return e->args(0);
  }
  // `id` is x * c or c * x (or, for div, x / (1 / c)).
  bool IsScaled(int id, int x, double c) const {
    if (IsOpWith(id, "prims.mul", c, [&](int z) { return z == x; })) return true;
    const proto::Expr* e = Apply(id, "prims.div");
    return e != nullptr && e->args(0) == x && Near(Literal(e->args(1)), 1.0 / c);
  }
  // Whether `id` is a product (prims.mul in any grouping) of `x` `power` times and literals
  // whose product is `c`: 0.044715 * x^3 as ONNX exports and aten.gelu's decomposition spell it.
  bool IsMonomial(int id, int x, int power, double c) const {
    int count = 0;
    double product = 1;
    std::vector<int> todo = {id};
    while (!todo.empty() && todo.size() < 16) {
      const int t = todo.back();
      todo.pop_back();
      if (t == x) {
        ++count;
      } else if (std::optional<double> v = Literal(t)) {
        product *= *v;
      } else if (const proto::Expr* e = Apply(t, "prims.mul")) {
        todo.push_back(e->args(0));
        todo.push_back(e->args(1));
      } else {
        return false;
      }
    }
    return todo.empty() && count == power && Near(product, c);
  }
  // 1 + erf(x / sqrt(2)) or 1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3)) as the GELU kind, with
  // `x` the argument tried.
  std::optional<ExternEpilogueStep::Kind> GeluFactor(int id, int x) const {
    const proto::Expr* e = Apply(id, "prims.add");
    if (e == nullptr) return std::nullopt;
    for (auto [t, one] : {std::pair(e->args(0), e->args(1)), std::pair(e->args(1), e->args(0))}) {
      if (!Near(Literal(one), 1)) continue;
      if (std::optional<int> u = UnaryArg(t, "prims.erf")) {
        if (IsScaled(*u, x, 1 / std::sqrt(2.0))) return ExternEpilogueStep::kGeluErf;
      }
      if (std::optional<int> u = UnaryArg(t, "prims.tanh")) {
        const bool tanh = IsOpWith(*u, "prims.mul", std::sqrt(2 / M_PI), [&](int z) {
          const proto::Expr* sum = Apply(z, "prims.add");
          if (sum == nullptr) return false;
          for (auto [v, c] : {std::pair(sum->args(0), sum->args(1)),
                              std::pair(sum->args(1), sum->args(0))}) {
            if (v == x && IsMonomial(c, x, 3, 0.044715)) return true;
          }
          return false;
        });
        if (tanh) return ExternEpilogueStep::kGeluTanh;
      }
    }
    return std::nullopt;
  }
  // A GELU of some x: (x * F) * 0.5, (x * 0.5) * F or x * (F * 0.5) in any operand order, F
  // a GeluFactor of x. The x and the kind, or nullopt.
  std::optional<std::pair<int, ExternEpilogueStep::Kind>> Gelu(const proto::Expr& e) const {
    const int a = e.args(0), b = e.args(1);
    for (auto [p, q] : {std::pair(a, b), std::pair(b, a)}) {
      const proto::Expr* m = Apply(p, "prims.mul");
      if (m == nullptr) continue;
      for (auto [u, w] : {std::pair(m->args(0), m->args(1)), std::pair(m->args(1), m->args(0))}) {
        if (Near(Literal(q), 0.5)) {  // (u * w) * 0.5 with u = x, w = F
          if (std::optional<ExternEpilogueStep::Kind> k = GeluFactor(w, u)) return {{u, *k}};
        }
        if (Near(Literal(w), 0.5)) {  // (u * 0.5) * q, or q * (u * 0.5) with F = u
          if (std::optional<ExternEpilogueStep::Kind> k = GeluFactor(q, u)) return {{u, *k}};
          if (std::optional<ExternEpilogueStep::Kind> k = GeluFactor(u, q)) return {{q, *k}};
        }
      }
    }
    return std::nullopt;
  }
  static bool Near(std::optional<double> v, double want) {
    return v.has_value() && std::abs(*v - want) <= 1e-6 * std::max(1.0, std::abs(want));
  }
  const proto::Expr* Apply(int id, const char* op) const {
    const proto::Expr* e = Find(id);
    if (e == nullptr || e->kind() != proto::Expr::APPLY || e->op() != op || e->args_size() != 2) {
      return nullptr;
    }
    return e;
  }
  // `id` is `op`(inner, c) in either order with inner satisfying `pred`.
  template <typename Pred>
  bool IsOpWith(int id, const char* op, double c, Pred pred) const {
    const proto::Expr* e = Apply(id, op);
    if (e == nullptr) return false;
    return (Near(Literal(e->args(1)), c) && pred(e->args(0))) ||
           (Near(Literal(e->args(0)), c) && pred(e->args(1)));
  }
  // min(max(inner, lo), hi).
  template <typename Pred>
  bool IsClamp(int id, double lo, double hi, Pred pred) const {
    return IsOpWith(id, "prims.minimum", hi,
                    [&](int m) { return IsOpWith(m, "prims.maximum", lo, pred); });
  }
  bool IsAddOf(int id, int x, double c) const {
    return IsOpWith(id, "prims.add", c, [&](int z) { return z == x; });
  }
  // min(max(x * (1/6) + 1/2, 0), 1): ONNX HardSigmoid(alpha 1/6, beta 1/2).
 public:
  bool IsHardSigmoidOf(int id, int x) const {
    return IsClamp(id, 0, 1, [&](int z) {
      return IsOpWith(z, "prims.add", 0.5, [&](int w) {
        return IsOpWith(w, "prims.mul", 1.0 / 6.0, [&](int v) { return v == x; });
      });
    });
  }

  // hardsigmoid(x) in either spelling: ONNX's (above), or aten.hardsigmoid's decomposition
  // min(max(x + 3, 0), 6) / 6 (or times 1/6).
  bool IsAnyHardSigmoidOf(int id, int x) const {
    if (IsHardSigmoidOf(id, x)) return true;
    const proto::Expr* e = Find(id);
    if (e == nullptr || e->kind() != proto::Expr::APPLY || e->args_size() != 2) return false;
    for (int inner : {e->args(0), e->args(1)}) {
      if (IsScaled(id, inner, 1.0 / 6.0) &&
          IsClamp(inner, 0, 6, [&](int z) { return IsAddOf(z, x, 3); })) {
        return true;
      }
    }
    return false;
  }

 private:
  const proto::Kernel& k_;
  const int rank_;
  const DType dtype_;
  const bool mm_;
  const ScalarConstant& scalar_;
  const int result_;
  absl::flat_hash_map<int, const proto::Expr*> exprs_;
};

// Whether any kernel other than `self` reads buffer `id`.
bool ReadElsewhere(const proto::Schedule& s, int self, int id) {
  for (int i = 0; i < s.kernels_size(); ++i) {
    if (i == self) continue;
    const proto::Kernel& k = s.kernels(i);
    for (int in : k.extern_inputs()) {
      if (in == id) return true;
    }
    for (const proto::Loop& l : k.loops()) {
      for (const proto::Expr& e : l.body()) {
        if (e.kind() == proto::Expr::LOAD && e.buffer() == id) return true;
      }
    }
  }
  return false;
}

const proto::Buffer* BufferOf(const proto::Schedule& s, int id) {
  for (const proto::Buffer& b : s.buffers()) {
    if (b.id() == id) return &b;
  }
  return nullptr;
}

// Whether the convolution writes its result channels-last (ir/channels_last.h). oneDNN then
// runs it in its nhwc brgconv / jit_1x1 kernels, which apply a binary post-op vectorized
// (resnet50 batch 1 on 2 threads: 61-135 ms with the residual adds as post-ops against
// 88-184 ms without, alternated), not through the GEMM-based convolution's reference path.
bool WritesChannelsLast(const proto::Kernel& k) {
  for (const proto::NamedAttribute& a : k.extern_attrs()) {
    if (a.name() != kChannelsLastAttr) continue;
    absl::StatusOr<Attribute> v = AttrFromProto(a.value());
    if (!v.ok() || !std::holds_alternative<IntList>(*v)) return false;
    const IntList& flags = std::get<IntList>(*v);
    return flags.size() == 2 && flags[1] == 1;
  }
  return false;
}

}  // namespace

std::optional<EpilogueMatch> MatchExternEpilogue(const proto::Schedule& schedule,
                                                 int kernel_index, bool residuals,
                                                 const ScalarConstant& scalar) {
  const proto::Kernel& k = schedule.kernels(kernel_index);
  const bool mm = k.extern_op() == "aten.mm";
  if (k.kind() != proto::Kernel::EXTERN || (k.extern_op() != "aten.convolution" && !mm) ||
      k.loops_size() != 1 || k.loops(0).ranges_size() != 0 || k.ranges_size() < 1) {
    return std::nullopt;
  }
  const proto::Buffer* result = BufferOf(schedule, k.extern_output());
  if (result == nullptr || result->kind() != proto::Buffer::INTERMEDIATE ||
      (result->dtype() != proto::FLOAT32 && (mm || result->dtype() != proto::BFLOAT16)) ||
      result->shape_size() != k.ranges_size() ||
      ReadElsewhere(schedule, kernel_index, k.extern_output())) {
    return std::nullopt;
  }
  Matcher m(k, k.ranges_size(), result->dtype(), mm, scalar);
  const proto::Expr* store = nullptr;
  for (const proto::Expr& e : k.loops(0).body()) {
    if (e.kind() != proto::Expr::STORE) continue;
    if (store != nullptr) return std::nullopt;  // a second output
    store = &e;
  }
  // A bf16 result's epilogue stores bf16, or f32 (oneDNN writes either).
  if (store == nullptr || store->mask() != 0 ||
      (store->dtype() != proto::FLOAT32 && store->dtype() != result->dtype()) ||
      store->args_size() != 1 || !m.Identity(*store) || store->buffer() == k.extern_output()) {
    return std::nullopt;
  }
  const proto::Buffer* dst = BufferOf(schedule, store->buffer());
  if (dst == nullptr || dst->dtype() != store->dtype()) return std::nullopt;
  std::optional<std::vector<Step>> steps = m.Chain(store->args(0));
  if (!steps || steps->empty()) return std::nullopt;
  // Residual adds: asked for, into a channels-last result, or after a matmul (the runtime
  // still measures the post-op path against the generated epilogue per site unless
  // COIL_CONV_POST_OPS / COIL_MM_POST_OPS say).
  const bool adds = residuals || mm || WritesChannelsLast(k);
  for (const Step& s : *steps) {
    if ((s.kind == ExternEpilogueStep::kAdd || s.kind == ExternEpilogueStep::kBias) &&
        (!adds || s.buffer == store->buffer())) {
      return std::nullopt;
    }
  }
  return EpilogueMatch{*std::move(steps), store->buffer()};
}

std::optional<ScaledInputMatch> MatchScaledInput(const proto::Schedule& schedule,
                                                 int kernel_index, int conv_index) {
  const proto::Kernel& k = schedule.kernels(kernel_index);
  const proto::Kernel& conv = schedule.kernels(conv_index);
  if (k.kind() != proto::Kernel::POINTWISE || k.loops_size() != 1 ||
      k.loops(0).ranges_size() != 0 || k.ranges_size() != 4 ||
      conv.kind() != proto::Kernel::EXTERN || conv.extern_op() != "aten.convolution" ||
      conv.extern_inputs_size() < 2) {
    return std::nullopt;
  }
  const proto::Expr* store = nullptr;
  for (const proto::Expr& e : k.loops(0).body()) {
    if (e.kind() != proto::Expr::STORE) continue;
    if (store != nullptr) return std::nullopt;  // a second output
    store = &e;
  }
  if (store == nullptr || store->mask() != 0 || store->dtype() != proto::FLOAT32 ||
      store->args_size() != 1) {
    return std::nullopt;
  }
  const int y = store->buffer();
  const proto::Buffer* ybuf = BufferOf(schedule, y);
  if (ybuf == nullptr || ybuf->kind() != proto::Buffer::INTERMEDIATE ||
      ybuf->dtype() != proto::FLOAT32 || ybuf->shape_size() != 4 ||
      conv.extern_inputs(0) != y || ReadElsewhere(schedule, conv_index, y)) {
    return std::nullopt;
  }
  for (int i = 1; i < conv.extern_inputs_size(); ++i) {
    if (conv.extern_inputs(i) == y) return std::nullopt;
  }
  for (int out : schedule.outputs()) {
    if (out == y) return std::nullopt;
  }
  // The activation x (a load at the store's index) and the scale (a load at [_i0, 0, 0, _i3]).
  const auto symbol = [](const proto::SymExpr& i, int d) {
    return i.kind() == proto::SymExpr::SYMBOL && i.name() == absl::StrCat("_i", d);
  };
  const auto zero = [](const proto::SymExpr& i) {
    return i.kind() == proto::SymExpr::CONST && i.value() == 0;
  };
  int x = 0, x_id = -1, scale = 0, scale_id = -1;
  for (const proto::Expr& e : k.loops(0).body()) {
    if (e.kind() != proto::Expr::LOAD || e.mask() != 0 || e.dtype() != proto::FLOAT32 ||
        e.index_size() != 4) {
      continue;
    }
    if (symbol(e.index(0), 0) && zero(e.index(1)) && zero(e.index(2)) && symbol(e.index(3), 3)) {
      if (scale_id >= 0) return std::nullopt;
      scale = e.buffer();
      scale_id = e.id();
    } else if (symbol(e.index(0), 0) && symbol(e.index(1), 1) && symbol(e.index(2), 2) &&
               symbol(e.index(3), 3)) {
      if (x_id >= 0) return std::nullopt;
      x = e.buffer();
      x_id = e.id();
    }
  }
  if (x_id < 0 || scale_id < 0 || x == y || scale == y) return std::nullopt;
  const proto::Buffer* xbuf = BufferOf(schedule, x);
  const proto::Buffer* sbuf = BufferOf(schedule, scale);
  if (xbuf == nullptr || xbuf->dtype() != proto::FLOAT32 || xbuf->shape_size() != 4 ||
      sbuf == nullptr || sbuf->dtype() != proto::FLOAT32 || sbuf->shape_size() != 4) {
    return std::nullopt;
  }
  const ScalarConstant none;
  Matcher m(k, 4, proto::FLOAT32, /*mm=*/false, none, x);
  const proto::Expr* mul = m.Find(store->args(0));
  if (mul == nullptr || mul->kind() != proto::Expr::APPLY || mul->op() != "prims.mul" ||
      mul->args_size() != 2) {
    return std::nullopt;
  }
  for (auto [a, b] : {std::pair(mul->args(0), mul->args(1)), std::pair(mul->args(1), mul->args(0))}) {
    const bool hardsigmoid = b != scale_id && m.IsAnyHardSigmoidOf(b, scale_id);
    if (b != scale_id && !hardsigmoid) continue;
    std::optional<Steps> steps = m.Chain(a);
    if (!steps) continue;
    bool pointwise = true;
    for (const Step& s : *steps) {
      pointwise = pointwise && (s.kind == ExternEpilogueStep::kRelu ||
                                s.kind == ExternEpilogueStep::kClip ||
                                s.kind == ExternEpilogueStep::kHardswish);
    }
    if (!pointwise) continue;
    return ScaledInputMatch{x, *std::move(steps), scale, hardsigmoid, y};
  }
  return std::nullopt;
}

}  // namespace coil::cpu
