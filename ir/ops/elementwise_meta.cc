// Definitions of the helpers declared in elementwise_meta.h: the single-output result and
// torch.result_type over tensors and Python-number attributes, shared by the meta functions of
// elementwise_ops.cc, binary_ops.cc and creation_ops.cc.
#include "ir/ops/elementwise_meta.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/ops/meta_util.h"

namespace coil {
namespace elementwise_meta {

MetaResult Single(DType dtype, std::vector<SymExpr> shape, Device device) {
  return std::vector<TensorType>{meta::Out(dtype, std::move(shape), device)};
}

DType ScalarDType(const Attribute& a) {
  return KindOf(a) == AttrKind::kInt ? proto::INT64 : proto::FLOAT64;
}

absl::StatusOr<DType> PromoteWithScalars(Types tensors,
                                         absl::Span<const Attribute* const> scalars) {
  ResultTypeBuilder b;
  for (const TensorType& t : tensors) {
    b.Add(t.dtype, t.rank() == 0 ? OperandKind::kZeroDim : OperandKind::kDimensioned);
  }
  for (const Attribute* a : scalars) b.Add(ScalarDType(*a), OperandKind::kWrappedNumber);
  DType r = b.Result();
  if (r == proto::DTYPE_UNSPECIFIED) {
    std::string names;
    for (const TensorType& t : tensors) {
      absl::StrAppend(&names, names.empty() ? "" : ", ", DTypeName(t.dtype));
    }
    return meta::Error("no common dtype for (", names,
                       "): PyTorch would use int16, which coil lacks");
  }
  return r;
}

}  // namespace elementwise_meta

}  // namespace coil
