// f32 divisions by constants without the IEEE division (codegen_cuda.h's
// CudaCodegenOptions::narrow_div_reciprocal, which also turns on narrow_div.h). Not an API: used
// by kernel_source.cc.
//
// An f32 a / c with a constant c is about eight instructions and a reciprocal on the
// quarter-rate pipe with a slow-path branch (the exported gelu's x / sqrt(2) in f32, GELU's
// share of the gelu chain row). For c a power of two it is a * (1 / c) exactly, for every a
// (both round the same real number). Otherwise coil_div_const (prelude.cc): q = a r with
// r = RN(1 / c), then one correction, q + (a - q c) r with both steps fused multiply-adds
// (Markstein: the residual a - q c is exact, and the corrected quotient is the correctly
// rounded a / c whenever q is within an ulp of it). That it is correctly rounded is checked for
// each c exhaustively, on the host in IEEE f32: every significand a in [1, 2) (2^23 values)
// against a / c. Scaling a by a power of two changes no rounding while every intermediate stays
// normal, which |a| in [2^-90, 2^90] and |c| in [2^-20, 2^20] ensure; other a (zeros,
// subnormal or tiny, huge, infinities, NaN) take the division itself.
#ifndef COIL_CODEGEN_CUDA_INTERNAL_F32_DIVISION_H_
#define COIL_CODEGEN_CUDA_INTERNAL_F32_DIVISION_H_

#include <functional>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "codegen_cuda/internal/schedule_info.h"
#include "ir/dtype.h"
#include "ir/proto/schedule.pb.h"

namespace coil::codegen_cuda_internal {

struct F32ConstantDivision {
  float c = 1;              // the divisor
  float r = 1;              // RN(1 / c)
  bool power_of_two = false;  // a / c == a * r for every a
};

// How a / c can be computed for every f32 a as the IEEE division rounds it, or nullopt (c not
// finite, zero, outside [2^-20, 2^20] unless a power of two, or the exhaustive check failing).
// Memoized per c.
std::optional<F32ConstantDivision> ExactF32Division(float c);

// For APPLY div `e` of a kernel: its F32ConstantDivision when `e` and both operands are f32 and
// its divisor a literal (narrow_div.h's DivisorLiteral); else nullopt.
std::optional<F32ConstantDivision> F32DivisionByConstant(
    const proto::Expr& e, const absl::flat_hash_map<int, const proto::Expr*>& defs,
    const absl::flat_hash_map<int, DType>& dtypes, const ScheduleInfo& info,
    const std::function<bool(const proto::Expr&)>& literal_load);

}  // namespace coil::codegen_cuda_internal

#endif  // COIL_CODEGEN_CUDA_INTERNAL_F32_DIVISION_H_
