// Decompositions of the ternary elementwise ops (where, lerp, addcmul, addcdiv, masked_fill)
// and the creation ops (full, zeros, ones, *_like, arange) of ir/ops/elementwise_ops_2.cc.
#include <cstdint>
#include <variant>
#include <vector>

#include "ir/dtype.h"
#include "prims/decomposition_registry.h"
#include "prims/decompositions/binary_internal.h"

namespace coil::prims::binary_internal {
namespace {

// torch.arange's accumulation type: double for f32/f64 (CPU acc_type), f32 for f16/bf16.
DType ArangeDType(DType out) {
  return out == proto::FLOAT64 || out == proto::FLOAT32 ? proto::FLOAT64 : proto::FLOAT32;
}

// An integral arange bound: an int attribute as is, a float one truncated (as torch).
int64_t IntBound(const OpCall& c, absl::string_view attr) {
  const Attribute* a = c.Raw(attr);
  if (a != nullptr && KindOf(*a) == AttrKind::kInt) return std::get<int64_t>(*a);
  return static_cast<int64_t>(c.Float(attr));
}

}  // namespace

void RegisterTernaryAndCreation(DecompositionRegistry& r) {
  // where(cond, a, b) -> prims.where(cond != 0, a, b), a and b converted to the out dtype
  r.Add("aten.where", [](const OpCall& c) -> std::vector<Val> {
    DType t = c.out_dtype();
    return {Where(c.in(0), Cast(c.in(1), t), Cast(c.in(2), t))};
  });
  // lerp(s, e, w) -> |w| < 0.5 ? s + w * (e - s) : e - (e - s) * (1 - w)
  r.Add("aten.lerp", [](const OpCall& c) -> std::vector<Val> {
    Val s = Upcast(c.in(0)), e = Upcast(c.in(1)), w = Upcast(c.in(2));
    Val d = e - s;
    return {Cast(Where(Lt(Abs(w), 0.5), s + w * d, e - d * (1.0 - w)), c.out_dtype())};
  });
  // addcmul(s, t1, t2, value) -> s + value * t1 * t2 (value converted to the dtype)
  r.Add("aten.addcmul", [](const OpCall& c) -> std::vector<Val> {
    DType t = ComputeDType(c.out_dtype());
    Val p = Number(c, "value", t) * Cast(c.in(1), t) * Cast(c.in(2), t);
    return {Cast(Cast(c.in(0), t) + p, c.out_dtype())};
  });
  // addcdiv(s, t1, t2, value) -> s + value * (t1 / t2)
  r.Add("aten.addcdiv", [](const OpCall& c) -> std::vector<Val> {
    DType t = ComputeDType(c.out_dtype());
    Val q = Number(c, "value", t) * (Cast(c.in(1), t) / Cast(c.in(2), t));
    return {Cast(Cast(c.in(0), t) + q, c.out_dtype())};
  });
  // masked_fill(x, mask, value) -> where(mask != 0, value, x)
  r.Add("aten.masked_fill", [](const OpCall& c) -> std::vector<Val> {
    return {Where(c.in(1), Number(c, "value", c.out_dtype()), c.in(0))};
  });

  // full(size, value, dtype) -> prims.full(size, value, dtype)
  r.Add("aten.full", [](const OpCall& c) -> std::vector<Val> {
    return {Number(c, "value", c.out_dtype(), c.out_shape())};
  });
  // full_like(x, value, dtype) -> prims.full(x.shape, value, dtype)
  r.Add("aten.full_like", [](const OpCall& c) -> std::vector<Val> {
    return {Number(c, "value", c.out_dtype(), c.out_shape())};
  });
  // zeros(size, dtype) -> prims.full(size, 0, dtype); zeros_like likewise
  for (const char* op : {"aten.zeros", "aten.zeros_like"}) {
    r.Add(op, [](const OpCall& c) -> std::vector<Val> {
      return {Full(c.e(), c.out_shape(), 0, c.out_dtype())};
    });
  }
  // ones(size, dtype) -> prims.full(size, 1, dtype); ones_like likewise
  for (const char* op : {"aten.ones", "aten.ones_like"}) {
    r.Add(op, [](const OpCall& c) -> std::vector<Val> {
      return {Full(c.e(), c.out_shape(), 1, c.out_dtype())};
    });
  }
  // arange(start, end, step) -> integral: iota(n, trunc(start), trunc(step));
  //   floating: start + iota(n) * step in torch's accumulation dtype, then converted
  r.Add("aten.arange", [](const OpCall& c) -> std::vector<Val> {
    DType out = c.out_dtype();
    SymExpr n = c.out_shape()[0];
    if (!IsFloating(out)) {
      return {Iota(c.e(), n, IntBound(c, "start"), IntBound(c, "step"), out)};
    }
    DType acc = ArangeDType(out);
    Val i = Iota(c.e(), n, 0, 1, acc);
    return {Cast(Number(c, "start", acc) + i * Number(c, "step", acc), out)};
  });
}

}  // namespace coil::prims::binary_internal
