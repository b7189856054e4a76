// coil's own f32 GEMM against constant weights: out[m, n] = epilogue(x[m, k] @ W[k, n] + bias)
// for the transformer rows' projections (aten.mm with a constant right operand, M = batch *
// sequence rows), on CPUs with AVX-512F, where oneDNN 2.6's matmul reaches ~0.8 TFLOP/s on the
// 16-thread Xeon at M = 128 (docs/benchmarks.md).
//
// W is packed once per call site into panels of kOwnGemmPanel (32) columns, [panel][k][32]
// (the last panel zero-padded, 64-byte aligned), so a micro-kernel streams one contiguous
// panel. The work is split over the executable's pool in tiles of (rows of x, panels); each
// tile runs over K in blocks, its micro-tiles of 12 rows x 32 columns accumulated in 24 AVX-512
// registers (x broadcast, W loaded), and the epilogue (bias, residual add, relu, clip,
// hardswish, GELU) applied to a micro-tile right after its last K block, while it is in L1.
//
//   OwnGemmWeights w;
//   if (UseOwnGemm(m, k, n)) {
//     if (!w.Holds(y, k, n)) w.Pack(y, k, n);      // once per site
//     OwnGemm(x, m, ldx, w, bias, steps, out, ldo, threads, pool);
//   }
//
// Numerics: each output's k products summed in f32 in order (fused multiply-adds), as a GEMM
// library's kernel; the epilogue in f32 (GELU's erf and tanh through polynomial
// approximations within a few f32 ulps on the AVX-512 path, libm's on the portable one).
// Off by default until measured on the 16-core Xeon (docs/benchmarks.md, "coil's own GEMM"):
// COIL_OWN_GEMM=1 turns it on, unset or 0 oneDNN runs (read once per process).
// Not an API: used by dnnl_matmul.cc.
#ifndef COIL_RUNTIME_CPU_INTERNAL_OWN_GEMM_H_
#define COIL_RUNTIME_CPU_INTERNAL_OWN_GEMM_H_

#include <cstdint>
#include <cstdlib>
#include <memory>

#include "absl/types/span.h"
#include "runtime/cpu/externs.h"

namespace coil::cpu::internal {

inline constexpr int64_t kOwnGemmPanel = 32;  // columns per packed panel
inline constexpr int64_t kOwnGemmRows = 12;   // rows per micro-tile

// Constant weights W[k, n] (row-major, aten.mm's right operand) packed into panels.
class OwnGemmWeights {
 public:
  bool Holds(const void* src, int64_t k, int64_t n) const {
    return data_ != nullptr && src_ == src && k_ == k && n_ == n;
  }
  // Packs `src`, replacing an earlier packing; false when the copy cannot be allocated.
  bool Pack(const void* src, int64_t k, int64_t n);

  int64_t k() const { return k_; }
  int64_t n() const { return n_; }
  int64_t panels() const { return (n_ + kOwnGemmPanel - 1) / kOwnGemmPanel; }
  // Panel p: k rows of 32 floats.
  const float* panel(int64_t p) const { return data_.get() + p * k_ * kOwnGemmPanel; }

 private:
  std::unique_ptr<float, decltype(&std::free)> data_{nullptr, &std::free};
  const void* src_ = nullptr;
  int64_t k_ = 0, n_ = 0;
};

// One call's operands (shared by the portable and the AVX-512 tile loops).
struct OwnGemmJob {
  const float* x;
  int64_t m, ldx;
  const OwnGemmWeights* w;
  const float* bias;  // [n] or null
  absl::Span<const ExternEpilogueStep> steps;  // no kBias; kAdd's other is row-major [m, n]
  float* out;
  int64_t ldo;
  int64_t kc;  // K block
};

// Whether the CPU has AVX-512F (and the build the AVX-512 tile loop): OwnGemm's kernel.
bool OwnGemmCpu();
// Whether OwnGemmCpu() and COIL_OWN_GEMM=1.
bool OwnGemmAvailable();

// Whether x[m, k] @ W[k, n] should take this path: OwnGemmAvailable(), m > 8 (smaller m is
// gemv.h's) and a product of at least a few MFLOP.
bool UseOwnGemm(int64_t m, int64_t k, int64_t n);

// out[r * ldo + j] = steps(sum_c x[r * ldx + c] * W[c, j] + bias[j]) for r < m, j < n.
// `steps` must not contain kBias. Split over `pool` (null: the calling thread) as tiles for
// `threads` threads. `portable`: the plain C++ tile loop even where AVX-512 is present (tests).
void OwnGemm(const float* x, int64_t m, int64_t ldx, const OwnGemmWeights& w, const float* bias,
             absl::Span<const ExternEpilogueStep> steps, float* out, int64_t ldo, int threads,
             cpu::ThreadPool* pool, bool portable = false);

// How many OwnGemm calls this process made (for tests: which path a call took).
int64_t OwnGemmCallCount();

// The tile loops: rows [r0, r1) of x against panels [p0, p1). The AVX-512 one exists on x86-64
// GCC / clang builds only (own_gemm_avx512.cc); call it only where the CPU has AVX-512F.
void OwnGemmTilePortable(const OwnGemmJob& j, int64_t r0, int64_t r1, int64_t p0, int64_t p1);
void OwnGemmTileAvx512(const OwnGemmJob& j, int64_t r0, int64_t r1, int64_t p0, int64_t p1);
bool OwnGemmHasAvx512Build();

}  // namespace coil::cpu::internal

#endif  // COIL_RUNTIME_CPU_INTERNAL_OWN_GEMM_H_
