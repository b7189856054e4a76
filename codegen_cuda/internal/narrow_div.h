// Divisions by constants whose quotient is only rounded to bf16 / f16, as one multiplication
// (codegen_cuda.h's CudaCodegenOptions::narrow_div_reciprocal). Not an API: used by
// kernel_source.cc.
//
// A bf16 / f16 value a divided by a constant c in f32 and then rounded to bf16 / f16 (the prims'
// decomposition of a narrow division, e.g. the exported gelu's x / sqrt(2) in bf16) rounds the
// same as a * (1 / c) for most c: the exact quotient of two short significands stays far from
// the narrow format's rounding boundaries, farther than the product's two f32 roundings move it.
// Whether it does for a given c is checked exhaustively: all 2^16 dividends, on the host, in
// IEEE f32 as the GPU computes without ftz. The IEEE division (about eight instructions and a
// reciprocal on the quarter-rate pipe, with a slow-path branch) becomes one FMUL.
#ifndef COIL_CODEGEN_CUDA_INTERNAL_NARROW_DIV_H_
#define COIL_CODEGEN_CUDA_INTERNAL_NARROW_DIV_H_

#include <functional>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "codegen_cuda/internal/schedule_info.h"
#include "ir/dtype.h"
#include "ir/proto/schedule.pb.h"

namespace coil::codegen_cuda_internal {

// r = 1 / c in f32 when RN_out(a / c) == RN_out(a * r) for every a of dtype `in` (bf16 / f16;
// NaNs count as equal), `out` bf16 / f16; else nullopt. Memoized per (in, out, c).
std::optional<float> ExactNarrowReciprocal(DType in, DType out, float c);

// For APPLY div `e` of a kernel (defs: every expression by id; uses: how many expressions read
// each; dtypes: the dtypes of the expressions defined so far): the reciprocal of its divisor
// when `e` is f32, its dividend a bf16 / f16 value (converted to f32, or an unmasked load of a
// bf16 / f16 buffer), its divisor a literal (a LITERAL, or a load that `literal_load` says is a
// scalar constant's value) and its one reader a conversion to bf16 / f16, and
// ExactNarrowReciprocal holds; else nullopt.
std::optional<float> NarrowDivisionReciprocal(
    const proto::Expr& e, const absl::flat_hash_map<int, const proto::Expr*>& defs,
    const absl::flat_hash_map<int, int>& uses, const absl::flat_hash_map<int, DType>& dtypes,
    const ScheduleInfo& info, const std::function<bool(const proto::Expr&)>& literal_load);

}  // namespace coil::codegen_cuda_internal

#endif  // COIL_CODEGEN_CUDA_INTERNAL_NARROW_DIV_H_
