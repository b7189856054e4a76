// Fused attention kernels (see attention_source.h).
#include "codegen_cuda/internal/attention_source.h"

#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "runtime/cuda/attention_plan.h"
#include "runtime/cuda/kernel_abi.h"

namespace coil::codegen_cuda_internal {
namespace {

// Everything but the extern "C" entry points. Templates: only the variants a module names are
// instantiated.
constexpr char kCommon[] = R"CUDA(// coil fused attention (runtime/cuda/kernel_abi.h: CoilAttentionParams, AttentionSymbol)
typedef unsigned int u32;
typedef unsigned short u16;

struct CoilAttentionParams {
  const void* q; const void* k; const void* v; const void* mask; void* out;
  long long heads; long long bdim[4]; long long mstride[4]; long long mask_row, mask_col;
  int L, S; float scale; int causal; int mask_kind; int pad;
};

// DT: 0 f32, 1 f16, 2 bf16. Element i of a buffer as f32.
template <int DT> __device__ __forceinline__ float coil_attn_elem(const void* p, long long i) {
  if (DT == 0) return ((const float*)p)[i];
  const u16 h = ((const u16*)p)[i];
  if (DT == 1) { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return f; }
  return __uint_as_float(((u32)h) << 16);
}

// The mask's element offset of flattened batch index bh.
__device__ __forceinline__ long long coil_attn_mask_base(const CoilAttentionParams& p, long long bh) {
  long long off = 0;
#pragma unroll
  for (int d = 3; d >= 0; --d) {
    const long long n = p.bdim[d];
    off += (bh % n) * p.mstride[d];
    bh /= n;
  }
  return off;
}

// Scaled score x of query i and key j with the causal mask, the key bound and the mask applied.
template <int DT>
__device__ __forceinline__ float coil_attn_masked(const CoilAttentionParams& p, long long mbase,
                                                  int i, int j, float x) {
  const float ninf = __int_as_float(0xff800000);
  if (j >= p.S || (p.causal && j > i)) return ninf;
  if (p.mask_kind != 0 && i < p.L) {
    const long long at = mbase + (long long)i * p.mask_row + (long long)j * p.mask_col;
    if (p.mask_kind == 1) {
      if (((const unsigned char*)p.mask)[at] == 0) return ninf;
    } else {
      x += coil_attn_elem<DT>(p.mask, at);
    }
  }
  return x;
}

// The mask over the tile of query rows [i0, i0 + BR) and keys [j0, j0 + BC), summarized for the
// whole block (every thread calls it; two barriers when it reads): bit 0 "skip", no element
// attends (bool: all false; additive: all -inf), so the tile adds nothing to any row; bit 1
// "plain", every element attends unchanged (bool: all true; additive: all +-0), so the tile
// needs no per-element mask. Rows >= L are left out. Read with 16-byte loads, so only for a
// tile inside S of a mask contiguous along S whose rows and tile start are 16-byte aligned;
// otherwise (and for a tile with neither property) 0: the caller masks per element.
template <int DT, int BR, int BC, int NT>
__device__ __forceinline__ int coil_attn_mask_tile(const CoilAttentionParams& p, long long mbase,
                                                   int i0, int j0, int tid) {
  const int es = p.mask_kind == 1 ? 1 : (DT == 0 ? 4 : 2);
  const unsigned char* base = (const unsigned char*)p.mask + (mbase + (long long)j0) * es;
  const long long row_bytes = p.mask_row * es;
  if (p.mask_col != 1 || j0 + BC > p.S || (row_bytes & 15) != 0 ||
      (((unsigned long long)base) & 15) != 0) {
    return 0;
  }
  const int ch = BC * es / 16;  // 16-byte chunks per tile row
  bool any = false, all = true;
  for (int idx = tid; idx < BR * ch; idx += NT) {
    const int r = idx / ch, c = idx % ch;
    if (i0 + r >= p.L) continue;
    const uint4 x = *(const uint4*)(base + (long long)(i0 + r) * row_bytes + c * 16);
    const u32 w[4] = {x.x, x.y, x.z, x.w};
#pragma unroll
    for (int t = 0; t < 4; ++t) {
      if (es == 1) {  // bytes: nonzero attends
        any |= w[t] != 0u;
        all &= ((w[t] - 0x01010101u) & ~w[t] & 0x80808080u) == 0u;
      } else if (es == 2) {
        const u32 ninf = DT == 1 ? 0xfc00u : 0xff80u;
        const u32 lo = w[t] & 0xffffu, hi = w[t] >> 16;
        any |= lo != ninf || hi != ninf;
        all &= (w[t] & 0x7fff7fffu) == 0u;
      } else {
        any |= w[t] != 0xff800000u;
        all &= (w[t] & 0x7fffffffu) == 0u;
      }
    }
  }
  const int skip = __syncthreads_and(!any) ? 1 : 0;
  return skip | (__syncthreads_and(all) ? 2 : 0);
}

// The first key tile at or after j0 (a multiple of BC) that is not fully masked, or kend;
// *mt its coil_attn_mask_tile summary. Block-uniform (barriers inside).
template <int DT, int BR, int BC, int NT>
__device__ __forceinline__ int coil_attn_next_tile(const CoilAttentionParams& p, long long mbase,
                                                   int i0, int j0, int kend, int tid, int* mt) {
  *mt = 0;
  if (p.mask_kind == 0) return j0;
  for (; j0 < kend; j0 += BC) {
    *mt = coil_attn_mask_tile<DT, BR, BC, NT>(p, mbase, i0, j0, tid);
    if (!(*mt & 1)) break;
  }
  return j0;
}

template <int N> __device__ __forceinline__ void coil_attn_lds(float* d, const float* s) {
  if (N == 4) {
    const float4 t = *(const float4*)s;
    d[0] = t.x; d[1] = t.y; d[2] = t.z; d[3] = t.w;
  } else if (N == 2) {
    const float2 t = *(const float2*)s;
    d[0] = t.x; d[1] = t.y;
  } else {
#pragma unroll
    for (int i = 0; i < N; ++i) d[i] = s[i];
  }
}
template <int N> __device__ __forceinline__ void coil_attn_sts(float* d, const float* s) {
  if (N == 4) {
    *(float4*)d = make_float4(s[0], s[1], s[2], s[3]);
  } else if (N == 2) {
    *(float2*)d = make_float2(s[0], s[1]);
  } else {
#pragma unroll
    for (int i = 0; i < N; ++i) d[i] = s[i];
  }
}

// f32, SIMT: 16 x 16 threads, each RM query rows x CN keys of a BR x BC score tile and RM rows x
// D / 16 output columns. Shared: Q^T, then per key tile K^T (its space reused for P) and V.
template <int D, int RM, int CN>
__device__ __forceinline__ void coil_attn_f32(const CoilAttentionParams& p) {
  constexpr int TX = 16, TY = 16, BR = TY * RM, BC = TX * CN, NT = TX * TY;
  constexpr int OG = D / (4 * TX);
  constexpr int KP = D * BC > BR * BC ? D * BC : BR * BC;
  __shared__ __align__(16) float qs[D * BR];  // qs[d * BR + r]
  __shared__ __align__(16) float kp[KP];      // K^T: kp[d * BC + c]; then P: kp[r * BC + c]
  __shared__ __align__(16) float vs[BC * D];  // vs[c * D + e]
  const int tid = threadIdx.x, tx = tid % TX, ty = tid / TX;
  // The last query tile first: under a causal mask it has the most key tiles.
  const int L = p.L, S = p.S, i0 = (gridDim.x - 1 - blockIdx.x) * BR;
  const float ninf = __int_as_float(0xff800000);
  for (long long bh = blockIdx.y; bh < p.heads; bh += gridDim.y) {
    const float* q = (const float*)p.q + bh * L * D;
    const float* k = (const float*)p.k + bh * S * D;
    const float* v = (const float*)p.v + bh * S * D;
    float* out = (float*)p.out + bh * L * D;
    const long long mbase = p.mask_kind != 0 ? coil_attn_mask_base(p, bh) : 0;
    __syncthreads();
    for (int idx = tid; idx < BR * D / 4; idx += NT) {
      const int r = idx % BR, d4 = idx / BR;
      float4 x = make_float4(0.f, 0.f, 0.f, 0.f);
      if (i0 + r < L) x = *(const float4*)(q + (long long)(i0 + r) * D + d4 * 4);
      qs[(d4 * 4 + 0) * BR + r] = x.x;
      qs[(d4 * 4 + 1) * BR + r] = x.y;
      qs[(d4 * 4 + 2) * BR + r] = x.z;
      qs[(d4 * 4 + 3) * BR + r] = x.w;
    }
    float o[RM][OG * 4], m[RM], l[RM];
#pragma unroll
    for (int i = 0; i < RM; ++i) {
      m[i] = ninf;
      l[i] = 0.f;
#pragma unroll
      for (int e = 0; e < OG * 4; ++e) o[i][e] = 0.f;
    }
    const int kend = p.causal ? min(S, i0 + BR) : S;
    // Software pipelining through registers: K of the next tile is read from global memory
    // while this tile's P V runs, and V of this tile while its scores are computed.
    constexpr int LN = BC * D / 4 / NT;  // float4 per thread of a K or V tile
    float4 kr[LN], vr[LN];
    auto load_tile = [&](float4* r, const float* base, int j0, bool transposed) {
#pragma unroll
      for (int u = 0; u < LN; ++u) {
        const int idx = tid + u * NT;
        const int c = transposed ? idx % BC : idx / (D / 4), d4 = transposed ? idx / BC : idx % (D / 4);
        r[u] = make_float4(0.f, 0.f, 0.f, 0.f);
        if (j0 + c < S) r[u] = *(const float4*)(base + (long long)(j0 + c) * D + d4 * 4);
      }
    };
    // Fully masked key tiles (coil_attn_mask_tile) are skipped: they add nothing to any row.
    int mt;
    int j0 = coil_attn_next_tile<0, BR, BC, NT>(p, mbase, i0, 0, kend, tid, &mt);
    if (j0 < kend) load_tile(kr, k, j0, true);
    while (j0 < kend) {
      __syncthreads();
#pragma unroll
      for (int u = 0; u < LN; ++u) {
        const int idx = tid + u * NT, c = idx % BC, d4 = idx / BC;
        kp[(d4 * 4 + 0) * BC + c] = kr[u].x;
        kp[(d4 * 4 + 1) * BC + c] = kr[u].y;
        kp[(d4 * 4 + 2) * BC + c] = kr[u].z;
        kp[(d4 * 4 + 3) * BC + c] = kr[u].w;
      }
      load_tile(vr, v, j0, false);
      __syncthreads();
      float s[RM][CN];
#pragma unroll
      for (int i = 0; i < RM; ++i) {
#pragma unroll
        for (int j = 0; j < CN; ++j) s[i][j] = 0.f;
      }
#pragma unroll 8
      for (int d = 0; d < D; ++d) {
        float a[RM], b[CN];
        coil_attn_lds<RM>(a, qs + d * BR + ty * RM);
        coil_attn_lds<CN>(b, kp + d * BC + tx * CN);
#pragma unroll
        for (int i = 0; i < RM; ++i) {
#pragma unroll
          for (int j = 0; j < CN; ++j) s[i][j] = fmaf(a[i], b[j], s[i][j]);
        }
      }
      const bool edge = (p.mask_kind != 0 && !(mt & 2)) || j0 + BC > S || (p.causal && j0 + BC - 1 > i0);
#pragma unroll
      for (int i = 0; i < RM; ++i) {
        const int row = i0 + ty * RM + i;
        float mx = ninf;
#pragma unroll
        for (int j = 0; j < CN; ++j) {
          const float x = s[i][j] * p.scale;
          s[i][j] = edge ? coil_attn_masked<0>(p, mbase, row, j0 + tx * CN + j, x) : x;
          mx = fmaxf(mx, s[i][j]);
        }
#pragma unroll
        for (int off = TX / 2; off > 0; off /= 2) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, off));
        const float mn = fmaxf(m[i], mx);
        const float base = mn == ninf ? 0.f : mn;
        const float alpha = expf(m[i] - base);
        m[i] = mn;
        float sum = 0.f;
#pragma unroll
        for (int j = 0; j < CN; ++j) {
          s[i][j] = expf(s[i][j] - base);
          sum += s[i][j];
        }
        l[i] = l[i] * alpha + sum;
#pragma unroll
        for (int e = 0; e < OG * 4; ++e) o[i][e] *= alpha;
      }
#pragma unroll
      for (int u = 0; u < LN; ++u) {
        const int idx = tid + u * NT, c = idx / (D / 4), d4 = idx % (D / 4);
        *(float4*)(vs + c * D + d4 * 4) = vr[u];
      }
      __syncthreads();
#pragma unroll
      for (int i = 0; i < RM; ++i) coil_attn_sts<CN>(kp + (ty * RM + i) * BC + tx * CN, s[i]);
      int next_mt;
      const int nj = coil_attn_next_tile<0, BR, BC, NT>(p, mbase, i0, j0 + BC, kend, tid, &next_mt);
      if (nj < kend) load_tile(kr, k, nj, true);
      __syncthreads();
#pragma unroll 2
      for (int c = 0; c < BC; c += 4) {
        float pr[RM][4];
#pragma unroll
        for (int i = 0; i < RM; ++i) coil_attn_lds<4>(pr[i], kp + (ty * RM + i) * BC + c);
#pragma unroll
        for (int u = 0; u < 4; ++u) {
#pragma unroll
          for (int g = 0; g < OG; ++g) {
            float vv[4];
            coil_attn_lds<4>(vv, vs + (c + u) * D + g * 4 * TX + tx * 4);
#pragma unroll
            for (int i = 0; i < RM; ++i) {
#pragma unroll
              for (int w = 0; w < 4; ++w) o[i][g * 4 + w] = fmaf(pr[i][u], vv[w], o[i][g * 4 + w]);
            }
          }
        }
      }
      j0 = nj;
      mt = next_mt;
    }
#pragma unroll
    for (int i = 0; i < RM; ++i) {
      float tot = l[i];
#pragma unroll
      for (int off = TX / 2; off > 0; off /= 2) tot += __shfl_xor_sync(0xffffffffu, tot, off);
      const int row = i0 + ty * RM + i;
      if (row < L) {
#pragma unroll
        for (int g = 0; g < OG; ++g) {
          float r[4];
#pragma unroll
          for (int w = 0; w < 4; ++w) r[w] = o[i][g * 4 + w] / tot;
          coil_attn_sts<4>(out + (long long)row * D + g * 4 * TX + tx * 4, r);
        }
      }
    }
  }
}

// f16 / bf16 on tensor cores.
template <int DT>
__device__ __forceinline__ void coil_attn_mma(float* c, const u32* a, u32 b0, u32 b1) {
  if (DT == 1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
}
__device__ __forceinline__ void coil_attn_ldsm4(u32* r, const u16* smem) {
  const u32 addr = (u32)__cvta_generic_to_shared(smem);
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}
__device__ __forceinline__ void coil_attn_ldsm4_t(u32* r, const u16* smem) {
  const u32 addr = (u32)__cvta_generic_to_shared(smem);
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}
// Two f32 as a pair of the input dtype (lo in the low half), rounded to nearest even.
template <int DT> __device__ __forceinline__ u32 coil_attn_pack(float lo, float hi) {
  u32 d;
  if (DT == 1) {
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(d) : "f"(hi), "f"(lo));
  } else {
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(d) : "f"(hi), "f"(lo));
  }
  return d;
}
// Element (row, col) of a [rows][D] tile of 16-bit values: 16-byte chunks XOR row % 8, so that
// ldmatrix's 8 rows of one chunk column hit 8 different bank groups.
template <int D> __device__ __forceinline__ int coil_attn_swz(int row, int col) {
  return row * D + ((((col >> 3) ^ (row & 7))) << 3) + (col & 7);
}
// ROWS rows x D of src (row stride D) into a swizzled tile through cp.async by NT threads (16
// bytes per copy, no registers; rows >= rows_left zero-filled: source size 0, the address then
// the tile's first row), in flight until coil_attn_wait.
template <int D, int ROWS, int NT>
__device__ __forceinline__ void coil_attn_tile_async(u16* dst, const u16* src, int rows_left, int tid) {
  constexpr int CH = D / 8, RS = NT / CH;  // RS rows a step: a multiple of 8, the swizzle's period
  static_assert(NT % CH == 0 && RS % 8 == 0 && ROWS % RS == 0, "whole rows per step");
  const int r = tid / CH, ch = tid % CH;
  const u32 d = (u32)__cvta_generic_to_shared(dst + coil_attn_swz<D>(r, ch * 8));
  const u16* g = src + r * D + ch * 8;
#pragma unroll
  for (int u = 0; u < ROWS / RS; ++u) {
    const bool ok = r + u * RS < rows_left;
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;"
                 :: "r"(d + u * RS * D * 2), "l"(ok ? g + u * RS * D : src), "r"(ok ? 16 : 0));
  }
}
__device__ __forceinline__ void coil_attn_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int N> __device__ __forceinline__ void coil_attn_wait() {
  asm volatile("cp.async.wait_group %0;" :: "n"(N) : "memory");
}
// 2^x by the special function unit alone (exp2f adds a denormal range fix-up; results below
// 2^-126 flush to 0, which a sum holding the row maximum's 1 does not see; 2^-inf = 0).
__device__ __forceinline__ float coil_attn_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// NW warps of 16 query rows each (a BR = 16 NW-row block), key tiles of BC. S = Q K^T and
// O += P V by mma.sync m16n8k16 (each K / V fragment loaded by ldmatrix); the softmax in the
// log2 domain on the accumulators (a thread holds rows g and g + 8 of its warp's 16), P reused
// from the accumulator registers as the A operand. Q, and the first K / V tile, are copied by
// cp.async together; QREG keeps Q's fragments in registers for the whole row block, else they
// are read from shared memory per key tile (fewer registers, more blocks per SM). ST = 2: K / V
// double-buffered, the next tile's copies in flight while this one computes; ST = 1: each tile
// copied, then waited for. Masks are evaluated per element only where needed (a warp's causal
// diagonal, the last partial tile, a mask tile neither all-attend nor all-masked:
// coil_attn_mask_tile); fully masked tiles are skipped by the block, and a warp whose 16 rows
// all lie before the tile's first key (causal) or past L skips it. MASK = 0: the kernel for
// calls without a mask (p.mask_kind ignored; no mask code, fewer registers).
template <int D, int DT, int ST, int NW, int BC, int QREG, int MASK>
__device__ __forceinline__ void coil_attn_tc(const CoilAttentionParams& p) {
  constexpr int NT = 32 * NW, BR = 16 * NW, NB = BC / 8, KB = D / 16, DB = D / 8;
  __shared__ __align__(128) u16 qs[BR * D];
  __shared__ __align__(128) u16 ks_buf[ST][BC * D];
  __shared__ __align__(128) u16 vs_buf[ST][BC * D];
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, g = lane >> 2, tig = lane & 3;
  // The last query tile first: under a causal mask it has the most key tiles.
  const int L = p.L, S = p.S, i0 = (gridDim.x - 1 - blockIdx.x) * BR, wr0 = i0 + warp * 16;
  const int r0 = wr0 + g;  // this thread's rows: r0 and r0 + 8
  const float ninf = __int_as_float(0xff800000);
  const float log2e = 1.4426950408889634f, scale2 = p.scale * log2e;
  // ldmatrix addresses (elements) of this lane: Q's A fragments, K's B pairs, V's B pairs (trans).
  const int qrow = warp * 16 + (lane & 7) + ((lane >> 3) & 1) * 8, qcol = (lane >> 4) * 8;
  const int krow = (lane & 7) + (lane >> 4) * 8, kcol = ((lane >> 3) & 1) * 8;
  const int vrow = (lane & 7) + ((lane >> 3) & 1) * 8, vcol = (lane >> 4) * 8;
  for (long long bh = blockIdx.y; bh < p.heads; bh += gridDim.y) {
    const u16* q = (const u16*)p.q + bh * L * D;
    const u16* k = (const u16*)p.k + bh * S * D;
    const u16* v = (const u16*)p.v + bh * S * D;
    u16* out = (u16*)p.out + bh * L * D;
    const int mk = MASK ? p.mask_kind : 0;
    const long long mbase = mk != 0 ? coil_attn_mask_base(p, bh) : 0;
    const int kend = p.causal ? min(S, i0 + BR) : S;
    // Fully masked key tiles (coil_attn_mask_tile) are skipped, before their copies are issued.
    int mt = 0;
    int j0 = MASK ? coil_attn_next_tile<DT, BR, BC, NT>(p, mbase, i0, 0, kend, tid, &mt) : 0;
    __syncthreads();  // the previous head's reads of qs and of the stages are done
    coil_attn_tile_async<D, BR, NT>(qs, q + (long long)i0 * D, L - i0, tid);
    coil_attn_commit();
    if (ST == 2 && j0 < kend) {
      coil_attn_tile_async<D, BC, NT>(ks_buf[0], k + (long long)j0 * D, S - j0, tid);
      coil_attn_tile_async<D, BC, NT>(vs_buf[0], v + (long long)j0 * D, S - j0, tid);
    }
    coil_attn_commit();
    coil_attn_wait<1>();  // Q (the first K / V tile may still be in flight)
    __syncthreads();
    u32 qf[QREG ? KB : 1][4];
    if constexpr (QREG != 0) {
#pragma unroll
      for (int kb = 0; kb < KB; ++kb) coil_attn_ldsm4(qf[kb], qs + coil_attn_swz<D>(qrow, kb * 16 + qcol));
    }
    float o[DB][4], m[2] = {ninf, ninf}, l[2] = {0.f, 0.f};
#pragma unroll
    for (int db = 0; db < DB; ++db) o[db][0] = o[db][1] = o[db][2] = o[db][3] = 0.f;
    for (int st = 0; j0 < kend; st ^= ST - 1) {
      const u16* ks = ks_buf[st];
      const u16* vs = vs_buf[st];
      int next_mt = 0;
      const int nj =
          MASK ? coil_attn_next_tile<DT, BR, BC, NT>(p, mbase, i0, j0 + BC, kend, tid, &next_mt) : j0 + BC;
      if (ST == 2) {
        if (nj < kend) {  // the stage the previous tile read: free since its last barrier
          coil_attn_tile_async<D, BC, NT>(ks_buf[st ^ 1], k + (long long)nj * D, S - nj, tid);
          coil_attn_tile_async<D, BC, NT>(vs_buf[st ^ 1], v + (long long)nj * D, S - nj, tid);
        }
        coil_attn_commit();
        coil_attn_wait<1>();  // this tile's copies (all but the group just committed)
      } else {
        __syncthreads();  // the previous tile's reads are done
        coil_attn_tile_async<D, BC, NT>(ks_buf[0], k + (long long)j0 * D, S - j0, tid);
        coil_attn_tile_async<D, BC, NT>(vs_buf[0], v + (long long)j0 * D, S - j0, tid);
        coil_attn_commit();
        coil_attn_wait<0>();
      }
      __syncthreads();
      if (wr0 < L && !(p.causal && j0 > wr0 + 15)) {
        float s[NB][4];
#pragma unroll
        for (int nb = 0; nb < NB; ++nb) s[nb][0] = s[nb][1] = s[nb][2] = s[nb][3] = 0.f;
#pragma unroll
        for (int kb = 0; kb < KB; ++kb) {
          u32 qa[4];
          if constexpr (QREG != 0) {
            qa[0] = qf[kb][0]; qa[1] = qf[kb][1]; qa[2] = qf[kb][2]; qa[3] = qf[kb][3];
          } else {
            coil_attn_ldsm4(qa, qs + coil_attn_swz<D>(qrow, kb * 16 + qcol));
          }
#pragma unroll
          for (int nb2 = 0; nb2 < NB / 2; ++nb2) {
            u32 b[4];
            coil_attn_ldsm4(b, ks + coil_attn_swz<D>(nb2 * 16 + krow, kb * 16 + kcol));
            coil_attn_mma<DT>(s[2 * nb2], qa, b[0], b[1]);
            coil_attn_mma<DT>(s[2 * nb2 + 1], qa, b[2], b[3]);
          }
        }
        const bool edge = (mk != 0 && !(mt & 2)) || j0 + BC > S || (p.causal && j0 + BC - 1 > wr0);
        // Off the edge (for a positive scale) the scores stay unscaled: their maximum is scaled
        // once and the scale folds into the exponent's FFMA. On it they are scaled and masked
        // first (k = 1).
        const bool plain = !edge && scale2 > 0.f;
        const float k2 = plain ? scale2 : 1.f;
        float mx[2] = {ninf, ninf};
        if (!plain) {
#pragma unroll
          for (int nb = 0; nb < NB; ++nb) {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
              const int row = r0 + (e >> 1) * 8, col = j0 + nb * 8 + tig * 2 + (e & 1);
              if (MASK) {
                s[nb][e] = edge ? coil_attn_masked<DT>(p, mbase, row, col, s[nb][e] * p.scale) * log2e
                                : s[nb][e] * scale2;
              } else {
                s[nb][e] = edge && (col >= S || (p.causal && col > row)) ? ninf : s[nb][e] * scale2;
              }
            }
          }
        }
#pragma unroll
        for (int nb = 0; nb < NB; ++nb) {
#pragma unroll
          for (int e = 0; e < 4; ++e) mx[e >> 1] = fmaxf(mx[e >> 1], s[nb][e]);
        }
        float base[2], alpha[2], sum[2] = {0.f, 0.f};
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 1));
          mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 2));
          const float mn = fmaxf(m[h], mx[h] * k2);
          base[h] = mn == ninf ? 0.f : mn;
          alpha[h] = coil_attn_exp2(m[h] - base[h]);
          m[h] = mn;
        }
        u32 a[BC / 16][4];
#pragma unroll
        for (int nb = 0; nb < NB; ++nb) {
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            s[nb][e] = coil_attn_exp2(fmaf(s[nb][e], k2, -base[e >> 1]));
            sum[e >> 1] += s[nb][e];
          }
        }
#pragma unroll
        for (int h = 0; h < 2; ++h) l[h] = l[h] * alpha[h] + sum[h];
        // The output rescaled only when a row's maximum grew somewhere in the warp.
        if (__any_sync(0xffffffffu, alpha[0] != 1.f || alpha[1] != 1.f)) {
#pragma unroll
          for (int db = 0; db < DB; ++db) {
            o[db][0] *= alpha[0]; o[db][1] *= alpha[0];
            o[db][2] *= alpha[1]; o[db][3] *= alpha[1];
          }
        }
#pragma unroll
        for (int kk = 0; kk < BC / 16; ++kk) {
          a[kk][0] = coil_attn_pack<DT>(s[2 * kk][0], s[2 * kk][1]);
          a[kk][1] = coil_attn_pack<DT>(s[2 * kk][2], s[2 * kk][3]);
          a[kk][2] = coil_attn_pack<DT>(s[2 * kk + 1][0], s[2 * kk + 1][1]);
          a[kk][3] = coil_attn_pack<DT>(s[2 * kk + 1][2], s[2 * kk + 1][3]);
        }
#pragma unroll
        for (int kk = 0; kk < BC / 16; ++kk) {
#pragma unroll
          for (int db2 = 0; db2 < D / 16; ++db2) {
            u32 b[4];
            coil_attn_ldsm4_t(b, vs + coil_attn_swz<D>(kk * 16 + vrow, db2 * 16 + vcol));
            coil_attn_mma<DT>(o[2 * db2], a[kk], b[0], b[1]);
            coil_attn_mma<DT>(o[2 * db2 + 1], a[kk], b[2], b[3]);
          }
        }
      }
      if (ST == 2) __syncthreads();  // this stage is prefetched into two tiles later
      j0 = nj;
      mt = next_mt;
    }
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float tot = l[h];
      tot += __shfl_xor_sync(0xffffffffu, tot, 1);
      tot += __shfl_xor_sync(0xffffffffu, tot, 2);
      const int row = r0 + h * 8;
      if (row < L) {
#pragma unroll
        for (int db = 0; db < DB; ++db) {
          *(u32*)(out + (long long)row * D + db * 8 + tig * 2) =
              coil_attn_pack<DT>(o[db][2 * h] / tot, o[db][2 * h + 1] / tot);
        }
      }
    }
  }
}
)CUDA";

}  // namespace

std::vector<AttentionVariant> AttentionVariants(const proto::Schedule& schedule) {
  std::vector<AttentionVariant> out;
  for (const proto::Kernel& k : schedule.kernels()) {
    std::optional<cuda::AttentionPlan> p = cuda::PlanAttention(schedule, k);
    if (!p.has_value() || !p->unsupported.empty()) continue;
    const std::string dtype = cuda::AttentionDTypeName(p->dtype);
    out.push_back({dtype, static_cast<int>(p->head_dim), cuda::AttentionEntryMasked(*p)});
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string AttentionKernelsSource(const std::vector<AttentionVariant>& variants) {
  std::string out = kCommon;
  for (const AttentionVariant& v : variants) {
    const int d = v.head_dim;
    const bool half = v.dtype != "f32";
    std::string body, bounds = absl::StrCat(cuda::AttentionBlockThreads(half));
    if (!half) {
      body = d <= 64 ? absl::StrCat("coil_attn_f32<", d, ", 4, 4>(p);")
                     : absl::StrCat("coil_attn_f32<", d, ", 2, 2>(p);");
    } else if (d <= 64) {
      // Q's fragments read per key tile and 4 blocks per SM (<= 128 registers): GPT-2's
      // [8, 12, 512, 64] is_causal 0.031 ms against 0.033 with them in registers and 3 blocks
      // (H200, tools/cuda_attention_bench.py; docs/benchmarks.md).
      body = absl::StrCat("coil_attn_tc<64, ", v.dtype == "f16" ? 1 : 2, ", 2, 4, 64, 0, ",
                          v.masked ? 1 : 0, ">(p);");
      absl::StrAppend(&bounds, ", 4");
    } else {
      // Key tiles of 32, double-buffered: 48 KiB of static shared memory with the 64-row Q
      // tile; Q's fragments in registers (2 blocks per SM).
      body = absl::StrCat("coil_attn_tc<", d, ", ", v.dtype == "f16" ? 1 : 2, ", 2, 4, 32, 1, ",
                          v.masked ? 1 : 0, ">(p);");
    }
    absl::StrAppend(&out, "extern \"C\" __global__ void __launch_bounds__(", bounds, ") ",
                    cuda::AttentionSymbol(v.dtype, d, v.masked), "(CoilAttentionParams p) { ",
                    body, " }\n");
  }
  return out;
}

}  // namespace coil::codegen_cuda_internal
