// The inner block of the fused CPU attention kernel (attention.cc drives it): one task's query
// rows of one (batch, head) matrix against every key, with a running (online) softmax. Two
// implementations of the same arithmetic: AttentionBlock (plain C++ that the compiler
// vectorizes, built for AVX-512 / AVX2 / the baseline) and AttentionBlockAvx512 (AVX-512
// intrinsics, register-blocked: 4 query rows x 64 keys of scores, 4 rows x 64 value columns
// of output per inner step), used where the CPU has AVX-512F.
// Not an API: used by attention.cc.
#ifndef COIL_RUNTIME_CPU_INTERNAL_ATTENTION_BLOCK_H_
#define COIL_RUNTIME_CPU_INTERNAL_ATTENTION_BLOCK_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace coil::cpu::internal {

inline constexpr int64_t kAttentionBlockQ = 32;  // query rows per task
inline constexpr int64_t kAttentionBlockK = 64;  // keys per tile

struct AttentionProblem {
  int64_t l, s, e, ev;
  // Row stride of the packed K^T (S rounded up to a whole tile; the padding keys are zero).
  int64_t kt_stride;
  float scale;
  bool causal;
  // The mask's row / column strides (0: that dim broadcasts); at most one of the block's
  // fmask / bmask is non-null.
  int64_t mask_row_stride = 0, mask_col_stride = 0;
};

// What one block works on: q [L, E] and v [S, Ev] of its matrix, that matrix's K packed
// transposed (kt[c * kt_stride + j] = k[j][c]), out [L, Ev], the matrix's mask (or nullptr),
// and per-task scratch: sc [kAttentionBlockQ x kAttentionBlockK], acc [kAttentionBlockQ x
// Ev], mx and sum [kAttentionBlockQ].
struct AttentionBlockArgs {
  const float* q;
  const float* kt;
  const float* v;
  float* out;
  const float* fmask;
  const uint8_t* bmask;
  float* sc;
  float* acc;
  float* mx;
  float* sum;
};

// Query rows [i0, i1) (at most kAttentionBlockQ of them).
void AttentionBlock(const AttentionProblem& p, int64_t i0, int64_t i1,
                    const AttentionBlockArgs& b);
// The same with AVX-512 intrinsics; call only where the CPU has AVX-512F
// (AttentionHasAvx512()).
void AttentionBlockAvx512(const AttentionProblem& p, int64_t i0, int64_t i1,
                          const AttentionBlockArgs& b);
bool AttentionHasAvx512();

// exp(x) for x <= 0 or -inf (the online softmax's exp(score - running max)): Cody-Waite
// reduction to r in [-ln2/2, ln2/2], a degree-7 Taylor polynomial (truncation below 2e-9
// relative), and 2^n from the exponent bits; 0 below -87 (where exp is under f32's normal
// range). Branch-free so that loops over it vectorize. Within 2 ulp of std::exp on that range
// (attention_test checks it).
inline float AttentionExp(float x) {
  const bool under = x < -87.0f;
  x = under ? -87.0f : x;
  const float t = x * 1.44269504088896341f;
  const float n = (t + 12582912.0f) - 12582912.0f;  // round to nearest: 1.5 * 2^23
  float r = x - n * 0.693359375f;                   // ln 2, high part (exact product)
  r = r - n * -2.12194440e-4f;                      // ln 2, low part
  float y = 1.0f / 5040;
  y = y * r + 1.0f / 720;
  y = y * r + 1.0f / 120;
  y = y * r + 1.0f / 24;
  y = y * r + 1.0f / 6;
  y = y * r + 0.5f;
  y = y * r + 1.0f;
  y = y * r + 1.0f;
  const int32_t bits = (static_cast<int32_t>(n) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return under ? 0.0f : y * scale;
}

// The block's output rows from its accumulators: acc / sum, or NaN where no score was finite
// (fully masked; causal with every key masked) or a score was NaN, as the reference's
// exp(-inf - -inf) gives.
inline void AttentionFinishRows(int64_t rows, int64_t ev, const float* acc, const float* mx,
                                const float* sum, float* out) {
  for (int64_t r = 0; r < rows; ++r) {
    float* o = out + r * ev;
    const float* a = acc + r * ev;
    if (std::isnan(mx[r]) || sum[r] == 0) {
      std::fill(o, o + ev, std::numeric_limits<float>::quiet_NaN());
      continue;
    }
    const float inv = 1.0f / sum[r];
    for (int64_t c = 0; c < ev; ++c) o[c] = a[c] * inv;
  }
}

}  // namespace coil::cpu::internal

#endif  // COIL_RUNTIME_CPU_INTERNAL_ATTENTION_BLOCK_H_
