// The generated modules' device prelude (see prelude.h).
#include "codegen_cuda/internal/prelude.h"

namespace coil::codegen_cuda_internal {

const char* CudaPrelude() {
  return R"CUDA(// coil CUDA prelude
typedef long long i64;
typedef unsigned long long u64;
typedef unsigned int u32;

struct CoilCudaError { int failed; int kind; int kernel; int expr; i64 dim; i64 value; i64 bound; };

__device__ __forceinline__ void coil_fail(CoilCudaError* e, int kind, int kernel, int expr,
                                          i64 dim, i64 value, i64 bound) {
  if (atomicCAS(&e->failed, 0, 1) == 0) {
    e->kind = kind; e->kernel = kernel; e->expr = expr; e->dim = dim; e->value = value;
    e->bound = bound;
  }
}

// f16 / bf16 <-> f32 (round to nearest even).
__device__ __forceinline__ float coil_h2f(unsigned short h) {
  float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return f;
}
__device__ __forceinline__ unsigned short coil_f2h(float f) {
  unsigned short h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h;
}
__device__ __forceinline__ float coil_bf2f(unsigned short h) {
  return __uint_as_float(((u32)h) << 16);
}
__device__ __forceinline__ unsigned short coil_f2bf(float f) {
  unsigned short h; asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h;
}
__device__ __forceinline__ float coil_round_f16(float x) { return coil_h2f(coil_f2h(x)); }
// One cvt: the high half of the pair is x rounded to bf16 and the low half bf16(0) = 0, so the
// pair's bits are the f32 bits of the rounded value (cvt + shift before).
__device__ __forceinline__ float coil_round_bf16(float x) {
  u32 d; asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(d) : "f"(x), "f"(0.0f)); return __uint_as_float(d);
}
// The bf16 bits of a value that is a bf16 already (every bf16-typed value is rounded): the high
// half of its f32 bits, no conversion.
__device__ __forceinline__ unsigned short coil_bf16_bits(float x) { return (unsigned short)(__float_as_uint(x) >> 16); }

__device__ __forceinline__ float coil_nan_f() { return __int_as_float(0x7fc00000); }
__device__ __forceinline__ double coil_nan_d() { return __longlong_as_double(0x7ff8000000000000LL); }
__device__ __forceinline__ float coil_inf_f() { return __int_as_float(0x7f800000); }
__device__ __forceinline__ double coil_inf_d() { return __longlong_as_double(0x7ff0000000000000LL); }

// Truncation toward zero saturating to int64, NaN -> 0 (the interpreter's TruncSat).
__device__ __forceinline__ i64 coil_trunc_sat(double v) {
  if (v != v) return 0;
  if (v >= 9.2233720368547758e18) return 0x7fffffffffffffffLL;
  if (v <= -9.2233720368547758e18) return -0x7fffffffffffffffLL - 1;
  return (i64)v;
}

// NaN-propagating max / min (NanMax / NanMin). f32: one FMNMX (PTX max.NaN / min.NaN: NaN if
// either is NaN, the canonical NaN as before); the only difference from the comparisons is the
// sign of a zero result when the operands are -0 and +0 (max gives +0, min -0).
__device__ __forceinline__ float coil_nanmax(float a, float b) { float d; asm("max.NaN.f32 %0, %1, %2;" : "=f"(d) : "f"(a), "f"(b)); return d; }
__device__ __forceinline__ float coil_nanmin(float a, float b) { float d; asm("min.NaN.f32 %0, %1, %2;" : "=f"(d) : "f"(a), "f"(b)); return d; }
__device__ __forceinline__ double coil_nanmax(double a, double b) { return (a != a || b != b) ? coil_nan_d() : (a < b ? b : a); }
__device__ __forceinline__ double coil_nanmin(double a, double b) { return (a != a || b != b) ? coil_nan_d() : (b < a ? b : a); }

// x / s for a divisor shared by a row's positions (row_division.h): r = 1 / s is the same
// expression at every position (computed once per row); Markstein's correction gives the IEEE
// quotient when coil_div_row_ok(x, s), |x| and |s| in [2^-60, 2^60].
__device__ __forceinline__ bool coil_div_row_ok(float x, float s) {
  const float lo = __int_as_float(0x21800000), hi = __int_as_float(0x5d800000);
  return (fabsf(s) >= lo) & (fabsf(s) <= hi) & (fabsf(x) >= lo) & (fabsf(x) <= hi);
}
__device__ __forceinline__ float coil_div_row(float x, float s) {
  const float r = 1.0f / s, q = x * r;
  return fmaf(fmaf(-q, s, x), r, q);
}

// erff as CUDA 13's libdevice computes it (the same coefficients, operations and order, so the
// same bits), without its per-coefficient selects: both polynomials, then one select. |x| <
// 1.00296: x + x p(x^2); else copysign(1 - 2^(q(|x|) (-|x|) - |x|), x). FMAs instead of 9
// selects and their constant moves (about 8 fewer instructions, off the ALU pipe).
__device__ __forceinline__ float coil_erff(float x) {
  const float t = fabsf(x), s = x * x;
  float a = fmaf(__int_as_float(0x38b1e96a), s, __int_as_float(0xba574d20));
  a = fmaf(a, s, __int_as_float(0x3baad5ea));
  a = fmaf(a, s, __int_as_float(0xbcdc1be7));
  a = fmaf(a, s, __int_as_float(0x3de718af));
  a = fmaf(a, s, __int_as_float(0xbec093ac));
  a = fmaf(a, s, __int_as_float(0x3e0375d3));
  a = fmaf(a, x, x);
  float b = fmaf(__int_as_float(0x38eb4c3a), t, __int_as_float(0xbaae005b));
  b = fmaf(b, t, __int_as_float(0x3c09919f));
  b = fmaf(b, t, __int_as_float(0xbd24d99a));
  b = fmaf(b, t, __int_as_float(0x3e235519));
  b = fmaf(b, t, __int_as_float(0x3f69b4f9));
  b = fmaf(b, t, __int_as_float(0x3f210a14));
  b = fmaf(b, -t, -t);
  float e; asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(e) : "f"(b));
  b = copysignf(1.0f - e, x);
  return t >= __int_as_float(0x3f8060fe) ? b : a;
}

// Floating remainder with the divisor's sign (prims.remainder).
__device__ __forceinline__ float coil_remainder(float a, float b) {
  float m = fmodf(a, b); if (m != 0 && ((b < 0) != (m < 0))) m += b; return m;
}
__device__ __forceinline__ double coil_remainder(double a, double b) {
  double m = fmod(a, b); if (m != 0 && ((b < 0) != (m < 0))) m += b; return m;
}
template <class T> __device__ __forceinline__ T coil_sign(T x) { return (T)((0 < x) - (x < 0)); }

// Wrapping int64 arithmetic.
__device__ __forceinline__ i64 coil_wadd(i64 a, i64 b) { return (i64)((u64)a + (u64)b); }
__device__ __forceinline__ i64 coil_wsub(i64 a, i64 b) { return (i64)((u64)a - (u64)b); }
__device__ __forceinline__ i64 coil_wmul(i64 a, i64 b) { return (i64)((u64)a * (u64)b); }
__device__ __forceinline__ i64 coil_ipow(i64 b, i64 e) {
  i64 r = 1; while (e > 0) { if (e & 1) r = coil_wmul(r, b); b = coil_wmul(b, b); e >>= 1; } return r;
}
__device__ __forceinline__ i64 coil_pymod(i64 a, i64 b) {
  if (b == -1) return 0; i64 r = a % b; if (r != 0 && ((r < 0) != (b < 0))) r += b; return r;
}

// Index arithmetic: Python floordiv / mod (a zero divisor gives 0, as the CPU backend).
template <class T> __device__ __forceinline__ T coil_floordiv(T a, T d) {
  if (d == 0) return 0; if (d == -1) return -a;
  T q = a / d, r = a % d; return q - ((r != 0) && ((r < 0) != (d < 0)));
}
template <class T> __device__ __forceinline__ T coil_mod(T a, T d) {
  if (d == 0 || d == -1) return 0;
  T r = a % d; return ((r != 0) && ((r < 0) != (d < 0))) ? r + d : r;
}
template <class T> __device__ __forceinline__ T coil_min(T a, T b) { return b < a ? b : a; }
template <class T> __device__ __forceinline__ T coil_max(T a, T b) { return b > a ? b : a; }

// philox_uniform(seed, counter): Philox4x32-10, first word, (u >> 8) * 2^-24.
__device__ __forceinline__ double coil_philox_uniform(i64 seed, i64 counter) {
  u32 c0 = (u32)(u64)counter, c1 = (u32)((u64)counter >> 32), c2 = 0, c3 = 0;
  u32 k0 = (u32)(u64)seed, k1 = (u32)((u64)seed >> 32);
  for (int round = 0; round < 10; ++round) {
    if (round > 0) { k0 += 0x9E3779B9u; k1 += 0xBB67AE85u; }
    u64 p0 = (u64)0xD2511F53u * c0, p1 = (u64)0xCD9E8D57u * c2;
    u32 hi0 = (u32)(p0 >> 32), lo0 = (u32)p0, hi1 = (u32)(p1 >> 32), lo1 = (u32)p1;
    u32 n0 = hi1 ^ c1 ^ k0, n2 = hi0 ^ c3 ^ k1;
    c0 = n0; c1 = lo1; c2 = n2; c3 = lo0;
  }
  return (double)(c0 >> 8) * (1.0 / 16777216.0);
}

// Block reductions: every thread of the block gets the result. Every thread must call them
// (they synchronize); blockDim.x is a multiple of 32.
struct CoilSum { template <class T> __device__ __forceinline__ T operator()(T a, T b) const { return a + b; } };
struct CoilProd { template <class T> __device__ __forceinline__ T operator()(T a, T b) const { return a * b; } };
struct CoilMaxF { template <class T> __device__ __forceinline__ T operator()(T a, T b) const { return coil_nanmax(a, b); } };
struct CoilMinF { template <class T> __device__ __forceinline__ T operator()(T a, T b) const { return coil_nanmin(a, b); } };
struct CoilSumI { __device__ __forceinline__ i64 operator()(i64 a, i64 b) const { return coil_wadd(a, b); } };
struct CoilProdI { __device__ __forceinline__ i64 operator()(i64 a, i64 b) const { return coil_wmul(a, b); } };
struct CoilMaxI { __device__ __forceinline__ i64 operator()(i64 a, i64 b) const { return b > a ? b : a; } };
struct CoilMinI { __device__ __forceinline__ i64 operator()(i64 a, i64 b) const { return b < a ? b : a; } };

// Block-per-row kernels run 256 threads (kernel_abi.h's kCudaBlockThreads): 8 warps, so the
// fold over the warps' slots is unrolled (the same order: slot 0, then 1, ..., 7).
#define COIL_BLOCK_WARPS 8
template <class T, class Op> __device__ __forceinline__ T coil_block_reduce(T v, Op op, T* sh) {
  for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
  __syncthreads();
  if ((threadIdx.x & 31) == 0) sh[threadIdx.x >> 5] = v;
  __syncthreads();
  T r = sh[0];
#pragma unroll
  for (int w = 1; w < COIL_BLOCK_WARPS; ++w) r = op(r, sh[w]);
  return r;
}

// Vectorized pointwise kernels: 4 consecutive elements of T in one access (4, 8 or 16 bytes;
// two 16-byte accesses for 8-byte types). Both addresses are aligned to the access.
template <int B> struct CoilVecOf;
template <> struct CoilVecOf<4> { typedef unsigned T; };
template <> struct CoilVecOf<8> { typedef uint2 T; };
template <> struct CoilVecOf<16> { typedef uint4 T; };
template <class T> __device__ __forceinline__ void coil_vcopy4(T* dst, const T* src) {
  if constexpr (sizeof(T) * 4 <= 16) {
    typedef typename CoilVecOf<sizeof(T) * 4>::T V;
    *(V*)dst = *(const V*)src;
  } else {
    ((uint4*)dst)[0] = ((const uint4*)src)[0];
    ((uint4*)dst)[1] = ((const uint4*)src)[1];
  }
}

// Element k of a vector of bf16 (16-byte aligned): the f32 is its 32-bit word shifted (even k)
// or masked (odd k), one instruction, no 16-bit extraction.
__device__ __forceinline__ float coil_bf2f_at(const unsigned short* v, int k) {
  const u32 w = ((const u32*)v)[k >> 1];
  return __uint_as_float((k & 1) ? (w & 0xffff0000u) : (w << 16));
}
// A vector store of N bf16 / f16 from f32 values: each pair rounded and packed by one cvt (the
// values of bf16-typed expressions are bf16 already: exact).
template <int N> __device__ __forceinline__ void coil_vstore_bf16(unsigned short* dst, const float* v) {
  u32 w[N / 2];
#pragma unroll
  for (int i = 0; i < N / 2; ++i) asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(w[i]) : "f"(v[2 * i + 1]), "f"(v[2 * i]));
  if constexpr (N == 8) *(uint4*)dst = make_uint4(w[0], w[1], w[2], w[3]);
  else *(uint2*)dst = make_uint2(w[0], w[1]);
}
// Packed pairs (packed_pairs.h): two f32 registers holding exact bf16 / f16 values as one
// pair word (the first in the low half), and a group's pair words stored as one vector.
__device__ __forceinline__ u32 coil_pack_bf16x2(float lo, float hi) {
  return __byte_perm(__float_as_uint(lo), __float_as_uint(hi), 0x7632);
}
__device__ __forceinline__ u32 coil_pack_f16x2(float lo, float hi) {
  u32 d; asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(d) : "f"(hi), "f"(lo)); return d;
}
template <int N> __device__ __forceinline__ void coil_vstore_words(unsigned short* dst, const u32* w) {
  if constexpr (N == 8) *(uint4*)dst = make_uint4(w[0], w[1], w[2], w[3]);
  else *(uint2*)dst = make_uint2(w[0], w[1]);
}
template <int N> __device__ __forceinline__ void coil_vstore_f16(unsigned short* dst, const float* v) {
  u32 w[N / 2];
#pragma unroll
  for (int i = 0; i < N / 2; ++i) asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(w[i]) : "f"(v[2 * i + 1]), "f"(v[2 * i]));
  if constexpr (N == 8) *(uint4*)dst = make_uint4(w[0], w[1], w[2], w[3]);
  else *(uint2*)dst = make_uint2(w[0], w[1]);
}

// Row kernels of 1- or 2-byte dtypes: 8 consecutive elements (8 or 16 bytes) in one access.
template <class T> __device__ __forceinline__ void coil_vcopy8(T* dst, const T* src) {
  if constexpr (sizeof(T) * 8 <= 16) {
    typedef typename CoilVecOf<sizeof(T) * 8>::T V;
    *(V*)dst = *(const V*)src;
  } else {
    coil_vcopy4(dst, src);
    coil_vcopy4(dst + 4, src + 4);
  }
}

// Block-per-row kernels (row_prefetch.h): sm_90's bulk prefetch into L2 of row `row` of a buffer
// of `bytes`-byte rows; nothing where that row is not 16-byte aligned and sized, or before sm_90.
__device__ __forceinline__ void coil_prefetch_row(const void* base, i64 row, i64 bytes) {
#if __CUDA_ARCH__ >= 900
  const char* p = (const char*)base + row * bytes;
  if (bytes > 0 && bytes <= 0x7fffffff && ((reinterpret_cast<u64>(p) | (u64)bytes) & 15) == 0) {
    asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" :: "l"(p), "r"((u32)bytes) : "memory");
  }
#endif
}

// A warp per row: the butterfly alone; every lane gets the same result (each combine is
// commutative, so partners compute the same value).
template <class T, class Op> __device__ __forceinline__ T coil_warp_reduce(T v, Op op) {
  for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// argmax / argmin: (value, position) pairs; the first occurrence wins, NaN counts as the extreme.
template <class T> __device__ __forceinline__ bool coil_isnan(T v) { return v != v; }
__device__ __forceinline__ bool coil_isnan(i64) { return false; }
template <class T>
__device__ __forceinline__ void coil_arg_combine(T& v, i64& p, T v2, i64 p2, bool is_max) {
  if (p2 < 0) return;
  if (p < 0) { v = v2; p = p2; return; }
  const bool n1 = coil_isnan(v), n2 = coil_isnan(v2);
  bool take;
  if (n1 || n2) take = (n1 && n2) ? p2 < p : n2;
  else if (v2 == v) take = p2 < p;
  else take = is_max ? v2 > v : v2 < v;
  if (take) { v = v2; p = p2; }
}
template <class T>
__device__ __forceinline__ i64 coil_block_arg(T v, i64 p, bool is_max, T* shv, i64* shp) {
  for (int o = 16; o > 0; o >>= 1) {
    T v2 = __shfl_xor_sync(0xffffffffu, v, o);
    i64 p2 = __shfl_xor_sync(0xffffffffu, p, o);
    coil_arg_combine(v, p, v2, p2, is_max);
  }
  __syncthreads();
  if ((threadIdx.x & 31) == 0) { shv[threadIdx.x >> 5] = v; shp[threadIdx.x >> 5] = p; }
  __syncthreads();
  T rv = shv[0]; i64 rp = shp[0];
#pragma unroll
  for (int w = 1; w < COIL_BLOCK_WARPS; ++w) coil_arg_combine(rv, rp, shv[w], shp[w], is_max);
  return rp;
}
template <class T>
__device__ __forceinline__ i64 coil_warp_arg(T v, i64 p, bool is_max) {
  for (int o = 16; o > 0; o >>= 1) {
    T v2 = __shfl_xor_sync(0xffffffffu, v, o);
    i64 p2 = __shfl_xor_sync(0xffffffffu, p, o);
    coil_arg_combine(v, p, v2, p2, is_max);
  }
  return p;
}
)CUDA";
}

}  // namespace coil::codegen_cuda_internal
