// Divisions by a value that is the same at every position of a row Loop (softmax's
// exponentials over the row's sum) as one reciprocal per row and three FMA-pipe operations per
// position (CudaCodegenOptions::row_division). Not an API: used by kernel_source.cc.
//
// The IEEE f32 division costs a reciprocal refinement, a range check (FCHK) and a branch to
// its slow path per quotient: in a bf16 softmax over rows of 8192 that was the kernel's limit
// (85% of a copy's bandwidth; with the quotient as x * (1 / s), inexact, 96%). Here the
// division is the prelude's coil_div_row(x, s):
//
//   r = 1 / s                        (IEEE; the same expression at every position of the row,
//                                     so NVRTC computes it once)
//   q0 = x r,  e = fma(-q0, s, x),  q = fma(e, r, q0)
//
// Markstein's theorem: when r is the correctly rounded reciprocal and q0 is within an ulp of
// x / s, q is the correctly rounded quotient, provided no step overflows or underflows (the
// residual e exact). That holds when |x| and |s| lie in [2^-60, 2^60] (coil_div_row_ok). The
// kernel checks that for a position group's dividends before its items (they are in registers
// then: a vector load's or the row cache's) and runs the items with coil_div_row when all are
// in range, else with IEEE divisions: one branch per group, not one per position (a branch per
// quotient cost more than the division). So the quotients are bit-identical to x / s
// (tests/cuda: every positive f32 dividend against the division on the GPU for a set of
// divisors, and generated kernels with zeros, subnormals, infinities and NaNs among dividends
// and divisors against the host's division).
#ifndef COIL_CODEGEN_CUDA_INTERNAL_ROW_DIVISION_H_
#define COIL_CODEGEN_CUDA_INTERNAL_ROW_DIVISION_H_

#include <vector>

#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "codegen_cuda/internal/row_cache.h"
#include "codegen_cuda/internal/schedule_info.h"
#include "ir/dtype.h"
#include "ir/proto/schedule.pb.h"

namespace coil::codegen_cuda_internal {

// A ranged Loop's row divisions: f32 divisions whose dividend is an f32 expression of the
// Loop's body and whose divisor is an f32 value defined outside it (an earlier Loop's REDUCE
// result), emitted as coil_div_row under `condition`: a position group's dividends, registers
// before the items (a row cache slot of `cache`, or an f32 vector load among `vector_accesses`:
// coil_v<id>[item]), in range (coil_div_row_ok with the divisor, among `defined`).
// Divisions the row cache skips or reads from a slot are not among `divisions`. Empty (no
// condition, no divisions) when the Loop has none, a dividend is not such a register (or its
// slot is filled earlier in this Loop), or a persistent Loop has a partial group.
struct RowDivisions {
  std::string condition;
  absl::flat_hash_set<int> divisions;  // the APPLY ids emitted as coil_div_row
};
RowDivisions PlanRowDivisions(const proto::Loop& l, int items, const RowCache& cache,
                              const absl::flat_hash_set<int>& vector_accesses,
                              const absl::flat_hash_map<int, DType>& defined,
                              const ScheduleInfo& info,
                              const absl::flat_hash_map<int, const proto::Expr*>& defs);

}  // namespace coil::codegen_cuda_internal

#endif  // COIL_CODEGEN_CUDA_INTERNAL_ROW_DIVISION_H_
