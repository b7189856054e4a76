// The calling convention between generated CUDA kernels (codegen_cuda/) and the CUDA runtime
// (runtime/cuda/executable.h): one definition both sides include.
//
// Every POINTWISE / REDUCTION kernel of a Schedule, and every EXTERN kernel's epilogue, is one
// `extern "C" __global__` function named KernelSymbol(id):
//
//   __global__ void coil_k<id>(char* const* buffers, const long long* symbols,
//                              CoilCudaError* error);
//
// - buffers is the kernel's own slot table: buffers[i] is the device address of buffer
//   CompiledKernel.buffers[i] (the buffers in the order the kernel body first uses them), so
//   kernels with the same code on other buffers share one compiled function (codegen_cuda's
//   dedupe). A module without CompiledKernel.buffers (generator coil-cuda-4 and older) indexes
//   by buffer id instead: buffers[id] is buffer `id` (buffers[0] unused). symbols[i] is the
//   value of Schedule.graph.symbols[i]. All point into one device table the runtime uploads
//   per run.
// - Block: kCudaBlockThreads threads (the source says so with __launch_bounds__). Grid:
//   CudaGridFor(rows_per_block, count), computed at launch from the kernel's outer ranges with
//   the symbols bound, so a dynamic size never needs a recompile. Pointwise kernels (no ranged
//   Loop) map one thread to each outer index with a grid-stride loop; row kernels (a ranged
//   Loop: reductions) map one block to each outer index, or one warp when every ranged Loop
//   has a constant count of at most CudaCodegenOptions::warp_row_max positions (then
//   LaunchConfig.block is {32, kCudaWarpRows}: threadIdx.x is the lane, threadIdx.y the row
//   of the block), also grid-strided.
// - error: a data error (an index from data out of its dimension, an integer division by zero,
//   a negative integer power) is recorded by the first thread that finds one (atomicCAS of
//   `failed` 0 -> 1); the kernel then reads element 0 (or writes 0) instead and finishes. The
//   runtime zeroes the record before a run and turns it into a Status after the run.
#ifndef COIL_RUNTIME_CUDA_KERNEL_ABI_H_
#define COIL_RUNTIME_CUDA_KERNEL_ABI_H_

#include <algorithm>
#include <cstdint>
#include <string>

namespace coil::cuda {

inline constexpr int kCudaBlockThreads = 256;
// Grids stride over the rest: at most this many blocks per launch.
inline constexpr int64_t kCudaMaxGrid = int64_t{1} << 20;

// CoilCudaError.kind.
enum CudaErrorKind : int32_t {
  kCudaOk = 0,
  kCudaIndexOutOfBounds = 1,  // `value` not in [0, `bound`) for dimension `dim` of the access
  kCudaIntDivByZero = 2,      // prims.div of integers
  kCudaIntRemByZero = 3,      // prims.remainder of integers
  kCudaIntFmodByZero = 4,     // prims.fmod of integers
  kCudaNegativeIntPow = 5,    // prims.pow of integers with a negative exponent
};

// The device record (the generated prelude declares the same layout: 4 x int32, 3 x int64).
struct CoilCudaError {
  int32_t failed;
  int32_t kind;
  int32_t kernel;  // Schedule kernel id
  int32_t expr;    // the expression id in that kernel
  int64_t dim;
  int64_t value;
  int64_t bound;
};
static_assert(sizeof(CoilCudaError) == 40, "the generated prelude assumes this layout");

// "coil_k<id>"; a pointwise kernel whose threads each run several groups of kCudaVectorItems
// consecutive outer indices (16-byte loads and stores where the access is contiguous) is
// "coil_k<id>_v<N>", N the outer indices per thread (4 x groups: "_v16" for 4 groups).
inline constexpr int kCudaVectorItems = 4;
inline std::string KernelSymbol(int kernel_id, int items_per_thread = 1) {
  return "coil_k" + std::to_string(kernel_id) +
         (items_per_thread > 1 ? "_v" + std::to_string(items_per_thread) : "");
}
// Outer indices per thread of a pointwise kernel, from its symbol's "_v<N>" suffix (1: none).
inline int CudaItemsPerThread(const std::string& symbol) {
  const size_t v = symbol.rfind("_v");
  if (v == std::string::npos || v + 2 >= symbol.size() || v + 6 < symbol.size()) return 1;
  int n = 0;
  for (size_t i = v + 2; i < symbol.size(); ++i) {
    if (symbol[i] < '0' || symbol[i] > '9') return 1;
    n = n * 10 + (symbol[i] - '0');
  }
  return n > 1 ? n : 1;
}

// Row kernels with short rows run a warp per row: this many rows per block.
inline constexpr int kCudaWarpRows = kCudaBlockThreads / 32;

// Blocks to launch for `count` outer indices (0: launch nothing). `rows_per_block`: 0 for a
// pointwise kernel (a thread per `items_per_thread` indices), 1 for a block per row,
// kCudaWarpRows for a warp per row.
inline int64_t CudaGridFor(int rows_per_block, int64_t count, int items_per_thread = 1) {
  if (count <= 0) return 0;
  const int64_t per =
      rows_per_block > 0 ? rows_per_block : int64_t{kCudaBlockThreads} * items_per_thread;
  return std::min((count + per - 1) / per, kCudaMaxGrid);
}

// A convolution's bias when cuDNN ran the convolution alone (runtime/cuda/conv.h): a module
// whose Schedule has an EXTERN aten.convolution with a bias carries, for each floating dtype
// `t` (f32, f16, bf16, f64),
//
//   __global__ void coil_conv_bias_<t>(T* y, const T* bias, long long total, long long inner,
//                                      long long channels);
//
// adding bias[(i / inner) % channels] to y[i] for i < total in place (y is [N, channels,
// inner] contiguous; f16/bf16 added in f32 and rounded again, so their convolutions with a
// bias round twice where the reference rounds once). Block kCudaBlockThreads, grid CudaGridFor(0, total), grid-stride.
inline std::string ConvBiasSymbol(const std::string& dtype) { return "coil_conv_bias_" + dtype; }

// The GEMM row widening kernels (runtime/cuda/gemm_runner.h): a module whose Schedule has an
// EXTERN aten.mm of f16 / bf16 carries, for dtype in {f16, bf16},
//
//   __global__ void coil_gemm_widen_rows_<dtype>(const unsigned short* src,
//       long long src_pitch, float* dst, long long rows, long long cols);
//
// dst[r * cols + c] = float(src[r * src_pitch + c]) for r < rows, c < cols: a GEMM's result
// written with padded rows (src_pitch elements) widened into a dense f32 output. Flat over
// dst, kCudaGemmWidenItems consecutive elements per thread (one 16-byte store where dst is
// 16-byte aligned). Block kCudaBlockThreads, grid CudaGridFor(0, rows * cols,
// kCudaGemmWidenItems), grid-strided.
inline constexpr int kCudaGemmWidenItems = 4;
inline std::string GemmWidenRowsSymbol(const std::string& dtype) {
  return "coil_gemm_widen_rows_" + dtype;
}


// Fused attention (EXTERN aten.scaled_dot_product_attention; runtime/cuda/attention_plan.h): a
// module with such a kernel carries, for each (dtype, head dim D) its plans need,
//
//   __global__ void coil_attention_<dtype>_d<D>(CoilAttentionParams p);
//
// q [heads, L, D], k [heads, S, D], v [heads, S, D], out [heads, L, D] contiguous (the batch
// dims flattened to `heads`), an optional mask read at mask + (batch offset) + i * mask_row +
// j * mask_col (bool: nonzero attends; additive: the query's dtype), scores scaled by `scale`,
// `causal` masking j > i. Softmax online (no [L, S] scores in memory). Grid
// AttentionGrid(L, heads, D, dtype), block AttentionBlockThreads(dtype); the heads beyond
// gridDim.y are grid-strided. f32: SIMT, f32 arithmetic; f16/bf16: mma.sync tensor cores with
// f32 accumulation. Its own NVRTC program, compiled only when a plan asks for it.
struct CoilAttentionParams {
  const void* q;
  const void* k;
  const void* v;
  const void* mask;  // null: none
  void* out;
  long long heads;   // the product of the batch dims
  long long bdim[4];     // the output's batch dims, innermost last, padded in front with 1s
  long long mstride[4];  // the mask's element stride along each of them (0: broadcast)
  long long mask_row, mask_col;  // along L and S
  int L, S;
  float scale;
  int causal;
  int mask_kind;  // kAttentionMask*
  int pad;
};
static_assert(sizeof(CoilAttentionParams) == 152, "the attention source declares this layout");
inline constexpr int kAttentionMaskNone = 0;
inline constexpr int kAttentionMaskBool = 1;
inline constexpr int kAttentionMaskAdd = 2;

// "f32", "f16", "bf16": the symbol's dtype part. Calls without a mask may have an entry point
// of their own, built without the mask code (fewer registers, more blocks per SM):
// coil_attention_<dtype>_d<D>_nomask (masked = false); a module without it runs them with the
// masked one (mask_kind 0).
inline std::string AttentionSymbol(const std::string& dtype, int head_dim, bool masked = true) {
  return "coil_attention_" + dtype + "_d" + std::to_string(head_dim) + (masked ? "" : "_nomask");
}
// Query rows per block and threads per block: f32 (SIMT) 64 rows for D = 64, 32 for D = 128, 256
// threads; f16 / bf16 (tensor cores) 64 rows, 128 threads (4 warps of 16 rows; 32 rows a warp
// was measured slower: 254 registers, one block per SM; so were 8 warps of 16 rows).
inline int AttentionBlockRows(bool half, int head_dim) { return half || head_dim <= 64 ? 64 : 32; }
inline int AttentionBlockThreads(bool half) { return half ? 128 : 256; }

}  // namespace coil::cuda

#endif  // COIL_RUNTIME_CUDA_KERNEL_ABI_H_
