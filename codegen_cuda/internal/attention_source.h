// The fused attention kernels of runtime/cuda/kernel_abi.h (AttentionSymbol,
// CoilAttentionParams): CUDA C++ text for the (dtype, head dim) variants a module's attention
// plans need (runtime/cuda/attention_plan.h), compiled as a program of their own. f32 runs a
// SIMT FlashAttention-2-style kernel in f32 arithmetic; f16 / bf16 run mma.sync m16n8k16 tensor
// cores (ldmatrix from XOR-swizzled shared tiles) with f32 accumulation and the probabilities
// rounded to the input dtype for the second product, as FlashAttention-2 does. Not an API: used
// by codegen_cuda.cc (and tests/cuda).
#ifndef COIL_CODEGEN_CUDA_INTERNAL_ATTENTION_SOURCE_H_
#define COIL_CODEGEN_CUDA_INTERNAL_ATTENTION_SOURCE_H_

#include <string>
#include <utility>
#include <vector>

#include "ir/proto/schedule.pb.h"

namespace coil::codegen_cuda_internal {

// (dtype name "f32" / "f16" / "bf16", head dim) of every EXTERN attention kernel of `schedule`
// that the CUDA runtime runs on the GPU (its plan has no `unsupported`), sorted, unique.
std::vector<std::pair<std::string, int>> AttentionVariants(const proto::Schedule& schedule);

// The kernels for `variants` (each an extern "C" AttentionSymbol), self-contained (no prelude).
std::string AttentionKernelsSource(const std::vector<std::pair<std::string, int>>& variants);

}  // namespace coil::codegen_cuda_internal

#endif  // COIL_CODEGEN_CUDA_INTERNAL_ATTENTION_SOURCE_H_
