// Private helpers shared by the meta functions of elementwise_ops.cc, binary_ops.cc and
// creation_ops.cc, defined in elementwise_meta.cc (not a public API).
#ifndef COIL_IR_OPS_ELEMENTWISE_META_H_
#define COIL_IR_OPS_ELEMENTWISE_META_H_

#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "ir/attribute.h"
#include "ir/op_registry.h"
#include "ir/tensor_type.h"

namespace coil {

namespace elementwise_meta {

using Types = absl::Span<const TensorType>;
using MetaResult = absl::StatusOr<std::vector<TensorType>>;

// One contiguous output.
MetaResult Single(DType dtype, std::vector<SymExpr> shape, Device device);

// The dtype a Python number attribute stands for in promotion: an int attribute is a Python
// int (int64), a float one a Python float.
DType ScalarDType(const Attribute& a);

// torch.result_type over tensors (rank 0 counts as zero-dim) and Python-number attributes.
// Error when the promotion has no coil dtype (uint8 with int8).
absl::StatusOr<DType> PromoteWithScalars(Types tensors, absl::Span<const Attribute* const> scalars);

}  // namespace elementwise_meta
}  // namespace coil

#endif  // COIL_IR_OPS_ELEMENTWISE_META_H_
