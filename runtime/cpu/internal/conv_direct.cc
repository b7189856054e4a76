// Direct convolutions over NHWC activations (conv_direct.h): which kernel takes a shape and
// the default rule, the weights packed per call site, and a call cut into tasks on the pool.
// The kernels' task functions are in conv_direct_depthwise.cc, conv_direct_few_channels.cc
// and conv_direct_pointwise.cc (conv_direct_task.h).
#include "runtime/cpu/internal/conv_direct.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <memory>
#include <string>

#include "ir/check.h"
#include "runtime/cpu/internal/conv_direct_task.h"
#include "runtime/cpu/thread_pool.h"

namespace coil::cpu::internal {
namespace {

using conv_direct::Job;
using conv_direct::kBlockRows;
using conv_direct::kMaxDepthwiseKernel;
using conv_direct::PanelGroups;

// Flops per thread a call should have (a few microseconds of work, about a pool wake-up).
constexpr double kFlopsPerThread = 256e3;

// An A/B switch of the environment: on unless set to "0".
bool SwitchOn(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr || std::string(v) != "0";
}

// COIL_CONV_DIRECT_OW_BLOCKS=0 (read once per process) runs every output column on its own, as
// before the blocks (for before / after measurements in one binary).
bool OwBlocksOn() {
  static const bool on = SwitchOn("COIL_CONV_DIRECT_OW_BLOCKS");
  return on;
}

// The output columns [lo, hi) whose taps all fall inside the input row (no column padding):
// iw0 = ow * stride - pad >= 0 and iw0 + span < w.
void InteriorColumns(const DirectConvShape& s, int64_t span, int64_t& lo, int64_t& hi) {
  lo = std::min(s.ow, (s.pad_w + s.stride_w - 1) / s.stride_w);
  const int64_t last = s.w - 1 - span + s.pad_w;  // the largest ow * stride allowed
  hi = last < 0 ? lo : std::max(lo, std::min(s.ow, last / s.stride_w + 1));
}

// COIL_CONV_DIRECT_DW_TILES=0 (read once per process): depthwise rows through DepthwiseRow's
// blocks (one load per multiply-add) instead of conv_direct_dw_tile.h's tiles, as before
// helper-61 (for A/B measurements).
bool DwTilesOn() {
  static const bool on = SwitchOn("COIL_CONV_DIRECT_DW_TILES");
  return on;
}

// COIL_CONV_DIRECT_DW_BANDS=0 (read once per process): depthwise tasks of one output row each,
// every row across its channels, as before helper-58 (for A/B measurements).
bool DwBandsOn() {
  static const bool on = SwitchOn("COIL_CONV_DIRECT_DW_BANDS");
  return on;
}

// COIL_CONV_DIRECT_FEW_EDGE=0 (read once per process): the few-channel kernel's interior
// columns past its last block of 8 one at a time, as before helper-68 (for A/B measurements).
bool FewEdgeBlocksOn() {
  static const bool on = SwitchOn("COIL_CONV_DIRECT_FEW_EDGE");
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
  static const bool scaled = SwitchOn("COIL_CONV_DIRECT_SCALED");
  const bool full = !scaled || threads >= kDirectBoundsThreads;
  const double ratio = static_cast<double>(threads) / kDirectBoundsThreads,
               scale = full ? 1.0 : ratio * ratio;
  switch (ClassifyDirectConv(s)) {
    case DirectConvKind::kDepthwise:
      return full || Flops(s) <= kDirectDepthwiseMaxFlops * scale;
    case DirectConvKind::kPointwise:
      return Flops(s) <= kDirectPointwiseMaxFlops * scale;
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
                   cpu::ThreadPool* pool, const ExternScaledInput* scaled) {
  direct_calls.fetch_add(1, std::memory_order_relaxed);
  COIL_CHECK(scaled == nullptr || w.kind() == DirectConvKind::kPointwise)
      << "a scaled input reaches the pointwise kernel only";
  Job j{&s, x, &w, bias, steps, out};
  j.scaled = scaled;
  j.ow_blocks = OwBlocksOn();
  j.dw_tiles = j.ow_blocks && DwTilesOn();
  j.few_edge_blocks = FewEdgeBlocksOn();
  if (w.kind() != DirectConvKind::kPointwise) {
    InteriorColumns(s, (s.kw - 1) * s.dil_w, j.interior_lo, j.interior_hi);
  }
  const int64_t wanted = pool == nullptr ? 1 : DirectConvThreads(s, pool->num_threads());
  const int64_t tasks = Partition(j, wanted);
  const int64_t threads = std::min(tasks, wanted);
  auto run = [&](int64_t begin, int64_t end) {
    if (w.kind() == DirectConvKind::kDepthwise) {
      conv_direct::DepthwiseTask(j, begin, end);
    } else if (w.kind() == DirectConvKind::kFewChannels) {
      conv_direct::FewChannelsTask(j, begin, end);
    } else {
      conv_direct::PointwiseTask(j, begin, end);
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

float* conv_direct::ScaledRowsScratch(int64_t floats) {
  struct Scratch {
    std::unique_ptr<float, decltype(&std::free)> data{nullptr, &std::free};
    int64_t size = 0;
  };
  thread_local Scratch scratch;
  if (scratch.size < floats) {
    const int64_t size = (floats + 15) / 16 * 16;
    scratch.data.reset(
        static_cast<float*>(std::aligned_alloc(64, static_cast<size_t>(size) * sizeof(float))));
    COIL_CHECK(scratch.data != nullptr) << "no memory for " << size << " floats of scratch";
    scratch.size = size;
  }
  return scratch.data.get();
}

int64_t DirectConvCallCount() { return direct_calls.load(std::memory_order_relaxed); }

}  // namespace coil::cpu::internal
