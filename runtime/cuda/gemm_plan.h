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
// Two more things cuBLASLt does for an aten.mm (GPT-2's LM head: [B*T, 768] x [768, 50257]):
// - Forwarding: an mm without an epilogue whose result only one later kernel reads, a copy
//   or a widening convert of the whole result into a graph output of the same elements in
//   the same row-major order (the reshape back to [B, T, N] that inductor materializes for a
//   graph output, with the bf16 -> f32 cast of `--precision bf16`), is run with that output
//   as D (of the output's dtype: cuBLASLt computes bf16 x bf16 in f32 and writes f32 without
//   the bf16 rounding) and the copy kernel is not launched.
// - A constant B whose rows are not 16-byte aligned (N * element size not a multiple of 16) is
//   kept a second time in a layout whose rows are: f32 / f64 transposed, [N, K] (K contiguous,
//   when K's rows are aligned), given to cuBLASLt as a transposed operand (H100, GPT-2's f32 LM
//   head: 6.49 -> 6.21 ms); otherwise (f16 / bf16: the transposed operand was slower there,
//   2.56 -> 3.32 ms) with each row padded to 16 bytes, given with that leading dimension.
//
//   std::optional<GemmPlan> p = PlanGemm(schedule, kernel);   // nullopt: not mm/bmm
#ifndef COIL_RUNTIME_CUDA_GEMM_PLAN_H_
#define COIL_RUNTIME_CUDA_GEMM_PLAN_H_

#include <cstdint>
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
  // Forwarding (above): the kernel whose copy the GEMM makes (0: none), the buffer it writes
  // and that buffer's dtype (D's dtype; a, b keep `dtype`).
  int forward_kernel = 0;
  int forward_d = 0;
  proto::DType forward_dtype = proto::DTYPE_UNSPECIFIED;
  // B is a constant with misaligned rows: the runtime keeps a transposed copy, or one with
  // padded rows (above); at most one of the two is set.
  bool transpose_b = false;
  bool pad_b = false;
};

// The plan for `kernel` of `schedule`; nullopt when it is not an EXTERN aten.mm / aten.bmm.
// A malformed kernel (operand count, ranks, unknown buffers) gets `unsupported` set.
std::optional<GemmPlan> PlanGemm(const proto::Schedule& schedule, const proto::Kernel& kernel);

// The row-major [rows, cols] matrix `bytes` (elements of `element_bytes`) transposed to
// [cols, rows]: the copy of a `transpose_b` constant.
std::string TransposeMatrix(const std::string& bytes, int64_t rows, int64_t cols,
                            int element_bytes);

}  // namespace coil::cuda

#endif  // COIL_RUNTIME_CUDA_GEMM_PLAN_H_
