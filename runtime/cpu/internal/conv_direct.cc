// Direct depthwise and pointwise convolutions over NHWC activations (conv_direct.h).
#include "runtime/cpu/internal/conv_direct.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>
#include <type_traits>

#include "runtime/cpu/internal/conv_direct_dw_tile.h"
#include "runtime/cpu/thread_pool.h"

// As gemv.cc: GCC/clang vector types, the task functions compiled for AVX-512, AVX2 and the
// baseline and picked at load time; the helpers they call are always inlined into each clone.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define COIL_CONV_CLONES \
  __attribute__((target_clones("avx512f", "avx2", "default"), optimize("O3")))
#elif defined(__x86_64__) && defined(__clang__) && __clang_major__ >= 14
#define COIL_CONV_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define COIL_CONV_CLONES
#endif
#define COIL_INLINE inline __attribute__((always_inline))
// The same for a lambda inside such a helper (a lambda left out of line would be compiled for
// the baseline target and pass vectors by another convention than its caller's clone).
#define COIL_LAMBDA_INLINE __attribute__((always_inline))

namespace coil::cpu::internal {
namespace {

typedef float V16 __attribute__((vector_size(64)));
typedef float V8 __attribute__((vector_size(32)));

constexpr int64_t kMaxDepthwiseKernel = 7;
// Flops per thread a call should have (a few microseconds of work, about a pool wake-up).
constexpr double kFlopsPerThread = 256e3;

template <typename V>
COIL_INLINE V Load(const float* p) {
  V v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}
template <typename V>
COIL_INLINE void StoreV(float* p, V v) {
  __builtin_memcpy(p, &v, sizeof v);
}
template <typename V>
COIL_INLINE V Splat(float f) {
  return V{} + f;
}
template <>
COIL_INLINE float Splat<float>(float f) {
  return f;
}

// max(v, lo) and min(v, hi) as std::max / std::min compute them (a NaN v stays NaN).
template <typename V>
COIL_INLINE V MaxOf(V v, V lo) {
  return v < lo ? lo : v;
}
template <typename V>
COIL_INLINE V MinOf(V v, V hi) {
  return hi < v ? hi : v;
}

// The epilogue steps on the results at output index `idx` (gemv.cc's Store, lane by lane).
template <typename V>
COIL_INLINE V Steps(V v, absl::Span<const ExternEpilogueStep> steps, int64_t idx) {
  for (const ExternEpilogueStep& step : steps) {
    switch (step.kind) {
      case ExternEpilogueStep::kAdd:
        v += Load<V>(reinterpret_cast<const float*>(step.other->data) + idx);
        break;
      case ExternEpilogueStep::kRelu:
        v = MaxOf(v, Splat<V>(0.0f));
        break;
      case ExternEpilogueStep::kClip:
        v = MinOf(MaxOf(v, Splat<V>(step.lo)), Splat<V>(step.hi));
        break;
      case ExternEpilogueStep::kHardswish:
        // A multiply by 1/6, not a division (a vector division is ~10x a multiply's
        // throughput, and this runs once per output); within an ulp of the quotient.
        v = v * MinOf(MaxOf(v + 3.0f, Splat<V>(0.0f)), Splat<V>(6.0f)) * (1.0f / 6.0f);
        break;
      case ExternEpilogueStep::kBias:  // aten.mm's: ConvolutionWithEpilogue declines them
      case ExternEpilogueStep::kGeluErf:
      case ExternEpilogueStep::kGeluTanh:
        break;
    }
  }
  return v;
}

struct Job {
  const DirectConvShape* s;
  const float* x;
  const DirectConvWeights* w;
  const float* bias;
  absl::Span<const ExternEpilogueStep> steps;
  float* out;
  // How the work is cut into tasks (Partition): depthwise, channels per task (a multiple of
  // 16, the last task of a row takes the rest); pointwise, rows and 16-column panels per task.
  int64_t task_channels = 0, task_rows = 0, task_panels = 0;
  // Depthwise and few channels: output rows per task (a band of one image's rows).
  int64_t task_band = 1;
  // Depthwise: each vector of channels down the band's rows (Partition), else rows outer.
  bool rows_inner = false;
  // Whether the row kernels take interior columns in blocks of kOwBlock (OwBlocksOn).
  bool ow_blocks = true;
  // Depthwise: conv_direct_dw_tile.h's tiles where the shape allows (DwTilesOn).
  bool dw_tiles = true;
  // The row kernels' interior output columns [lo, hi) (InteriorColumns), once per call.
  int64_t interior_lo = 0, interior_hi = 0;
};

// ---- depthwise -------------------------------------------------------------------------------

// Outputs per register block of the row kernels: each output of a block has its own
// accumulator, so a block's taps are kOwBlock independent chains of multiply-adds (one output at
// a time was one chain of kh * kw dependent ones, bound by the multiply-add's latency), and each
// weight vector loaded serves kOwBlock outputs.
constexpr int64_t kOwBlock = 8;

// COIL_CONV_DIRECT_OW_BLOCKS=0 (read once per process) runs every output column on its own, as
// before the blocks (for before / after measurements in one binary).
bool OwBlocksOn() {
  static const bool on = [] {
    const char* v = std::getenv("COIL_CONV_DIRECT_OW_BLOCKS");
    return v == nullptr || std::string(v) != "0";
  }();
  return on;
}

// The output columns [lo, hi) whose taps all fall inside the input row (no column padding):
// iw0 = ow * stride - pad >= 0 and iw0 + span < w.
COIL_INLINE void InteriorColumns(const DirectConvShape& s, int64_t span, int64_t& lo,
                                 int64_t& hi) {
  lo = std::min(s.ow, (s.pad_w + s.stride_w - 1) / s.stride_w);
  const int64_t last = s.w - 1 - span + s.pad_w;  // the largest ow * stride allowed
  hi = last < 0 ? lo : std::max(lo, std::min(s.ow, last / s.stride_w + 1));
}

// Channels [c0, c0 + lanes of V) of `count` (<= kOwBlock) output columns from ow0 of one output
// row, each column its own accumulator, where taps may fall outside the input row: such taps
// are skipped column by column. `rows` are the input rows at column 0, channel 0 (null:
// padding), `obase` the output row's offset.
template <typename V, int KH, int KW>
COIL_INLINE void DepthwiseEdge(const Job& j, const float* const (&rows)[kMaxDepthwiseKernel],
                               int64_t obase, int64_t c0, int64_t ow0, int64_t count) {
  const DirectConvShape& s = *j.s;
  const int64_t kh_n = KH > 0 ? KH : s.kh, kw_n = KW > 0 ? KW : s.kw, c = s.c;
  const float* wp = j.w->taps() + c0;
  const int64_t ws = j.w->tap_stride();
  const V b = j.bias != nullptr ? Load<V>(j.bias + c0) : Splat<V>(0.0f);
  V acc[kOwBlock];
  for (int64_t i = 0; i < kOwBlock; ++i) acc[i] = b;
  const int64_t iw0 = ow0 * s.stride_w - s.pad_w;
  // col[kw][i]: the input column's offset for tap kw of column i, -1 outside the row.
  int64_t col[kMaxDepthwiseKernel][kOwBlock];
  for (int64_t kw = 0; kw < kw_n; ++kw) {
    for (int64_t i = 0; i < kOwBlock; ++i) {
      const int64_t iw = iw0 + i * s.stride_w + kw * s.dil_w;
      col[kw][i] = i < count && iw >= 0 && iw < s.w ? iw * c + c0 : -1;
    }
  }
  for (int64_t kh = 0; kh < kh_n; ++kh) {
    const float* r = rows[kh];
    if (r == nullptr) continue;
    for (int64_t kw = 0; kw < kw_n; ++kw) {
      const V wt = Load<V>(wp + (kh * kw_n + kw) * ws);
      for (int64_t i = 0; i < kOwBlock; ++i) {
        if (col[kw][i] >= 0) acc[i] += Load<V>(r + col[kw][i]) * wt;
      }
    }
  }
  for (int64_t i = 0; i < kOwBlock; ++i) {
    if (i >= count) break;
    const int64_t idx = obase + (ow0 + i) * c + c0;
    StoreV(j.out + idx, Steps(acc[i], j.steps, idx));
  }
}

// Channels [c0, c0 + lanes of V) of output row (n, oh). KH / KW: the kernel's size when known
// at compile time (3x3: weights kept in registers), 0 for any.
template <typename V, int KH, int KW>
COIL_INLINE void DepthwiseRow(const Job& j, int64_t n, int64_t oh, int64_t c0) {
  const DirectConvShape& s = *j.s;
  const int64_t kh_n = KH > 0 ? KH : s.kh, kw_n = KW > 0 ? KW : s.kw, c = s.c;
  const float* rows[kMaxDepthwiseKernel];
  const int64_t ih0 = oh * s.stride_h - s.pad_h;
  for (int64_t kh = 0; kh < kh_n; ++kh) {
    const int64_t ih = ih0 + kh * s.dil_h;
    rows[kh] = ih >= 0 && ih < s.h ? j.x + ((n * s.h + ih) * s.w) * c + c0 : nullptr;
  }
  const float* wp = j.w->taps() + c0;
  const int64_t ws = j.w->tap_stride();
  constexpr bool kInRegisters = KH == 3 && KW == 3;
  constexpr int kFixed = kInRegisters ? KH * KW : 1;
  V wv[kFixed];
  if (kInRegisters) {
    for (int t = 0; t < kFixed; ++t) wv[t] = Load<V>(wp + t * ws);
  }
  auto weight = [&](int64_t kh, int64_t kw) COIL_LAMBDA_INLINE {
    return kInRegisters ? wv[kInRegisters ? kh * kw_n + kw : 0] : Load<V>(wp + (kh * kw_n + kw) * ws);
  };
  const V b = j.bias != nullptr ? Load<V>(j.bias + c0) : Splat<V>(0.0f);
  const int64_t obase = ((n * s.oh + oh) * s.ow) * c + c0;
  const int64_t span = (kw_n - 1) * s.dil_w;
  // One output column, any position (the padded borders, and what the blocks leave).
  auto single = [&](int64_t ow) COIL_LAMBDA_INLINE {
    const int64_t iw0 = ow * s.stride_w - s.pad_w;
    const bool inside = iw0 >= 0 && iw0 + span < s.w;
    V acc = b;
    for (int64_t kh = 0; kh < kh_n; ++kh) {
      const float* r = rows[kh];
      if (r == nullptr) continue;
      for (int64_t kw = 0; kw < kw_n; ++kw) {
        const int64_t iw = iw0 + kw * s.dil_w;
        if (!inside && (iw < 0 || iw >= s.w)) continue;
        acc += Load<V>(r + iw * c) * weight(kh, kw);
      }
    }
    const int64_t idx = obase + ow * c;
    StoreV(j.out + idx, Steps(acc, j.steps, idx));
  };
  int64_t lo, hi;
  lo = j.interior_lo;
  hi = j.interior_hi;
  if (j.ow_blocks && hi - lo < kOwBlock) {
    // No whole interior block (a 7x7 activation, say): the row in edge blocks. (Where most
    // columns are interior, the few around them stay single: on one Zen 4 core, batch 4, a
    // 56-wide row's last 7 columns as an edge block made the call 15-25% slower.)
    const float* rows0[kMaxDepthwiseKernel];
    for (int64_t kh = 0; kh < kh_n; ++kh) rows0[kh] = rows[kh] == nullptr ? nullptr : rows[kh] - c0;
    const int64_t obase0 = obase - c0;
    for (int64_t ow0 = 0; ow0 < s.ow; ow0 += kOwBlock) {
      DepthwiseEdge<V, KH, KW>(j, rows0, obase0, c0, ow0, std::min(kOwBlock, s.ow - ow0));
    }
    return;
  }
  if (!j.ow_blocks) hi = lo;
  int64_t ow = 0;
  for (; ow < lo; ++ow) single(ow);
  const int64_t step = s.stride_w * c;  // between neighbouring outputs' inputs
  for (; ow + kOwBlock <= hi; ow += kOwBlock) {
    V acc[kOwBlock];
    for (int64_t i = 0; i < kOwBlock; ++i) acc[i] = b;
    const int64_t iw0 = ow * s.stride_w - s.pad_w;
    for (int64_t kh = 0; kh < kh_n; ++kh) {
      const float* r = rows[kh];
      if (r == nullptr) continue;
      for (int64_t kw = 0; kw < kw_n; ++kw) {
        const V wt = weight(kh, kw);
        const float* p = r + (iw0 + kw * s.dil_w) * c;
        for (int64_t i = 0; i < kOwBlock; ++i) acc[i] += Load<V>(p + i * step) * wt;
      }
    }
    for (int64_t i = 0; i < kOwBlock; ++i) {
      const int64_t idx = obase + (ow + i) * c;
      StoreV(j.out + idx, Steps(acc[i], j.steps, idx));
    }
  }
  for (; ow < s.ow; ++ow) single(ow);
}

// COIL_CONV_DIRECT_DW_TILES=0 (read once per process): depthwise rows through DepthwiseRow's
// blocks (one load per multiply-add) instead of conv_direct_dw_tile.h's tiles, as before
// helper-61 (for A/B measurements).
bool DwTilesOn() {
  static const bool on = [] {
    const char* v = std::getenv("COIL_CONV_DIRECT_DW_TILES");
    return v == nullptr || std::string(v) != "0";
  }();
  return on;
}

constexpr int kTileCols = 8;  // output columns per tile (8 accumulators)
static_assert(dw_tile::kMaxRows == kMaxDepthwiseKernel);

// One tile of NB output columns from ow0 (dw_tile::Tile), stored through the epilogue.
template <typename V, int KH, int KW, int SW, int NB, bool kEdge>
COIL_INLINE void DwTileStore(const Job& j, const float* const (&rows)[kMaxDepthwiseKernel],
                             const V* wv, const float* wp, int64_t ws, V b, int64_t obase,
                             int64_t ow0) {
  const DirectConvShape& s = *j.s;
  V acc[NB];
  dw_tile::Tile<V, KH, KW, SW, NB, kEdge, (KH * KW <= 9)>(rows, s.c, s.w, ow0 * SW - s.pad_w, wv,
                                                          wp, ws, b, acc);
#pragma GCC unroll 8
  for (int i = 0; i < NB; ++i) {
    const int64_t idx = obase + (ow0 + i) * s.c;
    StoreV(j.out + idx, Steps(acc[i], j.steps, idx));
  }
}

// Channels [c0, c0 + 16) of output row (n, oh) of a KH x KW kernel with stride SW and
// dilation 1 along the row, in tiles of kTileCols columns where they lie inside the row's
// interior, else (the padded borders, rows narrower than a tile, the last columns) in edge
// tiles of 8, 4, 2 and 1 columns with bounds tests. Few tile widths and one vector width keep
// the instantiations (each tile is straight code) down: V8 and single lanes take DepthwiseRow.
template <int KH, int KW, int SW>
COIL_INLINE void DepthwiseRowTiles(const Job& j, int64_t n, int64_t oh, int64_t c0) {
  using V = V16;
  const DirectConvShape& s = *j.s;
  const int64_t c = s.c;
  const float* rows[kMaxDepthwiseKernel] = {};
  const int64_t ih0 = oh * s.stride_h - s.pad_h;
  for (int64_t kh = 0; kh < KH; ++kh) {
    const int64_t ih = ih0 + kh * s.dil_h;
    rows[kh] = ih >= 0 && ih < s.h ? j.x + ((n * s.h + ih) * s.w) * c + c0 : nullptr;
  }
  const float* wp = j.w->taps() + c0;
  const int64_t ws = j.w->tap_stride();
  constexpr bool kInRegs = KH * KW <= 9;
  V wv[kInRegs ? KH * KW : 1];
  if (kInRegs) {
    for (int t = 0; t < KH * KW; ++t) wv[t] = Load<V>(wp + t * ws);
  }
  const V b = j.bias != nullptr ? Load<V>(j.bias + c0) : Splat<V>(0.0f);
  const int64_t obase = ((n * s.oh + oh) * s.ow) * c + c0;
  const int64_t lo = j.interior_lo, hi = j.interior_hi;
  for (int64_t ow0 = 0; ow0 < s.ow;) {
    const int64_t left = s.ow - ow0;
    if (left >= kTileCols && ow0 >= lo && ow0 + kTileCols <= hi) {
      DwTileStore<V, KH, KW, SW, kTileCols, false>(j, rows, wv, wp, ws, b, obase, ow0);
      ow0 += kTileCols;
    } else if (left >= 8) {
      DwTileStore<V, KH, KW, SW, 8, true>(j, rows, wv, wp, ws, b, obase, ow0);
      ow0 += 8;
    } else if (left >= 4) {
      DwTileStore<V, KH, KW, SW, 4, true>(j, rows, wv, wp, ws, b, obase, ow0);
      ow0 += 4;
    } else if (left >= 2) {
      DwTileStore<V, KH, KW, SW, 2, true>(j, rows, wv, wp, ws, b, obase, ow0);
      ow0 += 2;
    } else {
      DwTileStore<V, KH, KW, SW, 1, true>(j, rows, wv, wp, ws, b, obase, ow0);
      ow0 += 1;
    }
  }
}

// DepthwiseRowTiles per kernel, each compiled once per ISA (called per row and vector of
// channels from DepthwiseRows, in whichever of its loops; no vectors cross the call).
COIL_CONV_CLONES __attribute__((noinline)) void DwRowTiles3x3S1(const Job& j, int64_t n,
                                                                int64_t oh, int64_t c0) {
  DepthwiseRowTiles<3, 3, 1>(j, n, oh, c0);
}
COIL_CONV_CLONES __attribute__((noinline)) void DwRowTiles3x3S2(const Job& j, int64_t n,
                                                                int64_t oh, int64_t c0) {
  DepthwiseRowTiles<3, 3, 2>(j, n, oh, c0);
}
COIL_CONV_CLONES __attribute__((noinline)) void DwRowTiles5x5S1(const Job& j, int64_t n,
                                                                int64_t oh, int64_t c0) {
  DepthwiseRowTiles<5, 5, 1>(j, n, oh, c0);
}
COIL_CONV_CLONES __attribute__((noinline)) void DwRowTiles5x5S2(const Job& j, int64_t n,
                                                                int64_t oh, int64_t c0) {
  DepthwiseRowTiles<5, 5, 2>(j, n, oh, c0);
}

// One vector of channels of one output row: the tiles where SW > 0 and V is 16 lanes, else
// DepthwiseRow.
template <typename V, int KH, int KW, int SW>
COIL_INLINE void DepthwiseRowAny(const Job& j, int64_t n, int64_t oh, int64_t c0) {
  if constexpr (SW > 0 && std::is_same_v<V, V16>) {
    static_assert((KH == 3 || KH == 5) && KW == KH && (SW == 1 || SW == 2));
    if constexpr (KH == 3) {
      (SW == 1 ? DwRowTiles3x3S1 : DwRowTiles3x3S2)(j, n, oh, c0);
    } else {
      (SW == 1 ? DwRowTiles5x5S1 : DwRowTiles5x5S2)(j, n, oh, c0);
    }
  } else {
    DepthwiseRow<V, KH, KW>(j, n, oh, c0);
  }
}

// Tasks [begin, end): task t is a band of task_band output rows of one image, band t / groups
// (bands = n * ceil(oh / task_band)), and channels [task_channels * (t % groups),
// +task_channels), groups = ceil(c / task_channels). Each vector of channels runs down the
// band's rows before the next (rows_inner: bands of 2 rows or more), so that the kh input rows a
// row reads are in L1 from the rows before it; or each row runs across the channels (tasks of
// one row, as before helper-58).
template <int KH, int KW, int SW>
COIL_INLINE void DepthwiseRows(const Job& j, int64_t begin, int64_t end) {
  const int64_t c = j.s->c, groups = (c + j.task_channels - 1) / j.task_channels;
  const int64_t bands_per_image = (j.s->oh + j.task_band - 1) / j.task_band;
  for (int64_t t = begin; t < end; ++t) {
    const int64_t band = t / groups, n = band / bands_per_image;
    const int64_t oh0 = (band % bands_per_image) * j.task_band,
                  oh1 = std::min(j.s->oh, oh0 + j.task_band);
    const int64_t c1 = std::min(c, (t % groups + 1) * j.task_channels);
    const int64_t cb = (t % groups) * j.task_channels;
    if (!j.rows_inner) {
      for (int64_t oh = oh0; oh < oh1; ++oh) {
        int64_t c0 = cb;
        for (; c0 + 16 <= c1; c0 += 16) DepthwiseRowAny<V16, KH, KW, SW>(j, n, oh, c0);
        if (c0 + 8 <= c1) {
          DepthwiseRowAny<V8, KH, KW, SW>(j, n, oh, c0);
          c0 += 8;
        }
        for (; c0 < c1; ++c0) DepthwiseRowAny<float, KH, KW, SW>(j, n, oh, c0);
      }
      continue;
    }
    int64_t c0 = cb;
    for (; c0 + 16 <= c1; c0 += 16) {
      for (int64_t oh = oh0; oh < oh1; ++oh) DepthwiseRowAny<V16, KH, KW, SW>(j, n, oh, c0);
    }
    if (c0 + 8 <= c1) {
      for (int64_t oh = oh0; oh < oh1; ++oh) DepthwiseRowAny<V8, KH, KW, SW>(j, n, oh, c0);
      c0 += 8;
    }
    for (; c0 < c1; ++c0) {
      for (int64_t oh = oh0; oh < oh1; ++oh) DepthwiseRowAny<float, KH, KW, SW>(j, n, oh, c0);
    }
  }
}

// The tiles take 3x3 and 5x5 kernels of stride 1 or 2 and dilation 1 along the rows
// (mobilenets'); other shapes, and every shape with COIL_CONV_DIRECT_DW_TILES=0 or
// COIL_CONV_DIRECT_OW_BLOCKS=0, DepthwiseRow's blocks.
COIL_CONV_CLONES void DepthwiseTask(const Job& j, int64_t begin, int64_t end) {
  const DirectConvShape& s = *j.s;
  const int sw = j.dw_tiles && s.dil_w == 1 && (s.stride_w == 1 || s.stride_w == 2)
                     ? static_cast<int>(s.stride_w)
                     : 0;
  if (s.kh == 3 && s.kw == 3) {
    if (sw == 1) {
      DepthwiseRows<3, 3, 1>(j, begin, end);
    } else if (sw == 2) {
      DepthwiseRows<3, 3, 2>(j, begin, end);
    } else {
      DepthwiseRows<3, 3, 0>(j, begin, end);
    }
  } else if (s.kh == 5 && s.kw == 5) {
    if (sw == 1) {
      DepthwiseRows<5, 5, 1>(j, begin, end);
    } else if (sw == 2) {
      DepthwiseRows<5, 5, 2>(j, begin, end);
    } else {
      DepthwiseRows<5, 5, 0>(j, begin, end);
    }
  } else {
    DepthwiseRows<0, 0, 0>(j, begin, end);
  }
}

// ---- few input channels --------------------------------------------------------------------

// Output channels [o0, o0 + lanes of V) of output row (n, oh): every tap (c, kh, kw) is one
// input value times the tap's weight vector; interior columns in blocks of kOwBlock outputs.
template <typename V>
COIL_INLINE void FewChannelsRow(const Job& j, int64_t n, int64_t oh, int64_t o0) {
  const DirectConvShape& s = *j.s;
  const float* wp = j.w->taps() + o0;
  const int64_t ws = j.w->tap_stride();
  const V b = j.bias != nullptr ? Load<V>(j.bias + o0) : Splat<V>(0.0f);
  const int64_t ih0 = oh * s.stride_h - s.pad_h;
  // Element (c, ih, iw) of image n is at x[base + c * cs + ih * hs + iw * ws_x].
  const int64_t cs = s.input_nchw ? s.h * s.w : 1, hs = s.input_nchw ? s.w : s.w * s.c,
                xs = s.input_nchw ? 1 : s.c;
  const float* image = j.x + n * s.c * s.h * s.w;
  const int64_t obase = ((n * s.oh + oh) * s.ow) * s.oc + o0;
  auto single = [&](int64_t ow) COIL_LAMBDA_INLINE {
    const int64_t iw0 = ow * s.stride_w - s.pad_w;
    V acc = b;
    for (int64_t c = 0; c < s.c; ++c) {
      for (int64_t kh = 0; kh < s.kh; ++kh) {
        const int64_t ih = ih0 + kh * s.dil_h;
        if (ih < 0 || ih >= s.h) continue;
        const float* row = image + c * cs + ih * hs;
        const float* wrow = wp + ((c * s.kh + kh) * s.kw) * ws;
        for (int64_t kw = 0; kw < s.kw; ++kw) {
          const int64_t iw = iw0 + kw * s.dil_w;
          if (iw < 0 || iw >= s.w) continue;
          acc += row[iw * xs] * Load<V>(wrow + kw * ws);
        }
      }
    }
    const int64_t idx = obase + ow * s.oc;
    StoreV(j.out + idx, Steps(acc, j.steps, idx));
  };
  int64_t lo, hi;
  lo = j.interior_lo;
  hi = j.interior_hi;
  if (!j.ow_blocks) hi = lo;
  int64_t ow = 0;
  for (; ow < lo; ++ow) single(ow);
  const int64_t step = s.stride_w * xs;
  for (; ow + kOwBlock <= hi; ow += kOwBlock) {
    V acc[kOwBlock];
    for (int64_t i = 0; i < kOwBlock; ++i) acc[i] = b;
    const int64_t iw0 = ow * s.stride_w - s.pad_w;
    for (int64_t c = 0; c < s.c; ++c) {
      for (int64_t kh = 0; kh < s.kh; ++kh) {
        const int64_t ih = ih0 + kh * s.dil_h;
        if (ih < 0 || ih >= s.h) continue;
        const float* row = image + c * cs + ih * hs;
        const float* wrow = wp + ((c * s.kh + kh) * s.kw) * ws;
        for (int64_t kw = 0; kw < s.kw; ++kw) {
          const V wt = Load<V>(wrow + kw * ws);
          const float* p = row + (iw0 + kw * s.dil_w) * xs;
          for (int64_t i = 0; i < kOwBlock; ++i) acc[i] += p[i * step] * wt;
        }
      }
    }
    for (int64_t i = 0; i < kOwBlock; ++i) {
      const int64_t idx = obase + (ow + i) * s.oc;
      StoreV(j.out + idx, Steps(acc[i], j.steps, idx));
    }
  }
  for (; ow < s.ow; ++ow) single(ow);
}

// Tasks as DepthwiseRows', over output channels.
COIL_CONV_CLONES void FewChannelsTask(const Job& j, int64_t begin, int64_t end) {
  const int64_t oc = j.s->oc, groups = (oc + j.task_channels - 1) / j.task_channels;
  for (int64_t t = begin; t < end; ++t) {
    const int64_t row = t / groups, n = row / j.s->oh, oh = row % j.s->oh;
    const int64_t o1 = std::min(oc, (t % groups + 1) * j.task_channels);
    int64_t o0 = (t % groups) * j.task_channels;
    for (; o0 + 16 <= o1; o0 += 16) FewChannelsRow<V16>(j, n, oh, o0);
    if (o0 + 8 <= o1) {
      FewChannelsRow<V8>(j, n, oh, o0);
      o0 += 8;
    }
    for (; o0 < o1; ++o0) FewChannelsRow<float>(j, n, oh, o0);
  }
}

// ---- pointwise -------------------------------------------------------------------------------

constexpr int kBlockRows = 8;

// acc[r][q] = sum_c x[row r, c] * panel(q)[c]; rows past the last repeat it (not stored).
template <int P>
COIL_INLINE void PointwiseBlock(const Job& j, int64_t r0, const float* panel0,
                                V16 (&acc)[kBlockRows][P]) {
  const int64_t k = j.s->c, m = j.s->n * j.s->h * j.s->w;
  const float* xr[kBlockRows];
  for (int r = 0; r < kBlockRows; ++r) xr[r] = j.x + std::min(r0 + r, m - 1) * k;
  for (int r = 0; r < kBlockRows; ++r) {
    for (int q = 0; q < P; ++q) acc[r][q] = V16{};
  }
  const int64_t panel_stride = k * 16;
  for (int64_t c = 0; c < k; ++c) {
    V16 wv[P];
    for (int q = 0; q < P; ++q) wv[q] = Load<V16>(panel0 + q * panel_stride + c * 16);
    for (int r = 0; r < kBlockRows; ++r) {
      const float xv = xr[r][c];
      for (int q = 0; q < P; ++q) acc[r][q] += xv * wv[q];
    }
  }
}

// The epilogue steps on the first `lanes` (< 16) results at output index `idx`, the rest of
// the vector zero (a kAdd operand is read only up to `lanes`).
COIL_INLINE V16 StepsPartial(V16 v, absl::Span<const ExternEpilogueStep> steps, int64_t idx,
                             int64_t lanes) {
  for (const ExternEpilogueStep& step : steps) {
    if (step.kind == ExternEpilogueStep::kAdd) {
      alignas(64) float other[16] = {};
      std::memcpy(other, reinterpret_cast<const float*>(step.other->data) + idx,
                  lanes * sizeof(float));
      v += Load<V16>(other);
    } else {
      v = Steps(v, absl::MakeConstSpan(&step, 1), idx);
    }
  }
  return v;
}

template <int P>
COIL_INLINE void PointwiseStore(const Job& j, int64_t r0, int64_t col0,
                                V16 (&acc)[kBlockRows][P]) {
  const int64_t n = j.s->oc, m = j.s->n * j.s->h * j.s->w;
  const int rows = static_cast<int>(std::min<int64_t>(kBlockRows, m - r0));
  for (int q = 0; q < P; ++q) {
    const int64_t col = col0 + 16 * q;
    if (col + 16 <= n) {
      const V16 b = j.bias != nullptr ? Load<V16>(j.bias + col) : V16{};
      for (int r = 0; r < rows; ++r) {
        const int64_t idx = (r0 + r) * n + col;
        StoreV(j.out + idx, Steps(acc[r][q] + b, j.steps, idx));
      }
    } else {
      // A partial panel: whole vectors computed, the valid lanes copied out.
      const int64_t lanes = n - col;
      alignas(64) float bias[16] = {};
      if (j.bias != nullptr) std::memcpy(bias, j.bias + col, lanes * sizeof(float));
      const V16 b = Load<V16>(bias);
      for (int r = 0; r < rows; ++r) {
        const int64_t idx = (r0 + r) * n + col;
        const V16 v = StepsPartial(acc[r][q] + b, j.steps, idx, lanes);
        std::memcpy(j.out + idx, &v, lanes * sizeof(float));
      }
    }
  }
}

// How many panel groups of task_panels there are, a last group of one panel merged into the
// one before it (a block of one panel does a weight load per 8 multiply-adds; of three, 24).
int64_t PanelGroups(int64_t panels, int64_t task_panels) {
  const int64_t groups = (panels + task_panels - 1) / task_panels;
  return groups > 1 && panels % task_panels == 1 ? groups - 1 : groups;
}

// Tasks [begin, end): task t covers rows [task_rows * (t / groups), +task_rows) and panels
// [task_panels * g, +task_panels) for g = t % groups (PanelGroups: the last group to the end),
// in blocks of 2 panels, 3 where three are left.
COIL_CONV_CLONES void PointwiseTask(const Job& j, int64_t begin, int64_t end) {
  const GemvWeights& w = j.w->panels();
  const int64_t m = j.s->n * j.s->h * j.s->w, panels = w.panels();
  const int64_t groups = PanelGroups(panels, j.task_panels);
  for (int64_t t = begin; t < end; ++t) {
    const int64_t row0 = (t / groups) * j.task_rows, row1 = std::min(m, row0 + j.task_rows);
    const int64_t g = t % groups, p0 = g * j.task_panels,
                  p1 = g + 1 == groups ? panels : p0 + j.task_panels;
    for (int64_t p = p0; p < p1;) {
      const int64_t left = p1 - p;
      for (int64_t r0 = row0; r0 < row1; r0 += kBlockRows) {
        if (left == 3) {
          V16 acc[kBlockRows][3];
          PointwiseBlock<3>(j, r0, w.panel(p), acc);
          PointwiseStore<3>(j, r0, p * 16, acc);
        } else if (left >= 2) {
          V16 acc[kBlockRows][2];
          PointwiseBlock<2>(j, r0, w.panel(p), acc);
          PointwiseStore<2>(j, r0, p * 16, acc);
        } else {
          V16 acc[kBlockRows][1];
          PointwiseBlock<1>(j, r0, w.panel(p), acc);
          PointwiseStore<1>(j, r0, p * 16, acc);
        }
      }
      p += left == 3 ? 3 : std::min<int64_t>(left, 2);
    }
  }
}

// COIL_CONV_DIRECT_DW_BANDS=0 (read once per process): depthwise tasks of one output row each,
// every row across its channels, as before helper-58 (for A/B measurements).
bool DwBandsOn() {
  static const bool on = [] {
    const char* v = std::getenv("COIL_CONV_DIRECT_DW_BANDS");
    return v == nullptr || std::string(v) != "0";
  }();
  return on;
}

std::atomic<int64_t> direct_calls{0};

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Cuts the work into tasks. Depthwise: bands of 2+ rows of one image with all channels where
// every thread gets four (batch 16 on 16 threads); else, as for few channels, the largest
// tasks (a whole row of channels) that still give each thread two, halving the channels (down
// to 16). Pointwise: 64 rows x 4 panels (which keeps a task's panels in L2 across its rows),
// halving the rows (down to 8) and then the panels (down to 2) until each thread has two.
// Returns the number of tasks.
int64_t Partition(Job& j, int64_t threads) {
  const DirectConvShape& s = *j.s;
  if (j.w->kind() == DirectConvKind::kDepthwise && DwBandsOn()) {
    // Bands of rows with all channels, halved from whole images until every thread has four
    // tasks; where that needs bands of one row (batch 1, mostly), one-row tasks with channels
    // split as below.
    j.task_channels = CeilDiv(s.c, 16) * 16;
    j.task_band = s.oh;
    while (s.n * CeilDiv(s.oh, j.task_band) < 4 * threads && j.task_band > 1) {
      j.task_band = CeilDiv(j.task_band, 2);
    }
    if (j.task_band >= 2) {
      j.rows_inner = true;
      return s.n * CeilDiv(s.oh, j.task_band);
    }
  }
  if (j.w->kind() != DirectConvKind::kPointwise) {
    // Rows of output channels (the input's too for depthwise).
    const int64_t rows = s.n * s.oh, ch = s.oc;
    j.task_band = 1;
    j.task_channels = CeilDiv(ch, 16) * 16;
    while (rows * CeilDiv(ch, j.task_channels) < 2 * threads && j.task_channels > 16) {
      j.task_channels = CeilDiv(j.task_channels / 2, 16) * 16;
    }
    return rows * CeilDiv(ch, j.task_channels);
  }
  const int64_t m = s.n * s.h * s.w, panels = j.w->panels().panels();
  j.task_rows = 64;
  j.task_panels = 4;
  auto tasks = [&] { return CeilDiv(m, j.task_rows) * PanelGroups(panels, j.task_panels); };
  while (tasks() < 2 * threads && j.task_rows > kBlockRows) j.task_rows /= 2;
  if (tasks() < 2 * threads) j.task_panels = 2;
  return tasks();
}

double Flops(const DirectConvShape& s) {
  return 2.0 * s.n * s.oh * s.ow * s.oc * (s.c / s.groups) * s.kh * s.kw;
}

}  // namespace

DirectConvKind ClassifyDirectConv(const DirectConvShape& s) {
  if (s.n < 1 || s.c < 1 || s.h < 1 || s.w < 1 || s.oc < 1 || s.oh < 1 || s.ow < 1 ||
      s.kh < 1 || s.kw < 1 || s.stride_h < 1 || s.stride_w < 1 || s.dil_h < 1 || s.dil_w < 1 ||
      s.pad_h < 0 || s.pad_w < 0) {
    return DirectConvKind::kNone;
  }
  const bool few = s.groups == 1 && s.c <= kDirectFewChannels &&
                   s.kh <= kMaxDepthwiseKernel && s.kw <= kMaxDepthwiseKernel;
  if (s.input_nchw) return few ? DirectConvKind::kFewChannels : DirectConvKind::kNone;
  if (s.groups == s.c && s.oc == s.c && s.c > 1 && s.kh <= kMaxDepthwiseKernel &&
      s.kw <= kMaxDepthwiseKernel) {
    return DirectConvKind::kDepthwise;
  }
  if (s.groups == 1 && s.kh == 1 && s.kw == 1 && s.stride_h == 1 && s.stride_w == 1 &&
      s.pad_h == 0 && s.pad_w == 0 && s.oh == s.h && s.ow == s.w) {
    return DirectConvKind::kPointwise;
  }
  return few ? DirectConvKind::kFewChannels : DirectConvKind::kNone;
}

DirectConvMode GetDirectConvMode() {
  static const DirectConvMode mode = [] {
    const char* v = std::getenv("COIL_CONV_DIRECT");
    if (v != nullptr && std::string(v) == "0") return DirectConvMode::kOff;
    if (v != nullptr && std::string(v) == "1") return DirectConvMode::kAlways;
    if (v != nullptr && std::string(v) == "measure") return DirectConvMode::kMeasure;
    return DirectConvMode::kRule;
  }();
  return mode;
}

bool UseDirectConv(const DirectConvShape& s, int threads) {
  if (threads < kDirectMinThreads) return false;
  switch (ClassifyDirectConv(s)) {
    case DirectConvKind::kDepthwise:
      return true;
    case DirectConvKind::kPointwise:
      return Flops(s) <= kDirectPointwiseMaxFlops;
    case DirectConvKind::kFewChannels:
      return Flops(s) <= kDirectFewChannelsMaxFlops;
    case DirectConvKind::kNone:
      return false;
  }
  return false;
}

bool DirectConvWeights::Holds(const void* src, const DirectConvShape& s) const {
  return kind_ != DirectConvKind::kNone && src_ == src && kind_ == ClassifyDirectConv(s) &&
         c_ == s.c && oc_ == s.oc && kh_ == s.kh && kw_ == s.kw;
}

bool DirectConvWeights::Pack(const void* src, const DirectConvShape& s) {
  const DirectConvKind kind = ClassifyDirectConv(s);
  if (kind == DirectConvKind::kNone) return false;
  if (kind == DirectConvKind::kPointwise) {
    if (!panels_.Pack(src, s.c, s.oc, GemvWeights::kNK)) return false;
    dw_.reset();
  } else {
    // W is [oc, taps] (depthwise [c, 1, kh, kw], few channels [oc, c, kh, kw]); the copy is
    // [taps][oc rounded up to 16].
    const int64_t stride = (s.oc + 15) / 16 * 16,
                  taps = (kind == DirectConvKind::kFewChannels ? s.c : 1) * s.kh * s.kw;
    float* dst = static_cast<float*>(
        std::aligned_alloc(64, static_cast<size_t>(taps * stride) * sizeof(float)));
    if (dst == nullptr) return false;
    const float* w = static_cast<const float*>(src);
    for (int64_t t = 0; t < taps; ++t) {
      for (int64_t o = 0; o < stride; ++o) dst[t * stride + o] = o < s.oc ? w[o * taps + t] : 0;
    }
    dw_.reset(dst);
    dw_stride_ = stride;
  }
  kind_ = kind;
  src_ = src;
  c_ = s.c;
  oc_ = s.oc;
  kh_ = s.kh;
  kw_ = s.kw;
  return true;
}

int DirectConvThreads(const DirectConvShape& s, int threads) {
  const double by_flops = Flops(s) / kFlopsPerThread;
  return static_cast<int>(std::max(1.0, std::min<double>(by_flops, threads)));
}

void RunDirectConv(const DirectConvShape& s, const float* x, const DirectConvWeights& w,
                   const float* bias, absl::Span<const ExternEpilogueStep> steps, float* out,
                   cpu::ThreadPool* pool) {
  direct_calls.fetch_add(1, std::memory_order_relaxed);
  Job j{&s, x, &w, bias, steps, out};
  j.ow_blocks = OwBlocksOn();
  j.dw_tiles = j.ow_blocks && DwTilesOn();
  if (w.kind() != DirectConvKind::kPointwise) {
    InteriorColumns(s, (s.kw - 1) * s.dil_w, j.interior_lo, j.interior_hi);
  }
  const int64_t wanted = pool == nullptr ? 1 : DirectConvThreads(s, pool->num_threads());
  const int64_t tasks = Partition(j, wanted);
  const int64_t threads = std::min(tasks, wanted);
  auto run = [&](int64_t begin, int64_t end) {
    if (w.kind() == DirectConvKind::kDepthwise) {
      DepthwiseTask(j, begin, end);
    } else if (w.kind() == DirectConvKind::kFewChannels) {
      FewChannelsTask(j, begin, end);
    } else {
      PointwiseTask(j, begin, end);
    }
  };
  if (threads <= 1) {
    run(0, tasks);
    return;
  }
  // Chunks of a few tasks each, so that threads finishing early take more; with fewer threads
  // than the pool's, one chunk per thread (the others find none).
  const int64_t grain = threads < pool->num_threads()
                            ? (tasks + threads - 1) / threads
                            : std::max<int64_t>(1, tasks / (4 * threads));
  pool->ParallelFor(tasks, grain, run);
}

int64_t DirectConvCallCount() { return direct_calls.load(std::memory_order_relaxed); }

}  // namespace coil::cpu::internal
