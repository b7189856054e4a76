// e^x on 16 f32 lanes with AVX-512F intrinsics, shared by the runtime's hand-written AVX-512
// kernels (attention_avx512.cc's softmax, own_gemm_avx512.cc's GELU). Compiled for AVX-512F by
// function attribute, like its callers; only x86-64 GCC/clang builds have it.
//
// x is clamped to [-87, 88] and x below -87 gives 0; no NaN may reach it. 2^n * p(r) with
// |r| <= ln2 / 2 and p a degree-7 Taylor polynomial: relative error ~2e-7 before rounding.
#ifndef COIL_RUNTIME_CPU_INTERNAL_AVX512_EXP_H_
#define COIL_RUNTIME_CPU_INTERNAL_AVX512_EXP_H_

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

namespace coil::cpu::internal {

__attribute__((target("avx512f"))) inline __m512 Avx512Exp(__m512 x) {
  const __m512 lo = _mm512_set1_ps(-87.0f);
  const __mmask16 keep = _mm512_cmp_ps_mask(x, lo, _CMP_GE_OQ);
  x = _mm512_min_ps(_mm512_max_ps(x, lo), _mm512_set1_ps(88.0f));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 y = _mm512_set1_ps(1.0f / 5040);
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(1.0f / 720));
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(1.0f / 120));
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(1.0f / 24));
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(1.0f / 6));
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(0.5f));
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(1.0f));
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(1.0f));
  // 2^n by scalef (n in [-126, 127] here).
  return _mm512_maskz_mov_ps(keep, _mm512_scalef_ps(y, n));
}

}  // namespace coil::cpu::internal

#endif  // x86-64 GCC/clang
#endif  // COIL_RUNTIME_CPU_INTERNAL_AVX512_EXP_H_
