// The GEMM row widening kernels of runtime/cuda/kernel_abi.h (GemmWidenRowsSymbol): CUDA C++
// text a module carries when its Schedule has an EXTERN aten.mm of f16 / bf16, so that the
// runtime can widen a GEMM result it wrote with padded rows (fast where the dense rows are not
// 16-byte aligned: runtime/cuda/gemm_runner.h) into the f32 graph output. Not an API: used by
// codegen_cuda.cc.
#ifndef COIL_CODEGEN_CUDA_INTERNAL_GEMM_ROWS_SOURCE_H_
#define COIL_CODEGEN_CUDA_INTERNAL_GEMM_ROWS_SOURCE_H_

#include <string>

#include "ir/proto/schedule.pb.h"

namespace coil::codegen_cuda_internal {

// Whether `schedule` has an EXTERN aten.mm whose output is f16 or bf16.
bool HasHalfPrecisionMm(const proto::Schedule& schedule);

// The two kernels (f16, bf16); needs the prelude's f16/bf16 conversions.
std::string GemmRowsKernelsSource();

}  // namespace coil::codegen_cuda_internal

#endif  // COIL_CODEGEN_CUDA_INTERNAL_GEMM_ROWS_SOURCE_H_
