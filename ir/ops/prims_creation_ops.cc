// Schemas and meta functions of the creation and random prims (docs/prims.md): full, iota and
// philox_uniform, which make a tensor from attributes alone. (prims.sym_value, also a creation
// prim, is in prims_sym_ops.cc.)
#include <vector>

#include "ir/op_registry.h"
#include "ir/ops/meta_util.h"
#include "ir/ops/register_ops.h"

namespace coil {
namespace {

using meta::Error;
using Types = absl::StatusOr<std::vector<TensorType>>;
using Inputs = absl::Span<const TensorType>;

absl::Status CheckShape(const SymList& shape) {
  for (const SymExpr& d : shape) {
    if (d.is_constant() && d.constant() < 0) {
      return Error("negative size in shape ", meta::ShapeText(shape));
    }
  }
  return absl::OkStatus();
}

Types FullMeta(Inputs, const AttrMap& attrs) {
  SymList shape = meta::SymsAttr(attrs, "shape");
  if (absl::Status s = CheckShape(shape); !s.ok()) return s;
  DType dt = *GetDType(attrs, "dtype");
  return std::vector<TensorType>{meta::Out(dt, std::vector<SymExpr>(shape.begin(), shape.end()),
                                           Device{})};
}

Types IotaMeta(Inputs, const AttrMap& attrs) {
  SymExpr length = meta::SymAttr(attrs, "length");
  if (length.is_constant() && length.constant() < 0) {
    return Error("negative length ", length.constant());
  }
  DType dt = *GetDType(attrs, "dtype");
  if (IsBool(dt)) return Error("expected an integer or floating dtype, got bool");
  return std::vector<TensorType>{meta::Out(dt, {length}, Device{})};
}

Types PhiloxMeta(Inputs, const AttrMap& attrs) {
  SymList shape = meta::SymsAttr(attrs, "shape");
  if (absl::Status s = CheckShape(shape); !s.ok()) return s;
  DType dt = *GetDType(attrs, "dtype");
  if (!IsFloating(dt)) {
    return Error("expected a floating dtype, got ", DTypeName(dt));
  }
  return std::vector<TensorType>{meta::Out(dt, std::vector<SymExpr>(shape.begin(), shape.end()),
                                           Device{})};
}

}  // namespace

void RegisterPrimsCreationOps(OpRegistry& r) {
  auto req = [](const char* name, AttrKind kind) { return AttrSpec{name, kind, std::nullopt}; };
  r.Register(meta::MakeSchema(
      "prims.full", {},
      {req("shape", AttrKind::kSyms), req("value", AttrKind::kFloat), req("dtype", AttrKind::kDType)},
      OpClass::kCreation, FullMeta, "torch.full(shape, value, dtype)"));
  r.Register(meta::MakeSchema("prims.iota", {},
                              {req("length", AttrKind::kSym), req("start", AttrKind::kInt),
                               req("step", AttrKind::kInt), req("dtype", AttrKind::kDType)},
                              OpClass::kCreation, IotaMeta,
                              "1-D start + i * step for i in [0, length) (torch.arange)"));
  r.Register(meta::MakeSchema(
      "prims.philox_uniform", {},
      {req("shape", AttrKind::kSyms), AttrSpec{"seed", AttrKind::kInt, std::nullopt, false},
       AttrSpec{"offset", AttrKind::kSym, std::nullopt, false}, req("dtype", AttrKind::kDType)},
      OpClass::kRandom, PhiloxMeta,
      "uniform [0, 1): element i is (u >> 8) * 2^-24, u the first word of Philox4x32-10 with "
      "key seed and counter offset + i"));
}

}  // namespace coil
