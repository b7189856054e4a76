// One direct convolution call (conv_direct.h's RunDirectConv) as tasks: the Job every task of
// the call reads (operands, packed weights, epilogue, and how conv_direct.cc's Partition cut
// the work), and the task function of each kernel, which runs tasks [begin, end) on the
// calling thread:
//   - DepthwiseTask (conv_direct_depthwise.cc): bands of output rows x vectors of channels;
//   - FewChannelsTask (conv_direct_few_channels.cc): output rows x vectors of output channels;
//   - PointwiseTask (conv_direct_pointwise.cc): rows of the [N*H*W, C] product x panels.
// Each is compiled once per ISA (conv_direct_vectors.h's COIL_CONV_CLONES).
//
//   Job j{&s, x, &w, bias, steps, out};
//   const int64_t tasks = Partition(j, threads);  // conv_direct.cc
//   pool->ParallelFor(tasks, grain, [&](int64_t b, int64_t e) { DepthwiseTask(j, b, e); });
//
// Not an API: shared by conv_direct.cc and the kernel files.
#ifndef COIL_RUNTIME_CPU_INTERNAL_CONV_DIRECT_TASK_H_
#define COIL_RUNTIME_CPU_INTERNAL_CONV_DIRECT_TASK_H_

#include <cstdint>

#include "absl/types/span.h"
#include "runtime/cpu/externs.h"
#include "runtime/cpu/internal/conv_direct.h"

namespace coil::cpu::internal::conv_direct {

// The largest kernel rows and columns of the depthwise and few-channel kernels.
constexpr int64_t kMaxDepthwiseKernel = 7;

// Outputs per register block of the row kernels (depthwise and few channels): each output of a
// block has its own accumulator, so a block's taps are kOwBlock independent chains of
// multiply-adds (one output at a time was one chain of kh * kw dependent ones, bound by the
// multiply-add's latency), and each weight vector loaded serves kOwBlock outputs.
constexpr int64_t kOwBlock = 8;

// Rows of the pointwise kernel's register blocks (the fewest rows of a pointwise task).
constexpr int kBlockRows = 8;

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
  // Few channels: the interior columns past the last block of kOwBlock in blocks of 4, 2, 1
  // (FewEdgeBlocksOn) instead of one at a time.
  bool few_edge_blocks = true;
  // The row kernels' interior output columns [lo, hi) (InteriorColumns), once per call.
  int64_t interior_lo = 0, interior_hi = 0;
  // Pointwise: x is computed from this per task (ExternScaledInput); null: x as it is.
  const ExternScaledInput* scaled = nullptr;
};

// The calling thread's scratch of at least `floats` floats, 64-byte aligned, kept for the
// thread's life (the pointwise kernel's scaled rows); aborts when memory runs out.
float* ScaledRowsScratch(int64_t floats);

// How many panel groups of task_panels there are, a last group of one panel merged into the
// one before it (a block of one panel does a weight load per 8 multiply-adds; of three, 24).
int64_t PanelGroups(int64_t panels, int64_t task_panels);

// Tasks [begin, end) of a call whose weights are of that kind (see each definition for what a
// task covers).
void DepthwiseTask(const Job& j, int64_t begin, int64_t end);
void FewChannelsTask(const Job& j, int64_t begin, int64_t end);
void PointwiseTask(const Job& j, int64_t begin, int64_t end);

}  // namespace coil::cpu::internal::conv_direct

#endif  // COIL_RUNTIME_CPU_INTERNAL_CONV_DIRECT_TASK_H_
