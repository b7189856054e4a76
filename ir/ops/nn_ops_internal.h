// Private to the nn op family (ir/ops/nn_ops*.cc): the per-concept registration functions that
// RegisterNnOps calls, and the meta helpers they share.
//
// [Note: symbolic size checks] A size relation that must hold (matmul's inner dimensions,
// convolution channels against the weight) is an error only when it is provably false. When
// symbols make it undecidable it is accepted: the reference kernels check the concrete sizes,
// and a capture front end guards them. Broadcasting keeps meta_util's stricter rule.
#ifndef COIL_IR_OPS_NN_OPS_INTERNAL_H_
#define COIL_IR_OPS_NN_OPS_INTERNAL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "ir/attribute.h"
#include "ir/op_registry.h"
#include "ir/tensor_type.h"

namespace coil {
namespace nn_internal {

void RegisterMatmulOps(OpRegistry& registry);     // nn_ops.cc
void RegisterConvOps(OpRegistry& registry);       // nn_ops_conv.cc
void RegisterPoolOps(OpRegistry& registry);       // nn_ops_pool.cc
void RegisterAttentionOps(OpRegistry& registry);  // nn_ops_attention.cc: sdpa
void RegisterUpsampleOps(OpRegistry& registry);   // nn_ops_upsample.cc: upsample, pixel shuffle

// OK unless `a == b` is provably false (see the note above); `what` names the two sizes.
absl::Status CheckMayEqual(const SymExpr& a, const SymExpr& b, absl::string_view what);

// Reads an ints attribute of length 1 or `n` and returns it with length `n` (a single value
// repeated, as PyTorch expands `int[2] stride=1`). Empty is allowed (returned empty) only when
// `allow_empty`.
absl::StatusOr<IntList> ExpandInts(const AttrMap& attrs, absl::string_view name, int64_t n,
                                   bool allow_empty = false);

// "f32[2, 3]" for messages.
std::string Describe(const TensorType& t);

// A single contiguous output of `dtype` and `shape` on the inputs' common device.
absl::StatusOr<std::vector<TensorType>> OneOutput(DType dtype, std::vector<SymExpr> shape,
                                                  absl::Span<const TensorType> inputs);

}  // namespace nn_internal
}  // namespace coil

#endif  // COIL_IR_OPS_NN_OPS_INTERNAL_H_
