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
#include <tuple>
#include <vector>

#include "ir/proto/schedule.pb.h"

namespace coil::codegen_cuda_internal {

// One entry point: kernel_abi.h's AttentionSymbol(dtype, head_dim, masked).
struct AttentionVariant {
  std::string dtype;  // "f32", "f16", "bf16"
  int head_dim = 0;
  bool masked = true;  // false: for calls without a mask, built without the mask code
  bool operator<(const AttentionVariant& o) const {
    return std::tie(dtype, head_dim, masked) < std::tie(o.dtype, o.head_dim, o.masked);
  }
  bool operator==(const AttentionVariant& o) const {
    return dtype == o.dtype && head_dim == o.head_dim && masked == o.masked;
  }
};

// The entry points the EXTERN attention kernels of `schedule` that the CUDA runtime runs on the
// GPU (their plans have no `unsupported`) need, sorted, unique: f16 / bf16 calls without a mask
// get the unmasked kernel, all others (every f32 call) the masked one.
std::vector<AttentionVariant> AttentionVariants(const proto::Schedule& schedule);

// The kernels for `variants` (each an extern "C" AttentionSymbol), self-contained (no prelude).
std::string AttentionKernelsSource(const std::vector<AttentionVariant>& variants);

}  // namespace coil::codegen_cuda_internal

#endif  // COIL_CODEGEN_CUDA_INTERNAL_ATTENTION_SOURCE_H_
