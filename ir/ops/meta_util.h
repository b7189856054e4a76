// Helpers shared by the meta functions of every op family: broadcasting, dimension
// normalization, PyTorch-style type promotion over tensor operands, readers for normalized
// attribute maps and shape text for messages.
//
//   int64_t dim = meta::IntAttr(attrs, "dim");  // attrs already normalized by the registry
//   return meta::Error("expected ", meta::ShapeText(want), ", got ", meta::ShapeText(x.shape));
#ifndef COIL_IR_OPS_META_UTIL_H_
#define COIL_IR_OPS_META_UTIL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "ir/attribute.h"
#include "ir/op_registry.h"
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

// A contiguous output type with x's dtype and device and the given shape.
inline TensorType Like(const TensorType& x, std::vector<SymExpr> shape) {
  return Out(x.dtype, std::move(shape), x.device);
}

// A schema with every field given (the families wrap it with their op class and inputs).
OpSchema MakeSchema(std::string name, std::vector<OpInput> inputs, std::vector<AttrSpec> attrs,
                    OpClass op_class, MetaFn meta, std::string doc);

// Attribute readers for maps the registry has normalized (every schema attribute present with
// its kind): CHECK-fail when `name` is missing or of another kind, which is a compiler bug.
int64_t IntAttr(const AttrMap& attrs, absl::string_view name);
IntList IntsAttr(const AttrMap& attrs, absl::string_view name);
SymExpr SymAttr(const AttrMap& attrs, absl::string_view name);
SymList SymsAttr(const AttrMap& attrs, absl::string_view name);
std::string StringAttr(const AttrMap& attrs, absl::string_view name);

// "[2, s, 3]": a symbolic shape for messages.
std::string ShapeText(absl::Span<const SymExpr> shape);

// True when `e` is the constant `v`.
inline bool IsConst(const SymExpr& e, int64_t v) { return e.is_constant() && e.constant() == v; }

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
