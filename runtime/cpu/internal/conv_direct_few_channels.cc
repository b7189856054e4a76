// The few-channel kernel of the direct convolutions (conv_direct.h): groups 1, at most
// kDirectFewChannels input channels (a network's first convolution, reading the model's NCHW
// image or an NHWC one), kernels up to 7x7. Each task is one output row and a run of output
// channels, 16 (then 8, then 1) at a time; every tap (c, kh, kw) is one input value times the
// tap's weight vector; interior output columns in blocks of kOwBlock accumulators, as for
// depthwise, the interior's last columns in blocks of 4, 2 and 1, the padded edges one at a
// time.
#include <algorithm>
#include <cstdint>

#include "runtime/cpu/internal/conv_direct.h"
#include "runtime/cpu/internal/conv_direct_task.h"
#include "runtime/cpu/internal/conv_direct_vectors.h"

namespace coil::cpu::internal::conv_direct {
namespace {

// Output columns [ow, ow + W) of output row (n, oh), channels [o0, o0 + lanes of V): W
// accumulators, every tap's weight vector loaded once for the W of them. Interior columns
// (conv_direct.cc's InteriorColumns) need no column tests; kEdge (one column in the padded
// borders) skips the taps that fall outside the row.
template <typename V, int W, bool kEdge = false>
COIL_CONV_INLINE void FewChannelsBlock(const Job& j, int64_t n, int64_t oh, int64_t o0,
                                       int64_t ow, V b) {
  static_assert(!kEdge || W == 1, "edge columns go one at a time");
  const DirectConvShape& s = *j.s;
  const float* wp = j.w->taps() + o0;
  const int64_t ws = j.w->tap_stride();
  const int64_t ih0 = oh * s.stride_h - s.pad_h;
  const int64_t cs = s.input_nchw ? s.h * s.w : 1, hs = s.input_nchw ? s.w : s.w * s.c,
                xs = s.input_nchw ? 1 : s.c;
  const float* image = j.x + n * s.c * s.h * s.w;
  const int64_t step = s.stride_w * xs;
  V acc[W];
  for (int i = 0; i < W; ++i) acc[i] = b;
  const int64_t iw0 = ow * s.stride_w - s.pad_w;
  for (int64_t c = 0; c < s.c; ++c) {
    for (int64_t kh = 0; kh < s.kh; ++kh) {
      const int64_t ih = ih0 + kh * s.dil_h;
      if (ih < 0 || ih >= s.h) continue;
      const float* row = image + c * cs + ih * hs;
      const float* wrow = wp + ((c * s.kh + kh) * s.kw) * ws;
      for (int64_t kw = 0; kw < s.kw; ++kw) {
        const int64_t iw = iw0 + kw * s.dil_w;
        if (kEdge && (iw < 0 || iw >= s.w)) continue;
        const V wt = Load<V>(wrow + kw * ws);
        const float* p = row + iw * xs;
        for (int i = 0; i < W; ++i) acc[i] += p[i * step] * wt;
      }
    }
  }
  const int64_t obase = ((n * s.oh + oh) * s.ow) * s.oc + o0;
  for (int i = 0; i < W; ++i) {
    const int64_t idx = obase + (ow + i) * s.oc;
    StoreV(j.out + idx, Steps(acc[i], j.steps, idx));
  }
}

// Output channels [o0, o0 + lanes of V) of output row (n, oh): every tap (c, kh, kw) is one
// input value times the tap's weight vector; interior columns in blocks (FewChannelsBlock).
template <typename V>
COIL_CONV_INLINE void FewChannelsRow(const Job& j, int64_t n, int64_t oh, int64_t o0) {
  const DirectConvShape& s = *j.s;
  const V b = j.bias != nullptr ? Load<V>(j.bias + o0) : Splat<V>(0.0f);
  auto single = [&](int64_t ow) COIL_CONV_LAMBDA_INLINE {
    FewChannelsBlock<V, 1, true>(j, n, oh, o0, ow, b);
  };
  int64_t lo = j.interior_lo, hi = j.interior_hi;
  if (!j.ow_blocks) hi = lo;
  int64_t ow = 0;
  for (; ow < lo; ++ow) single(ow);
  // Interior columns in blocks of kOwBlock, then (FewEdgeBlocksOn) the rest of the interior in
  // blocks of 4, 2 and 1 whose taps need no column tests (a row of 111 interior columns, as
  // mobilenet's first convolution has, left 7 single columns: 7 chains of 27 dependent
  // multiply-adds against 13 blocks of 8 independent ones).
  for (; ow + kOwBlock <= hi; ow += kOwBlock) FewChannelsBlock<V, kOwBlock>(j, n, oh, o0, ow, b);
  if (j.few_edge_blocks) {
    if (ow + 4 <= hi) {
      FewChannelsBlock<V, 4>(j, n, oh, o0, ow, b);
      ow += 4;
    }
    if (ow + 2 <= hi) {
      FewChannelsBlock<V, 2>(j, n, oh, o0, ow, b);
      ow += 2;
    }
    if (ow < hi) {
      FewChannelsBlock<V, 1>(j, n, oh, o0, ow, b);
      ++ow;
    }
  }
  for (; ow < s.ow; ++ow) single(ow);
}

}  // namespace

// Tasks [begin, end): task t is output row t / groups of the n * oh rows and output channels
// [task_channels * (t % groups), +task_channels), groups = ceil(oc / task_channels).
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

}  // namespace coil::cpu::internal::conv_direct
