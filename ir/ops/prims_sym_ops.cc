// prims.sym_value: a rank-0 tensor holding the value of a symbolic integer expression.
//
// Decompositions need sizes as data (a mean divides by the number of reduced elements, which
// is symbolic when the graph has dynamic shapes). Inductor's `index_expr` plays this role.
#include "ir/op_registry.h"
#include "ir/ops/meta_util.h"
#include "ir/ops/register_ops.h"

namespace coil {

void RegisterPrimsSymOps(OpRegistry& registry) {
  registry.Register(meta::MakeSchema(
      "prims.sym_value", {},
      {{"value", AttrKind::kSym, std::nullopt}, {"dtype", AttrKind::kDType, std::nullopt}},
      OpClass::kCreation,
      [](absl::Span<const TensorType>, const AttrMap& attrs)
          -> absl::StatusOr<std::vector<TensorType>> {
        absl::StatusOr<DType> dtype = GetDType(attrs, "dtype");
        if (!dtype.ok()) return dtype.status();
        if (IsBool(*dtype) || *dtype == proto::DTYPE_UNSPECIFIED) {
          return meta::Error("needs a numeric dtype, got ", DTypeName(*dtype));
        }
        return std::vector<TensorType>{TensorType(*dtype, {})};
      },
      "a rank-0 tensor holding a symbolic integer's value, converted to dtype (Inductor's "
      "index_expr)"));
}

}  // namespace coil
