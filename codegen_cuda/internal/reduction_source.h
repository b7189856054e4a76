// A row kernel's reductions as CUDA C++ text: each thread's accumulator (its declaration and its
// update at a position) and the combine of the threads' accumulators over the block or warp
// (every thread gets the result; prelude.h's coil_block_* / coil_warp_* helpers). Sum and prod
// accumulate in f32 for f32/f16/bf16 inputs, f64 for f64, wrapping int64 for integers; max/min
// propagate NaN; argmax/argmin keep (value, position), the first occurrence winning.
// Not an API: used by kernel_source.cc.
//
//   ReductionText t = AccumulateSource(Red::kSum, 7, "e6", proto::FLOAT32);
//   // t.decl "float a7 = 0;", t.update "a7 = a7 + (float)e6;"
//   CombineSource(Red::kSum, 7, proto::FLOAT32, /*warp=*/false)
//   // "coil_block_reduce(a7, CoilSum(), coil_shf)"
#ifndef COIL_CODEGEN_CUDA_INTERNAL_REDUCTION_SOURCE_H_
#define COIL_CODEGEN_CUDA_INTERNAL_REDUCTION_SOURCE_H_

#include <optional>
#include <string>

#include "ir/dtype.h"

namespace coil::codegen_cuda_internal {

enum class Red { kSum, kProd, kMax, kMin, kArgMax, kArgMin };

// "sum", "prod", "max", "min", "argmax", "argmin"; nullopt otherwise.
std::optional<Red> RedFromName(const std::string& s);

// The accumulator's dtype for an argument of dtype `in`: FLOAT32, FLOAT64 or INT64.
DType AccumulatorDType(DType in);

struct ReductionText {
  std::string decl;    // declares a<id> (and p<id> for argmax/argmin) with the identity
  std::string update;  // folds `arg` (at position coil_p) into them
};

// REDUCE `id` of `op` over the variable `arg`, accumulating in `acc_dt`.
ReductionText AccumulateSource(Red op, int id, const std::string& arg, DType acc_dt);

// The combined accumulator of REDUCE `id` (an expression of acc_dt; argmax/argmin: the int64
// position); `warp`: a warp per row (shuffles alone), else a block (shuffles, then shared memory).
std::string CombineSource(Red op, int id, DType acc_dt, bool warp);

}  // namespace coil::codegen_cuda_internal

#endif  // COIL_CODEGEN_CUDA_INTERNAL_REDUCTION_SOURCE_H_
