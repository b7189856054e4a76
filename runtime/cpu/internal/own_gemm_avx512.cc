// The AVX-512 tile loop of coil's own GEMM (own_gemm.h): micro-tiles of up to 12 rows x 32
// columns in 24 zmm accumulators, each step one broadcast of x per row and two loads of the
// packed panel; the epilogue vectorized on the micro-tile after its last K block. Compiled for
// AVX-512F by function attribute (the rest of the build stays portable); own_gemm.cc checks
// the CPU first.
#include <cstdint>

#include "runtime/cpu/internal/avx512_exp.h"
#include "runtime/cpu/internal/own_gemm.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define COIL_HAVE_OWN_GEMM_AVX512 1
#if defined(__clang__)
#define COIL_AVX512 __attribute__((target("avx512f")))
#else
#define COIL_AVX512 __attribute__((target("avx512f"), optimize("O3")))
#endif
#endif

namespace coil::cpu::internal {

#ifdef COIL_HAVE_OWN_GEMM_AVX512
namespace {

constexpr int64_t kP = kOwnGemmPanel;

// c[r * ldc + j] (+)= sum_{t < kc} a[r * lda + t] * b[t * 32 + j], r < R, j < 32 where the
// masks say (m0: columns 0-15, m1: 16-31).
template <int R>
COIL_AVX512 inline __attribute__((always_inline)) void Micro(const float* a, int64_t lda,
                                                             const float* b, int64_t kc,
                                                             float* c, int64_t ldc,
                                                             __mmask16 m0, __mmask16 m1,
                                                             bool accumulate) {
  __m512 c0[R], c1[R];
  for (int r = 0; r < R; ++r) {
    c0[r] = _mm512_setzero_ps();
    c1[r] = _mm512_setzero_ps();
  }
  const float* ar[R];
  for (int r = 0; r < R; ++r) ar[r] = a + r * lda;
#pragma GCC unroll 2
  for (int64_t t = 0; t < kc; ++t) {
    const __m512 b0 = _mm512_load_ps(b + t * kP), b1 = _mm512_load_ps(b + t * kP + 16);
    for (int r = 0; r < R; ++r) {
      const __m512 av = _mm512_set1_ps(ar[r][t]);
      c0[r] = _mm512_fmadd_ps(av, b0, c0[r]);
      c1[r] = _mm512_fmadd_ps(av, b1, c1[r]);
    }
  }
  for (int r = 0; r < R; ++r) {
    float* cr = c + r * ldc;
    if (accumulate) {
      c0[r] = _mm512_add_ps(c0[r], _mm512_maskz_loadu_ps(m0, cr));
      c1[r] = _mm512_add_ps(c1[r], _mm512_maskz_loadu_ps(m1, cr + 16));
    }
    _mm512_mask_storeu_ps(cr, m0, c0[r]);
    _mm512_mask_storeu_ps(cr + 16, m1, c1[r]);
  }
}

COIL_AVX512 void MicroRows(int rows, const float* a, int64_t lda, const float* b, int64_t kc,
                           float* c, int64_t ldc, __mmask16 m0, __mmask16 m1, bool acc) {
  switch (rows) {
    case 1: Micro<1>(a, lda, b, kc, c, ldc, m0, m1, acc); break;
    case 2: Micro<2>(a, lda, b, kc, c, ldc, m0, m1, acc); break;
    case 3: Micro<3>(a, lda, b, kc, c, ldc, m0, m1, acc); break;
    case 4: Micro<4>(a, lda, b, kc, c, ldc, m0, m1, acc); break;
    case 5: Micro<5>(a, lda, b, kc, c, ldc, m0, m1, acc); break;
    case 6: Micro<6>(a, lda, b, kc, c, ldc, m0, m1, acc); break;
    case 7: Micro<7>(a, lda, b, kc, c, ldc, m0, m1, acc); break;
    case 8: Micro<8>(a, lda, b, kc, c, ldc, m0, m1, acc); break;
    case 9: Micro<9>(a, lda, b, kc, c, ldc, m0, m1, acc); break;
    case 10: Micro<10>(a, lda, b, kc, c, ldc, m0, m1, acc); break;
    case 11: Micro<11>(a, lda, b, kc, c, ldc, m0, m1, acc); break;
    default: Micro<12>(a, lda, b, kc, c, ldc, m0, m1, acc); break;
  }
}

// e^x (avx512_exp.h).
COIL_AVX512 inline __m512 Exp16(__m512 x) { return Avx512Exp(x); }

// erf(x): 1 - q(t) e^{-x^2} with t = 1 / (1 + p|x|), the sign of x (Abramowitz and Stegun
// 7.1.26, absolute error below 1.5e-7).
COIL_AVX512 inline __m512 Erf16(__m512 x) {
  const __m512 ax = _mm512_abs_ps(x);
  const __m512 one = _mm512_set1_ps(1.0f);
  const __m512 t = _mm512_div_ps(one, _mm512_fmadd_ps(_mm512_set1_ps(0.3275911f), ax, one));
  __m512 q = _mm512_set1_ps(1.061405429f);
  q = _mm512_fmadd_ps(q, t, _mm512_set1_ps(-1.453152027f));
  q = _mm512_fmadd_ps(q, t, _mm512_set1_ps(1.421413741f));
  q = _mm512_fmadd_ps(q, t, _mm512_set1_ps(-0.284496736f));
  q = _mm512_fmadd_ps(q, t, _mm512_set1_ps(0.254829592f));
  q = _mm512_mul_ps(q, t);
  const __m512 e = Exp16(_mm512_mul_ps(_mm512_sub_ps(_mm512_setzero_ps(), ax), ax));
  const __m512 y = _mm512_fnmadd_ps(q, e, one);
  // Copy x's sign onto y (y >= 0).
  const __m512i sign = _mm512_and_si512(_mm512_castps_si512(x), _mm512_set1_epi32(INT32_MIN));
  return _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(y), sign));
}

// tanh(x) = 1 - 2 / (e^{2x} + 1) (saturates to +-1).
COIL_AVX512 inline __m512 Tanh16(__m512 x) {
  const __m512 one = _mm512_set1_ps(1.0f);
  const __m512 e = Exp16(_mm512_add_ps(x, x));
  return _mm512_sub_ps(one, _mm512_div_ps(_mm512_set1_ps(2.0f), _mm512_add_ps(e, one)));
}

// Bias and epilogue steps on out's rows [r0, r0 + rows), columns [col0, col0 + cols).
COIL_AVX512 void Epilogue(const OwnGemmJob& j, int64_t r0, int rows, int64_t col0,
                          int64_t cols) {
  const int64_t n = j.w->n();
  for (int r = 0; r < rows; ++r) {
    float* o = j.out + (r0 + r) * j.ldo + col0;
    for (int64_t c = 0; c < cols; c += 16) {
      const __mmask16 mask =
          cols - c >= 16 ? __mmask16(0xffff) : __mmask16((1u << (cols - c)) - 1);
      __m512 v = _mm512_maskz_loadu_ps(mask, o + c);
      if (j.bias != nullptr) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mask, j.bias + col0 + c));
      for (const ExternEpilogueStep& s : j.steps) {
        switch (s.kind) {
          case ExternEpilogueStep::kAdd: {
            const float* other = reinterpret_cast<const float*>(s.other->data);
            v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mask, other + (r0 + r) * n + col0 + c));
            break;
          }
          case ExternEpilogueStep::kRelu:
            v = _mm512_max_ps(v, _mm512_setzero_ps());
            break;
          case ExternEpilogueStep::kClip:
            v = _mm512_min_ps(_mm512_max_ps(v, _mm512_set1_ps(s.lo)), _mm512_set1_ps(s.hi));
            break;
          case ExternEpilogueStep::kHardswish: {
            const __m512 g = _mm512_min_ps(
                _mm512_max_ps(_mm512_add_ps(v, _mm512_set1_ps(3.0f)), _mm512_setzero_ps()),
                _mm512_set1_ps(6.0f));
            v = _mm512_div_ps(_mm512_mul_ps(v, g), _mm512_set1_ps(6.0f));
            break;
          }
          case ExternEpilogueStep::kBias:  // own_gemm.cc takes it out of the steps
            break;
          case ExternEpilogueStep::kGeluErf: {
            const __m512 e = Erf16(_mm512_mul_ps(v, _mm512_set1_ps(0.70710678118654752f)));
            v = _mm512_mul_ps(_mm512_mul_ps(v, _mm512_set1_ps(0.5f)),
                              _mm512_add_ps(e, _mm512_set1_ps(1.0f)));
            break;
          }
          case ExternEpilogueStep::kGeluTanh: {
            const __m512 v3 = _mm512_mul_ps(_mm512_mul_ps(v, v), v);
            const __m512 u = _mm512_mul_ps(_mm512_set1_ps(0.79788456080286536f),
                                           _mm512_fmadd_ps(_mm512_set1_ps(0.044715f), v3, v));
            v = _mm512_mul_ps(_mm512_mul_ps(v, _mm512_set1_ps(0.5f)),
                              _mm512_add_ps(Tanh16(u), _mm512_set1_ps(1.0f)));
            break;
          }
        }
      }
      _mm512_mask_storeu_ps(o + c, mask, v);
    }
  }
}

}  // namespace

bool OwnGemmHasAvx512Build() { return true; }

COIL_AVX512 void OwnGemmTileAvx512(const OwnGemmJob& j, int64_t r0, int64_t r1, int64_t p0,
                                   int64_t p1) {
  const int64_t k = j.w->k(), n = j.w->n();
  const bool epilogue = j.bias != nullptr || !j.steps.empty();
  for (int64_t k0 = 0; k0 < k; k0 += j.kc) {
    const int64_t kc = k0 + j.kc <= k ? j.kc : k - k0;
    const bool last = k0 + kc == k;
    for (int64_t r = r0; r < r1; r += kOwnGemmRows) {
      const int rows = static_cast<int>(r1 - r < kOwnGemmRows ? r1 - r : kOwnGemmRows);
      const float* a = j.x + r * j.ldx + k0;
      for (int64_t p = p0; p < p1; ++p) {
        const int64_t col0 = p * kP, cols = n - col0 < kP ? n - col0 : kP;
        const __mmask16 m0 = cols >= 16 ? __mmask16(0xffff) : __mmask16((1u << cols) - 1);
        const __mmask16 m1 = cols >= 32   ? __mmask16(0xffff)
                             : cols > 16 ? __mmask16((1u << (cols - 16)) - 1)
                                         : __mmask16(0);
        MicroRows(rows, a, j.ldx, j.w->panel(p) + k0 * kP, kc, j.out + r * j.ldo + col0, j.ldo,
                  m0, m1, k0 > 0);
        if (last && epilogue) Epilogue(j, r, rows, col0, cols);
      }
    }
  }
}

#else

bool OwnGemmHasAvx512Build() { return false; }
void OwnGemmTileAvx512(const OwnGemmJob&, int64_t, int64_t, int64_t, int64_t) {}

#endif  // COIL_HAVE_OWN_GEMM_AVX512

}  // namespace coil::cpu::internal
