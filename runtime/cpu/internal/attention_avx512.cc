// The fused attention block with AVX-512 intrinsics (attention_block.h). Register-blocked:
// scores for 4 query rows x 64 keys (16 accumulators) per pass over the head dimension, so
// each packed-K^T load feeds 4 FMAs; the P.V product likewise for 4 rows x 64 value columns;
// softmax statistics and exp 16 lanes at a time. Compiled for AVX-512F by function attribute
// (the rest of the build stays portable); the caller checks the CPU first.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "runtime/cpu/internal/attention_block.h"
#include "runtime/cpu/internal/avx512_exp.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define COIL_HAVE_AVX512_BLOCK 1
#define COIL_AVX512 __attribute__((target("avx512f")))
#endif

namespace coil::cpu::internal {

#ifdef COIL_HAVE_AVX512_BLOCK
namespace {

constexpr int kRows = 4;   // query rows per register block
constexpr int kVecs = 4;   // 16-float vectors per key tile / value chunk (64 floats)

// AttentionExp on 16 lanes (x <= 0 or -inf; no NaN reaches it): avx512_exp.h.
COIL_AVX512 inline __m512 Exp16(__m512 x) { return Avx512Exp(x); }

// sc[r][0..64) = scale * q[i0 + r] . kt[., j0 + j] for rows [r0, r0 + nr), nr <= kRows.
// kt's padding keys are zero, so all 64 columns are read.
COIL_AVX512 void Scores(const AttentionProblem& p, const float* q, const float* kt, int64_t r0,
                        int nr, float* sc) {
  __m512 acc[kRows][kVecs];
  for (int r = 0; r < kRows; ++r) {
    for (int x = 0; x < kVecs; ++x) acc[r][x] = _mm512_setzero_ps();
  }
  const float* qr[kRows];
  for (int r = 0; r < kRows; ++r) qr[r] = q + (r0 + std::min(r, nr - 1)) * p.e;
  for (int64_t c = 0; c < p.e; ++c) {
    const float* kc = kt + c * p.kt_stride;
    __m512 k[kVecs];
    for (int x = 0; x < kVecs; ++x) k[x] = _mm512_loadu_ps(kc + 16 * x);
    for (int r = 0; r < kRows; ++r) {
      const __m512 b = _mm512_set1_ps(qr[r][c]);
      for (int x = 0; x < kVecs; ++x) acc[r][x] = _mm512_fmadd_ps(b, k[x], acc[r][x]);
    }
  }
  const __m512 scale = _mm512_set1_ps(p.scale);
  for (int r = 0; r < kRows; ++r) {
    if (r >= nr) break;
    for (int x = 0; x < kVecs; ++x) {
      _mm512_storeu_ps(sc + (r0 + r) * kAttentionBlockK + 16 * x, _mm512_mul_ps(acc[r][x], scale));
    }
  }
}

// acc[r][c0 + ..) += sum_j sc[r][j] * v[j0 + j][c0 + ..) for rows [r0, r0 + nr), columns
// [c0, c0 + width), width <= 64 (the last vector masked).
COIL_AVX512 void AccumulatePV(const AttentionProblem& p, const float* sc, const float* v,
                              int64_t cols, int64_t r0, int nr, int64_t c0, int64_t width,
                              float* accbuf) {
  const int nv = static_cast<int>((width + 15) / 16);
  __mmask16 m[kVecs];
  for (int x = 0; x < kVecs; ++x) {
    const int64_t left = width - 16 * x;
    m[x] = left >= 16 ? __mmask16(0xFFFF) : left > 0 ? __mmask16((1u << left) - 1) : 0;
  }
  __m512 a[kRows][kVecs];
  for (int r = 0; r < kRows; ++r) {
    const float* ar = accbuf + (r0 + std::min(r, nr - 1)) * p.ev + c0;
    for (int x = 0; x < kVecs; ++x) a[r][x] = _mm512_maskz_loadu_ps(m[x], ar + 16 * x);
  }
  const float* pr[kRows];
  for (int r = 0; r < kRows; ++r) pr[r] = sc + (r0 + std::min(r, nr - 1)) * kAttentionBlockK;
  if (nv == kVecs) {
    for (int64_t j = 0; j < cols; ++j) {
      const float* vr = v + j * p.ev + c0;
      __m512 vv[kVecs];
      for (int x = 0; x < kVecs; ++x) vv[x] = _mm512_maskz_loadu_ps(m[x], vr + 16 * x);
      for (int r = 0; r < kRows; ++r) {
        const __m512 b = _mm512_set1_ps(pr[r][j]);
        for (int x = 0; x < kVecs; ++x) a[r][x] = _mm512_fmadd_ps(b, vv[x], a[r][x]);
      }
    }
  } else {  // fewer than 4 vectors of columns (Ev not a multiple of 64): same, masked
    for (int64_t j = 0; j < cols; ++j) {
      const float* vr = v + j * p.ev + c0;
      __m512 vv[kVecs];
      for (int x = 0; x < kVecs; ++x) vv[x] = _mm512_maskz_loadu_ps(m[x], vr + 16 * x);
      for (int r = 0; r < kRows; ++r) {
        const __m512 b = _mm512_set1_ps(pr[r][j]);
        for (int x = 0; x < nv; ++x) a[r][x] = _mm512_fmadd_ps(b, vv[x], a[r][x]);
      }
    }
  }
  for (int r = 0; r < nr; ++r) {
    float* ar = accbuf + (r0 + r) * p.ev + c0;
    for (int x = 0; x < kVecs; ++x) _mm512_mask_storeu_ps(ar + 16 * x, m[x], a[r][x]);
  }
}

// One row's online-softmax step over its tile of scores s[0..64) (entries past `cols` are
// padding): turns s into exp(s - new max) (0 where masked or padding, all 0 when the row adds
// nothing) and rescales the row's accumulator. mx / sum as in the generic block.
COIL_AVX512 void SoftmaxRow(int64_t cols, int64_t ev, float* s, float& mx, float& sum,
                            float* a) {
  const float kNegInf = -std::numeric_limits<float>::infinity();
  for (int64_t j = cols; j < kAttentionBlockK; ++j) s[j] = kNegInf;
  __m512 v[kVecs];
  __mmask16 nan = 0;
  __m512 vmax = _mm512_set1_ps(kNegInf);
  for (int x = 0; x < kVecs; ++x) {
    v[x] = _mm512_loadu_ps(s + 16 * x);
    nan |= _mm512_cmp_ps_mask(v[x], v[x], _CMP_UNORD_Q);
    vmax = _mm512_max_ps(vmax, v[x]);
  }
  const float tile_max = _mm512_reduce_max_ps(vmax);
  if (nan != 0 || std::isnan(mx)) {
    mx = std::numeric_limits<float>::quiet_NaN();  // the row's result is NaN
    std::fill(s, s + kAttentionBlockK, 0.0f);
    return;
  }
  const float m_new = std::max(mx, tile_max);
  if (m_new == kNegInf) {  // every score so far masked: nothing to add
    std::fill(s, s + kAttentionBlockK, 0.0f);
    return;
  }
  const float correction = AttentionExp(mx - m_new);  // 0 when mx was -inf
  mx = m_new;
  const __m512 mn = _mm512_set1_ps(m_new);
  __m512 total = _mm512_setzero_ps();
  for (int x = 0; x < kVecs; ++x) {
    const __m512 e = Exp16(_mm512_sub_ps(v[x], mn));
    total = _mm512_add_ps(total, e);
    _mm512_storeu_ps(s + 16 * x, e);
  }
  sum = sum * correction + _mm512_reduce_add_ps(total);
  if (correction != 1.0f) {
    const __m512 cv = _mm512_set1_ps(correction);
    int64_t c = 0;
    for (; c + 16 <= ev; c += 16) _mm512_storeu_ps(a + c, _mm512_mul_ps(_mm512_loadu_ps(a + c), cv));
    for (; c < ev; ++c) a[c] *= correction;
  }
}

}  // namespace

COIL_AVX512 void AttentionBlockAvx512(const AttentionProblem& p, int64_t i0, int64_t i1,
                                      const AttentionBlockArgs& b) {
  const int64_t rows = i1 - i0, ev = p.ev;
  const float kNegInf = -std::numeric_limits<float>::infinity();
  std::fill(b.mx, b.mx + rows, kNegInf);
  std::fill(b.sum, b.sum + rows, 0.0f);
  std::fill(b.acc, b.acc + rows * ev, 0.0f);
  const float* q = b.q + i0 * p.e;
  const int64_t s_end = p.causal ? std::min(p.s, i1) : p.s;
  for (int64_t j0 = 0; j0 < s_end; j0 += kAttentionBlockK) {
    const int64_t cols = std::min(kAttentionBlockK, s_end - j0);
    for (int64_t r0 = 0; r0 < rows; r0 += kRows) {
      Scores(p, q, b.kt + j0, r0, static_cast<int>(std::min<int64_t>(kRows, rows - r0)), b.sc);
    }
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t i = i0 + r;
      float* s = b.sc + r * kAttentionBlockK;
      if (b.fmask != nullptr) {
        const float* m = b.fmask + i * p.mask_row_stride + j0 * p.mask_col_stride;
        for (int64_t j = 0; j < cols; ++j) s[j] += m[j * p.mask_col_stride];
      } else if (b.bmask != nullptr) {
        const uint8_t* m = b.bmask + i * p.mask_row_stride + j0 * p.mask_col_stride;
        for (int64_t j = 0; j < cols; ++j) {
          if (m[j * p.mask_col_stride] == 0) s[j] = kNegInf;
        }
      }
      if (p.causal) {
        for (int64_t j = std::max<int64_t>(0, i + 1 - j0); j < cols; ++j) s[j] = kNegInf;
      }
      SoftmaxRow(cols, ev, s, b.mx[r], b.sum[r], b.acc + r * ev);
    }
    for (int64_t r0 = 0; r0 < rows; r0 += kRows) {
      const int nr = static_cast<int>(std::min<int64_t>(kRows, rows - r0));
      for (int64_t c0 = 0; c0 < ev; c0 += 16 * kVecs) {
        AccumulatePV(p, b.sc, b.v + j0 * ev, cols, r0, nr, c0, std::min<int64_t>(16 * kVecs, ev - c0),
                     b.acc);
      }
    }
  }
  AttentionFinishRows(rows, ev, b.acc, b.mx, b.sum, b.out + i0 * ev);
}

bool AttentionHasAvx512() {
  static const bool has = __builtin_cpu_supports("avx512f");
  return has;
}

#else  // not x86-64 GCC / clang: the generic block only

void AttentionBlockAvx512(const AttentionProblem& p, int64_t i0, int64_t i1,
                          const AttentionBlockArgs& b) {
  AttentionBlock(p, i0, i1, b);
}
bool AttentionHasAvx512() { return false; }

#endif

}  // namespace coil::cpu::internal
