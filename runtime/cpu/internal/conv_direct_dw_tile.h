// The depthwise convolution's register tile (conv_direct_depthwise.cc): NB neighbouring output
// columns of one output row x one vector of channels, each input column of a kernel row loaded
// once and multiplied into every output column of the tile whose taps reach it (a 3x3 stride-1
// tile of 8 columns: 10 loads for 24 multiply-adds per kernel row, where one load per
// multiply-add was the direct kernel's bound before; helper-61). Kernel sizes, stride and tile
// width are template parameters so that the loops unroll into straight code with every
// accumulator in a register; dilation 1 along the row only (conv_direct_depthwise.cc takes
// other shapes the old way).
//
// Numerics: each output's taps are added in (kh, kw) order, as the row kernels before did;
// taps outside the input row (the tile at a padded border, kEdge) are skipped, not multiplied
// by zero.
//
// Header-only, always inlined: instantiated inside conv_direct_depthwise.cc's per-ISA clones so
// that the vectors are that clone's registers. Not an API.
#ifndef COIL_RUNTIME_CPU_INTERNAL_CONV_DIRECT_DW_TILE_H_
#define COIL_RUNTIME_CPU_INTERNAL_CONV_DIRECT_DW_TILE_H_

#include <cstdint>

namespace coil::cpu::internal::dw_tile {

#define COIL_DW_TILE_INLINE inline __attribute__((always_inline))

template <typename V>
COIL_DW_TILE_INLINE V LoadV(const float* p) {
  V v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}

// The most rows a kernel may have (conv_direct_task.h's kMaxDepthwiseKernel).
constexpr int kMaxRows = 7;

// acc[i] (i < NB) = bias + the taps of output column ow0 + i, ow0's first tap at input column
// iw0 (= ow0 * SW - pad, may be negative). rows[kh]: kernel row kh's input row at column 0 and
// the vector's first channel (null: a padding row); `c` floats between input columns; `w`
// input columns. wv: the KH * KW weight vectors where KInRegs (kept in registers across the
// row's tiles by the caller), else read from wp + tap * ws. kEdge: some of the tile's input
// columns may lie outside [0, w); without it all must lie inside.
template <typename V, int KH, int KW, int SW, int NB, bool kEdge, bool kInRegs>
COIL_DW_TILE_INLINE void Tile(const float* const (&rows)[kMaxRows], int64_t c, int64_t w,
                              int64_t iw0, const V* wv, const float* wp, int64_t ws, V bias,
                              V (&acc)[NB]) {
  constexpr int kCols = (NB - 1) * SW + KW;  // input columns the tile reads per kernel row
#pragma GCC unroll 8
  for (int i = 0; i < NB; ++i) acc[i] = bias;
#pragma GCC unroll 8
  for (int kh = 0; kh < KH; ++kh) {
    const float* r = rows[kh];
    if (r == nullptr) continue;
    V wk[KW];
#pragma GCC unroll 8
    for (int kw = 0; kw < KW; ++kw) {
      wk[kw] = kInRegs ? wv[kh * KW + kw] : LoadV<V>(wp + (kh * KW + kw) * ws);
    }
#pragma GCC unroll 32
    for (int jj = 0; jj < kCols; ++jj) {
      if (kEdge && (iw0 + jj < 0 || iw0 + jj >= w)) continue;
      const V in = LoadV<V>(r + (iw0 + jj) * c);
#pragma GCC unroll 8
      for (int kw = 0; kw < KW; ++kw) {
        const int d = jj - kw;  // = i * SW for the output i that tap kw of this column feeds
        if (d >= 0 && d % SW == 0 && d / SW < NB) acc[d / SW] += in * wk[kw];
      }
    }
  }
}

#undef COIL_DW_TILE_INLINE

}  // namespace coil::cpu::internal::dw_tile

#endif  // COIL_RUNTIME_CPU_INTERNAL_CONV_DIRECT_DW_TILE_H_
