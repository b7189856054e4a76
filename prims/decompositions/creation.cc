// Decompositions of the creation ops (see register.h): full, zeros, ones, the *_like ops and
// arange, the ops of ir/ops/creation_ops.cc, onto prims.full and prims.iota.
#include <cstdint>
#include <variant>
#include <vector>

#include "ir/dtype.h"
#include "prims/decomposition_registry.h"
#include "prims/decompositions/binary_internal.h"
#include "prims/decompositions/register.h"

namespace coil::prims {
namespace {

using binary_internal::Number;

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

void RegisterCreationDecompositions(DecompositionRegistry& r) {
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

}  // namespace coil::prims
