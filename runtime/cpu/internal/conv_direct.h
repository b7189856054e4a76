// Direct f32 convolution kernels on the executable's thread pool, for the channels-last
// activations of a CNN at small batch, where oneDNN's per-call cost (waking its passive OpenMP
// team, or running a small call on one thread) exceeds the arithmetic:
//   - depthwise: groups == input channels == output channels, kernels up to 7x7, any stride,
//     padding and dilation: tasks of bands of output rows with all channels, each vector of
//     channels down the band (its input rows in L1 across them), where the threads get four
//     each, else of one output row each (batch 1, mostly); 16 channels per vector
//     (then 8, then one at a time); 3x3 and 5x5 kernels of stride 1 or 2 (16 lanes) in
//     register tiles of 8 output columns that load each input column once per kernel row
//     (conv_direct_dw_tile.h; COIL_CONV_DIRECT_DW_TILES=0 off), other shapes' interior output
//     columns in blocks of 8 accumulators (one load per multiply-add), rows with no whole
//     interior block in edge blocks;
//   - pointwise: a 1x1 kernel, stride 1, no padding, groups 1: a product of the [N*H*W, C]
//     activation with the [C, OC] weight packed into 16-column panels (gemv.h's packing),
//     register blocks of 8 rows x 32 columns (x 48 where three panels are left), tasks of 64
//     rows x 64 columns;
//   - few channels: groups 1, at most kDirectFewChannels input channels (a network's first
//     convolution, whose input is the model's NCHW image), kernels up to 7x7: each output row
//     is a task, 16 output channels per vector, every tap an input value times a weight vector,
//     interior output columns in blocks of 8 as for depthwise, the interior's last ones in
//     blocks of 4, 2, 1 (COIL_CONV_DIRECT_FEW_EDGE=0: one at a time, as before).
// They need an NHWC output (ir/channels_last.h), an NHWC input (NCHW too for few channels) and
// constant weights (packed once per call site); the bias and an ExternEpilogueStep chain are
// applied to the accumulators before the store. dnnl_conv.cc runs them by a fixed rule (UseDirectConv), not by its per-site timing
// trials: on the 16-core Xeon, a network whose sites each took the faster of oneDNN and these in
// three trials ran slower than either alone (docs/benchmarks.md, "Direct depthwise and pointwise
// convolutions").
//
// Numerics: f32 products summed in f32 (fused multiply-adds where the CPU has them), taps in
// (kh, kw) order, input channels in order: a library kernel's rounding, not the interpreter's.
// Not an API: used by dnnl_conv.cc and conv_direct_test.cc.
#ifndef COIL_RUNTIME_CPU_INTERNAL_CONV_DIRECT_H_
#define COIL_RUNTIME_CPU_INTERNAL_CONV_DIRECT_H_

#include <cstdint>
#include <cstdlib>
#include <memory>

#include "absl/types/span.h"
#include "runtime/cpu/externs.h"
#include "runtime/cpu/internal/gemv.h"

namespace coil::cpu::internal {

// A 2-D convolution's sizes; activations are stored [n, h, w, c] / [n, oh, ow, oc].
struct DirectConvShape {
  int64_t n = 0, c = 0, h = 0, w = 0;
  int64_t oc = 0, oh = 0, ow = 0;
  int64_t kh = 0, kw = 0;
  int64_t stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0, dil_h = 1, dil_w = 1;
  int64_t groups = 1;
  bool input_nchw = false;  // the input is stored [n, c, h, w] (only kFewChannels takes it)
};

enum class DirectConvKind { kNone, kDepthwise, kPointwise, kFewChannels };

// The most input channels of a kFewChannels convolution.
constexpr int64_t kDirectFewChannels = 4;

// Which kernel covers `s` (kNone: neither). The caller checks NHWC, f32 and the output shape.
DirectConvKind ClassifyDirectConv(const DirectConvShape& s);

// COIL_CONV_DIRECT (read once per process): 0 never, 1 always where a kernel applies, "measure"
// as one more candidate of the call site's timing trials (dnnl_conv.cc), anything else (the
// default) by UseDirectConv.
enum class DirectConvMode { kOff, kAlways, kMeasure, kRule };
DirectConvMode GetDirectConvMode();

// Pointwise convolutions above this many flops stay with oneDNN by default on a pool of
// kDirectBoundsThreads threads or more: the kernel has no cache blocking over the reduction,
// and larger ones (resnet50's 1x1s at batch 16, 1.6 GFLOP and more) were not measured against
// oneDNN's. mobilenet_v3_large's at batch 16 (up to 472 MFLOP) were, per convolution on the
// 16-core Xeon: 0.36-0.48 ms against oneDNN's 0.49-0.76 (docs/benchmarks.md, helper-55).
constexpr double kDirectPointwiseMaxFlops = 512e6;
// Depthwise convolutions above this many flops stay with oneDNN on pools of fewer than
// kDirectBoundsThreads threads (scaled as below); with kDirectBoundsThreads or more threads
// every depthwise convolution takes the kernel.
constexpr double kDirectDepthwiseMaxFlops = 160e6;
// Few-channel convolutions above this many flops stay with oneDNN by default (the kernel does
// one multiply-add per weight vector load; mobilenet's 173 MFLOP first convolution at batch 16
// took 0.70 ms against oneDNN's 1.20 on the 16-core Xeon; resnet50's 7x7 one, 236 MFLOP at
// batch 1, not measured against oneDNN).
constexpr double kDirectFewChannelsMaxFlops = 192e6;

// The fewest pool threads for which the default rule takes the kernels: on the 2-core Zen 4
// machine at 2 threads, where oneDNN's calls have no team to wake, they were slower than
// oneDNN's (opt build, `coil bench cpu` mobilenet_v2 224 batch 8: 96.5 ms against 57-61 ms;
// batch 1 about even).
constexpr int kDirectMinThreads = 4;

// The pool size the pointwise and depthwise bounds above were measured at (the 16-core Xeon).
// On a smaller pool they scale with (threads / kDirectBoundsThreads)^2: what the kernels save
// is oneDNN's fixed cost per call (waking its OpenMP team, which grows with the team), what
// they lose is per-thread speed on long calls, which weighs more as each thread gets more of
// the call. At 4 threads on the Xeon (docs/benchmarks.md, helper-67) oneDNN was faster for
// resnet50's batch-1 1x1s of 51-206 MFLOP (0.27-0.57 ms against the kernel's 0.31-0.63) and
// for most of mobilenet_v3_large's batch-16 depthwise (e.g. 960 channels 5x5 at 7x7, 38
// MFLOP: 0.23-0.27 ms against 0.41-0.49) and large-image pointwise ones, while the kernel kept
// its lead on calls of a few MFLOP (resnet50's 26 MFLOP 1x1: 0.11 against 0.17 ms).
// COIL_CONV_DIRECT_SCALED=0 (read once per process) keeps the 16-thread bounds at every size.
constexpr int kDirectBoundsThreads = 16;

// The default rule for a shape that classifies, on a pool of `threads`: at least
// kDirectMinThreads, and then depthwise convolutions up to kDirectDepthwiseMaxFlops (all of
// them from kDirectBoundsThreads threads on), pointwise ones up to kDirectPointwiseMaxFlops,
// both scaled as above below kDirectBoundsThreads threads, few-channel ones up to
// kDirectFewChannelsMaxFlops.
bool UseDirectConv(const DirectConvShape& s, int threads);

// A call site's constant weights in the kernel's layout: depthwise [kh * kw][c rounded up to
// 16] (channels innermost), few channels [c * kh * kw][oc rounded up to 16], pointwise
// gemv.h's 16-column panels of W[oc, c].
class DirectConvWeights {
 public:
  // Whether the packed copy is of these weights for this shape's kernel.
  bool Holds(const void* src, const DirectConvShape& s) const;
  // Packs `src` ([oc, c / groups, kh, kw] f32); false when memory runs out. `s` must classify.
  bool Pack(const void* src, const DirectConvShape& s);

  DirectConvKind kind() const { return kind_; }
  // Depthwise and few channels: a row of weights per tap.
  const float* taps() const { return dw_.get(); }
  int64_t tap_stride() const { return dw_stride_; }  // floats per tap
  const GemvWeights& panels() const { return panels_; }

 private:
  DirectConvKind kind_ = DirectConvKind::kNone;
  const void* src_ = nullptr;
  int64_t c_ = 0, oc_ = 0, kh_ = 0, kw_ = 0;
  std::unique_ptr<float, decltype(&std::free)> dw_{nullptr, &std::free};
  int64_t dw_stride_ = 0;
  GemvWeights panels_;
};

// out = steps(conv(x, w) + bias) for the shape `w` was packed for (its kind); `bias` may be
// null; a kAdd step reads its `other` at the output's index. Split over `pool` (null: the
// calling thread) on DirectConvThreads threads. `scaled` (pointwise only): x is not read; the
// kernel computes its rows from the scaled input (externs.h, ExternScaledInput) instead.
void RunDirectConv(const DirectConvShape& s, const float* x, const DirectConvWeights& w,
                   const float* bias, absl::Span<const ExternEpilogueStep> steps, float* out,
                   cpu::ThreadPool* pool, const ExternScaledInput* scaled = nullptr);

// The threads a call gets on a pool of `threads`: about one per 256K flops, at most `threads`.
int DirectConvThreads(const DirectConvShape& s, int threads);

// How many RunDirectConv calls this process made (for tests: which path a call took).
int64_t DirectConvCallCount();

}  // namespace coil::cpu::internal

#endif  // COIL_RUNTIME_CPU_INTERNAL_CONV_DIRECT_H_
