// The depthwise kernel of the direct convolutions (conv_direct.h): groups == channels, kernels
// up to 7x7. Tasks of bands of output rows (DepthwiseTask), each output row a vector of
// channels at a time, in one of two row kernels:
//   - DepthwiseRowTiles: 3x3 and 5x5 kernels of stride 1 or 2 (mobilenets'), 16 channels, in
//     conv_direct_dw_tile.h's register tiles of 8 output columns, each compiled once per ISA;
//   - DepthwiseRow: every other shape and vector width (8 lanes, one lane), interior output
//     columns in blocks of kOwBlock accumulators, the padded borders one column at a time or
//     (rows with no whole interior block) in edge blocks (DepthwiseEdge).
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "runtime/cpu/internal/conv_direct.h"
#include "runtime/cpu/internal/conv_direct_dw_tile.h"
#include "runtime/cpu/internal/conv_direct_task.h"
#include "runtime/cpu/internal/conv_direct_vectors.h"

namespace coil::cpu::internal::conv_direct {
namespace {

// rows[kh] for kh < kh_n: the input row that kernel row kh of output row (n, oh) reads, at
// column 0 and channel c0; null where it lies in the padding.
COIL_CONV_INLINE void InputRows(const Job& j, int64_t n, int64_t oh, int64_t c0, int64_t kh_n,
                                const float* (&rows)[kMaxDepthwiseKernel]) {
  const DirectConvShape& s = *j.s;
  const int64_t ih0 = oh * s.stride_h - s.pad_h;
  for (int64_t kh = 0; kh < kh_n; ++kh) {
    const int64_t ih = ih0 + kh * s.dil_h;
    rows[kh] = ih >= 0 && ih < s.h ? j.x + ((n * s.h + ih) * s.w) * s.c + c0 : nullptr;
  }
}

// Channels [c0, c0 + lanes of V) of `count` (<= kOwBlock) output columns from ow0 of one output
// row, each column its own accumulator, where taps may fall outside the input row: such taps
// are skipped column by column. `rows` are the input rows at column 0, channel 0 (null:
// padding), `obase` the output row's offset.
template <typename V, int KH, int KW>
COIL_CONV_INLINE void DepthwiseEdge(const Job& j,
                                    const float* const (&rows)[kMaxDepthwiseKernel],
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
COIL_CONV_INLINE void DepthwiseRow(const Job& j, int64_t n, int64_t oh, int64_t c0) {
  const DirectConvShape& s = *j.s;
  const int64_t kh_n = KH > 0 ? KH : s.kh, kw_n = KW > 0 ? KW : s.kw, c = s.c;
  const float* rows[kMaxDepthwiseKernel];
  InputRows(j, n, oh, c0, kh_n, rows);
  const float* wp = j.w->taps() + c0;
  const int64_t ws = j.w->tap_stride();
  constexpr bool kInRegisters = KH == 3 && KW == 3;
  constexpr int kFixed = kInRegisters ? KH * KW : 1;
  V wv[kFixed];
  if (kInRegisters) {
    for (int t = 0; t < kFixed; ++t) wv[t] = Load<V>(wp + t * ws);
  }
  auto weight = [&](int64_t kh, int64_t kw) COIL_CONV_LAMBDA_INLINE {
    return kInRegisters ? wv[kInRegisters ? kh * kw_n + kw : 0]
                        : Load<V>(wp + (kh * kw_n + kw) * ws);
  };
  const V b = j.bias != nullptr ? Load<V>(j.bias + c0) : Splat<V>(0.0f);
  const int64_t obase = ((n * s.oh + oh) * s.ow) * c + c0;
  const int64_t span = (kw_n - 1) * s.dil_w;
  // One output column, any position (the padded borders, and what the blocks leave).
  auto single = [&](int64_t ow) COIL_CONV_LAMBDA_INLINE {
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

constexpr int kTileCols = 8;  // output columns per tile (8 accumulators)
static_assert(dw_tile::kMaxRows == kMaxDepthwiseKernel);

// One tile of NB output columns from ow0 (dw_tile::Tile), stored through the epilogue.
template <typename V, int KH, int KW, int SW, int NB, bool kEdge>
COIL_CONV_INLINE void DwTileStore(const Job& j,
                                  const float* const (&rows)[kMaxDepthwiseKernel], const V* wv,
                                  const float* wp, int64_t ws, V b, int64_t obase, int64_t ow0) {
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
COIL_CONV_INLINE void DepthwiseRowTiles(const Job& j, int64_t n, int64_t oh, int64_t c0) {
  using V = V16;
  const DirectConvShape& s = *j.s;
  const int64_t c = s.c;
  const float* rows[kMaxDepthwiseKernel] = {};
  InputRows(j, n, oh, c0, KH, rows);
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
COIL_CONV_CLONES COIL_CONV_NOINLINE void DwRowTiles3x3S1(const Job& j, int64_t n, int64_t oh,
                                                        int64_t c0) {
  DepthwiseRowTiles<3, 3, 1>(j, n, oh, c0);
}
COIL_CONV_CLONES COIL_CONV_NOINLINE void DwRowTiles3x3S2(const Job& j, int64_t n, int64_t oh,
                                                        int64_t c0) {
  DepthwiseRowTiles<3, 3, 2>(j, n, oh, c0);
}
COIL_CONV_CLONES COIL_CONV_NOINLINE void DwRowTiles5x5S1(const Job& j, int64_t n, int64_t oh,
                                                        int64_t c0) {
  DepthwiseRowTiles<5, 5, 1>(j, n, oh, c0);
}
COIL_CONV_CLONES COIL_CONV_NOINLINE void DwRowTiles5x5S2(const Job& j, int64_t n, int64_t oh,
                                                        int64_t c0) {
  DepthwiseRowTiles<5, 5, 2>(j, n, oh, c0);
}

// One vector of channels of one output row: the tiles where SW > 0 and V is 16 lanes, else
// DepthwiseRow.
template <typename V, int KH, int KW, int SW>
COIL_CONV_INLINE void DepthwiseRowAny(const Job& j, int64_t n, int64_t oh, int64_t c0) {
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
COIL_CONV_INLINE void DepthwiseRows(const Job& j, int64_t begin, int64_t end) {
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

}  // namespace

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

}  // namespace coil::cpu::internal::conv_direct
