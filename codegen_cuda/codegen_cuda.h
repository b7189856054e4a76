// The CUDA code generator: Schedule -> CUDA C++ (one __global__ function per POINTWISE /
// REDUCTION kernel and per EXTERN kernel with an epilogue) -> NVRTC -> a KernelModule holding
// the source, the CUBIN for the target GPU, its PTX (for other GPUs) and each kernel's launch
// configuration. The runtime (runtime/cuda/executable.h) loads it; the calling convention is
// runtime/cuda/kernel_abi.h. EXTERN ops themselves are not generated: the runtime runs them.
//
//   absl::StatusOr<proto::KernelModule> m = codegen_cuda::GenerateCuda(std::move(schedule));
//
// docs/cuda_backend.md describes the generated code and what is not done yet.
#ifndef COIL_CODEGEN_CUDA_CODEGEN_CUDA_H_
#define COIL_CODEGEN_CUDA_CODEGEN_CUDA_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/codegen_part.h"
#include "ir/proto/kernel_module.pb.h"
#include "ir/proto/schedule.pb.h"

namespace coil::codegen_cuda {

struct CudaCodegenOptions {
  // The GPU architecture of the CUBIN (the PTX is kept for others).
  std::string arch = "sm_90";
  // Row kernels whose ranged Loops all have constant counts of at most this many positions run
  // a warp per row (8 rows per block of 256 threads) instead of a block per row; 0: never.
  int64_t warp_row_max = 1024;
  // `#pragma unroll` factor of row kernels' position loops (1: none).
  int row_unroll = 1;
  // Pointwise kernels with contiguous accesses run 4 indices per thread with 4-element (16 bytes
  // for f32) loads and stores where the innermost range allows (kernel_source.h).
  bool vectorize = true;
  // Vectorized pointwise kernels: groups of 4 indices per thread, every group's vector loads
  // issued before the first group's body (more bytes in flight per thread; symbol _v<4 x N>).
  // 2: the gelu chain over 256 MiB ran at 95.9% of a copy's bandwidth with 2 groups, 93.7% with
  // 4 and 91.5% with 1 (H200; plain copies: 97.2% with 2, 95.6% with 4).
  int vector_groups = 2;
  // Row kernels whose ranged Loops cover the same constant positions (layer_norm, softmax) keep
  // the values that several Loops load in registers: one read of the row (row_cache.h).
  bool persistent_rows = true;
  // Persistent rows also keep a value that later Loops compute again (layernorm's x + r) when
  // that saves work per position (row_cache.h).
  bool row_values = true;
  // Block-per-row kernels declare __launch_bounds__(256, N) for N > 0: ptxas keeps their
  // registers within 64K / (256 N) so that N blocks fit an SM (spilling if it must); 0: no
  // minimum (ptxas chooses); -1: none, then a persistent row kernel (row_cache.h) that ptxas
  // gave 65-80 registers (3 blocks per SM) is compiled again asking for 4 (spilling at most 16
  // registers): the bf16 layernorm + gelu row, 80 registers, ran at 86.6% of a copy's bandwidth
  // with 4 blocks against 83.9% with 3 (H200); a softmax at 64 asked for 5 spilled and ran
  // slower. COIL_CUDA_ROW_MIN_BLOCKS=N for A/B runs.
  int row_min_blocks = -1;
  // A division of a bf16 / f16 value by a constant whose quotient is rounded to bf16 / f16 is a
  // multiplication by the reciprocal when that rounds the same for all 2^16 dividends (checked
  // here, per constant): the gelu's x / sqrt(2) in bf16. COIL_CUDA_DIV_RECIPROCAL=0 for A/B.
  bool narrow_div_reciprocal = true;
  // An f32 division in a row Loop whose divisor is the same at every position (softmax's sum)
  // is one reciprocal per row and two FMAs per position, bit-identical to the IEEE division
  // (internal/row_division.h). COIL_CUDA_ROW_DIVISION=0 for A/B.
  bool row_division = true;
  // A row Loop's tail of bf16 / f16 add, sub and mul (each rounded, ending in a vector store)
  // runs as bf16x2 / f16x2 instructions on pairs of positions, bit-identical
  // (internal/packed_pairs.h); arch sm_90 or later. COIL_CUDA_PACKED_PAIRS=0 for A/B.
  bool packed_pairs = true;
  // A block-per-row kernel prefetches into L2 the rows blocks starting later will read
  // (internal/row_prefetch.h); arch sm_90 or later. COIL_CUDA_ROW_PREFETCH=0 for A/B.
  bool row_prefetch = true;
  // Distinct kernels are compiled as up to this many NVRTC programs on parallel threads
  // (program_split.h; at least 1). Each program pays NVRTC's fixed cost (~40 ms here), so a
  // caller that compiles many small modules on few cores (CI's NVRTC conformance run) uses 1.
  int max_programs = 8;
};

// The module's CUDA C++ source alone (no NVRTC), for tests and the inspector. Errors
// (InvalidArgument naming the kernel, loop and expression): what the generator cannot emit.
absl::StatusOr<std::string> GenerateCudaSource(const proto::Schedule& schedule,
                                               const CudaCodegenOptions& options = {});

// Generates and compiles. `schedule` moves into the module. Errors: the source's errors; NVRTC
// missing (FailedPrecondition) or failing (Internal, with its log); a kernel whose registers
// do not allow its block size (ResourceExhausted, naming the kernel).
// `parts` (when not null) gets the wall time of "cuda_source" (writing the module's CUDA C++)
// and "nvrtc" (compiling it to PTX and the CUBIN), ir/codegen_part.h.
absl::StatusOr<proto::KernelModule> GenerateCuda(proto::Schedule schedule,
                                                 const CudaCodegenOptions& options = {},
                                                 std::vector<CodegenPart>* parts = nullptr);

// What went into the code (generator version, NVRTC version, arch): part of cache keys.
std::string CudaCodegenIdentity(const CudaCodegenOptions& options = {});

}  // namespace coil::codegen_cuda

#endif  // COIL_CODEGEN_CUDA_CODEGEN_CUDA_H_
