// Helpers shared by the meta functions of every op family: broadcasting, dimension
// normalization and PyTorch-style type promotion over tensor operands.
#ifndef COIL_IR_OPS_META_UTIL_H_
#define COIL_IR_OPS_META_UTIL_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "ir/tensor_type.h"

namespace coil::meta {

// Broadcasts two shapes (numpy/PyTorch rules). Symbolic dimensions broadcast when they are
// provably equal or one side is the constant 1; anything else is an error naming both dims.
absl::StatusOr<std::vector<SymExpr>> BroadcastShapes(absl::Span<const SymExpr> a,
                                                     absl::Span<const SymExpr> b);
absl::StatusOr<std::vector<SymExpr>> BroadcastAll(absl::Span<const TensorType> inputs);

// Wraps a possibly negative dim into [0, rank); error when out of range. A rank-0 tensor
// accepts dims -1 and 0 (as PyTorch).
absl::StatusOr<int64_t> NormalizeDim(int64_t dim, int64_t rank);
// Normalizes a list of dims; duplicates are an error. An empty list means all dims when
// `empty_means_all`.
absl::StatusOr<std::vector<int64_t>> NormalizeDims(absl::Span<const int64_t> dims, int64_t rank,
                                                   bool empty_means_all);

// torch.result_type over tensor operands (rank-0 tensors count as zero-dim operands).
absl::StatusOr<DType> ResultType(absl::Span<const TensorType> inputs);

// All inputs on the same device; returns it.
absl::StatusOr<Device> CommonDevice(absl::Span<const TensorType> inputs);

// A contiguous output type.
inline TensorType Out(DType dtype, std::vector<SymExpr> shape, Device device) {
  return TensorType(dtype, std::move(shape), device);
}

// Error helper: InvalidArgument with the pieces concatenated.
template <typename... Args>
absl::Status Error(const Args&... args);

}  // namespace coil::meta

#include "absl/strings/str_cat.h"

namespace coil::meta {
template <typename... Args>
absl::Status Error(const Args&... args) {
  return absl::InvalidArgumentError(absl::StrCat(args...));
}
}  // namespace coil::meta

#endif  // COIL_IR_OPS_META_UTIL_H_
