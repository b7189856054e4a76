// Small-M products against constant weights (a classifier's GEMV at batch 1, squeeze-excitation
// 1x1 convolutions on a 1x1 input): out[m, n] = epilogue(x[m, k] @ W[k, n] + bias[n]) for
// m <= kGemvMaxRows, at memory bandwidth on the executable's thread pool.
//
// Such a call reads each weight once and does 2m flops per weight, so it is bound by the bytes
// of W. oneDNN runs calls under 8 MFLOP on the calling thread alone (dnnl_plans.h: waking its
// passive OpenMP workers costs as much), which at m = 1 is every weight under 16 MB: one core's
// bandwidth (mobilenet_v3_large's 960x1280 GEMV took 0.45 ms on the 16-core Xeon, ~11 GB/s).
// Here W is packed once per call site into panels of 16 columns ([n / 16][k][16], the last
// panel zero-padded) so that each thread streams contiguous memory, and the panels are split
// over the pool: a thread per kGemvBytesPerThread of weights, at most the pool's.
//
//   GemvWeights w;
//   w.Pack(y_data, k, n, GemvWeights::kKN);             // once per site (a CONSTANT weight)
//   if (UseGemv(m, k, n, pool->num_threads()))
//     Gemv(x, m, w, bias, epilogue, residuals, out, pool);
//
// Numerics: f32 products summed in f32 over k in order (fused multiply-adds where the CPU has
// them), as a GEMM library's kernel does; the epilogue as the schedule's kernels compute it.
// Not an API: used by dnnl_matmul.cc and dnnl_conv.cc.
#ifndef COIL_RUNTIME_CPU_INTERNAL_GEMV_H_
#define COIL_RUNTIME_CPU_INTERNAL_GEMV_H_

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>

#include "absl/types/span.h"
#include "runtime/cpu/externs.h"

namespace coil::cpu::internal {

// At most this many rows (m) take the GEMV path: with up to 8 accumulators per 16 columns the
// kernel stays bound by the weights' bytes; larger m is a GEMM (oneDNN).
constexpr int64_t kGemvMaxRows = 8;
// Weight bytes per thread: a thread's share takes ~6 us at one core's ~10 GB/s, a few times a
// pool wake-up (the workers spin 20 us between kernels: thread_pool.h).
constexpr int64_t kGemvBytesPerThread = 64 << 10;

// The threads a small-M product of k x n f32 weights gets on a pool of `threads`: one per
// kGemvBytesPerThread, at most `threads` and the number of 16-column panels.
int GemvThreads(int64_t k, int64_t n, int threads);

// Whether x[m, k] @ W[k, n] should take the GEMV path on a pool of `threads`: m <= kGemvMaxRows
// and the weights split over at least 2 threads (GemvThreads). Then oneDNN would run it on one
// thread (under 8 MFLOP: any weight under 16 MB at m = 1) or, above that, compute a GEMM's
// blocking for a product that has none; a single-thread call stays with oneDNN. COIL_GEMV=0
// turns the path off (for comparisons; read once per process).
bool UseGemv(int64_t m, int64_t k, int64_t n, int threads);

// Constant weights packed into 16-column panels, kept by a call site.
class GemvWeights {
 public:
  enum Layout {
    kKN,  // W[k, n] row-major (aten.mm's right operand)
    kNK,  // W[n, k] row-major (a 1x1 convolution's [O, C, 1, 1] weight)
  };
  // Whether the packed copy is of these weights (same address, sizes and layout).
  bool Holds(const void* src, int64_t k, int64_t n, Layout layout) const {
    return data_ != nullptr && src_ == src && k_ == k && n_ == n && layout_ == layout;
  }
  // Packs `src` (f32, k x n as `layout` says), replacing an earlier packing; false when the
  // copy cannot be allocated.
  bool Pack(const void* src, int64_t k, int64_t n, Layout layout);

  int64_t k() const { return k_; }
  int64_t n() const { return n_; }
  int64_t panels() const { return (n_ + 15) / 16; }
  // Panel p: k rows of 16 floats, 64-byte aligned.
  const float* panel(int64_t p) const { return data_.get() + p * k_ * 16; }

 private:
  std::unique_ptr<float, decltype(&std::free)> data_{nullptr, &std::free};
  const void* src_ = nullptr;
  int64_t k_ = 0, n_ = 0;
  Layout layout_ = kKN;
};

// out[r, j] = steps(sum_c x[r * ldx + c] * W[c, j] + bias[j]) for r < m, j < n, written at
// out[r * ldo + j]. `bias` may be null. `steps` are applied in order (ExternEpilogueStep; a
// kAdd reads its `other` as row-major [m, n]). Split over `pool` (null: the calling thread) on
// GemvThreads(k, n, pool threads) threads. m must be in [1, kGemvMaxRows].
void Gemv(const float* x, int64_t m, int64_t ldx, const GemvWeights& w, const float* bias,
          absl::Span<const ExternEpilogueStep> steps, float* out, int64_t ldo,
          cpu::ThreadPool* pool);

// How many Gemv calls this process made (for tests: which path a call took).
int64_t GemvCallCount();

}  // namespace coil::cpu::internal

#endif  // COIL_RUNTIME_CPU_INTERNAL_GEMV_H_
