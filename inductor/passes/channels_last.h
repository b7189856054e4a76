// channels_last: stores the activations between 2-D convolutions as [N, H, W, C] (oneDNN's
// nhwc, the layout its AVX-512 convolution kernels work in) instead of the schedule's default
// [N, C, H, W], decided once per program, so a convolution reads and writes its activations
// without reordering them around every call.
//
// Decision (PlanChannelsLast): a program with at least kMinConvolutions 2-D (non-transposed)
// aten.convolution externs whose input and output have one of the backend's dtypes (the CPU:
// f32; CUDA: f16 and bf16, and f32 when it may use TF32). Starting from those convolutions'
// input and output buffers, every buffer connected to them through generated kernels is
// stored channels-last when it is eligible: INTERMEDIATE, of one of those dtypes, rank 4, and
// read or written by no extern other than as such a convolution's input 0 or output (weights,
// biases, matmul and other extern operands keep their layout). A generated kernel may touch
// buffers of both layouts (an f32 -> bf16 cast before the first convolution of an autocast
// model): each access is indexed in its own buffer's layout. Model inputs and outputs are never permuted, so
// the layout changes only at the program's edges: the first convolution reads NCHW, the last
// kernel before an output writes it in the caller's layout.
//
// Rewrite (ChannelsLastActivations): a permuted buffer's shape [N, C, H, W] becomes
// [N, H, W, C] and every LOAD / STORE of it indexes [n, h, w, c]; a kernel whose 4-D outer
// loop nest walks a permuted buffer in order (an access with index [_i0, _i1, _i2, _i3]) has
// its ranges permuted the same way and its loop variables renamed, so its innermost loop runs
// over channels (contiguous). Other kernels keep their loops (correct, strided). Each
// convolution touching a permuted buffer gets ir/channels_last.h's attribute. Values computed
// are the same bit for bit: only addresses change.
//
// Runs after fusion, before the memory plan (pipeline.cc), when the backend's Capabilities name
// dtypes for it (Capabilities::channels_last; the runtimes that understand the attribute:
// runtime/cpu, runtime/cuda and the Schedule interpreter).
#ifndef COIL_INDUCTOR_PASSES_CHANNELS_LAST_H_
#define COIL_INDUCTOR_PASSES_CHANNELS_LAST_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "inductor/loop_ir.h"
#include "ir/dtype.h"

namespace coil::inductor {

inline constexpr int kMinConvolutions = 2;

struct ChannelsLastPlan {
  std::vector<int> buffers;  // ids of the buffers to store channels-last, sorted
  int convolutions = 0;      // eligible convolutions in the program
  std::string reason;        // why nothing is permuted (empty when something is)
};

// The decision alone (does not change the program), for convolutions of `dtypes`.
ChannelsLastPlan PlanChannelsLast(const Program& program, absl::Span<const DType> dtypes);

// The pass: PlanChannelsLast, then the rewrite; true when a buffer was permuted.
absl::StatusOr<bool> ChannelsLastActivations(Program& program,
                                             absl::Span<const DType> dtypes);

}  // namespace coil::inductor

#endif  // COIL_INDUCTOR_PASSES_CHANNELS_LAST_H_
