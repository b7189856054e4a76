// How the CUDA runtime runs an EXTERN aten.mm / aten.bmm kernel through cuBLASLt: which buffers
// are the operands, and whether the kernel's pointwise epilogue (inductor's extern epilogue
// fusion) is one cuBLASLt can apply itself, so that the GEMM writes the epilogue's output
// directly and the generated epilogue kernel is not launched. A pure function of the Schedule
// (no GPU, no library): CI tests it.
//
// cuBLASLt computes D = relu?(A B + C + bias) with C a full [M, N] matrix (beta = 1) and bias
// a vector over the columns. An epilogue fuses when its one STORE (identity index) stores
//   [maximum(., 0) of] a sum of: the GEMM's result, at most one bias buffer f[N] loaded at
//   [_i1], at most one matrix buffer of the output's shape loaded at the identity index,
// with f16/bf16 values widened to f32 and the result narrowed once (cuBLASLt adds in f32).
// Anything else (gelu: cuBLASLt's GELU epilogue is the tanh approximation, torch's default
// is erf; a batched GEMM; the GEMM's result read by another kernel) keeps the generated
// epilogue after a plain GEMM, and `not_fused` says why.
//
//   std::optional<GemmPlan> p = PlanGemm(schedule, kernel);   // nullopt: not mm/bmm
#ifndef COIL_RUNTIME_CUDA_GEMM_PLAN_H_
#define COIL_RUNTIME_CUDA_GEMM_PLAN_H_

#include <optional>
#include <string>

#include "ir/proto/schedule.pb.h"

namespace coil::cuda {

struct GemmPlan {
  bool batched = false;  // aten.bmm: [B, M, K] x [B, K, N]; aten.mm: [M, K] x [K, N]
  int a = 0, b = 0;      // operand buffers
  int out = 0;           // the extern's output buffer
  proto::DType dtype = proto::DTYPE_UNSPECIFIED;  // of a, b and out
  // Why cuBLASLt cannot run this GEMM at all ("" when it can): it then runs on the host.
  std::string unsupported;
  // The epilogue cuBLASLt applies instead of the generated one.
  bool fused = false;
  int d = 0;     // fused: the buffer the epilogue stores (the GEMM writes it directly)
  int bias = 0;  // fused: a [N] buffer added to every row, or 0
  int c = 0;     // fused: an [M, N] buffer added, or 0
  bool relu = false;
  // Why a kernel with an epilogue keeps the generated one ("" when fused or there is none).
  std::string not_fused;
};

// The plan for `kernel` of `schedule`; nullopt when it is not an EXTERN aten.mm / aten.bmm.
// A malformed kernel (operand count, ranks, unknown buffers) gets `unsupported` set.
std::optional<GemmPlan> PlanGemm(const proto::Schedule& schedule, const proto::Kernel& kernel);

}  // namespace coil::cuda

#endif  // COIL_RUNTIME_CUDA_GEMM_PLAN_H_
