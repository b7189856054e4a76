// How the CUDA runtime runs an EXTERN aten.convolution kernel through cuDNN: which buffers are
// the input, weight, bias and output, the convolution's geometry (stride, padding, dilation,
// groups) from the kernel's attributes, and whether the kernel's pointwise epilogue (inductor's
// extern epilogue fusion) is one cuDNN's operation graph can apply itself, so that one cuDNN
// call writes the epilogue's output directly and the generated epilogue kernel is not launched.
// A pure function of the Schedule (no GPU, no library): CI tests it.
//
// The Schedule lays every buffer out contiguously: NCHW ([N, C, *spatial] row-major), except the
// activations inductor's channels_last pass stored [N, H, W, C] (ir/channels_last.h: the
// convolution's attribute says which of input 0 and output; x_nhwc / out_nhwc here). The
// runtime hands cuDNN the logical NCHW dimensions with those buffers' NHWC strides; a fused
// epilogue's residual and stored buffer, loaded and stored at the identity index of the
// epilogue's (permuted) loops, share the output's layout. cuDNN's graph computes
//   D = relu?(conv(X, W) + bias[C] + R)
// with the bias broadcast over N and the spatial dimensions (the extern's third input) and R a
// tensor of the output's shape. An epilogue fuses when its one STORE (identity index) stores
//   [maximum(., 0) of] the convolution's result [+ at most one buffer of the output's shape
//   loaded at the identity index],
// in f32 with f16/bf16 values widened and the result narrowed once, or in f16/bf16 itself (cuDNN
// adds in f32 and rounds once: the results differ by that rounding).
// Anything else, the result read by another kernel, or the result being a graph output keeps
// the generated epilogue after the convolution (`not_fused` says why). What cuDNN cannot run
// at all (transposed convolutions, integer dtypes, a bias of another dtype, malformed
// attributes) sets `unsupported`, and the runtime runs the kernel on the host as before.
//
//   std::optional<ConvPlan> p = PlanConv(schedule, kernel);   // nullopt: not aten.convolution
#ifndef COIL_RUNTIME_CUDA_CONV_PLAN_H_
#define COIL_RUNTIME_CUDA_CONV_PLAN_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/proto/schedule.pb.h"

namespace coil::cuda {

struct ConvPlan {
  int x = 0, w = 0;  // input [N, C_in, *spatial] and weight [C_out, C_in / groups, *kernel]
  int bias = 0;      // [C_out], or 0 (the extern has two inputs)
  int out = 0;       // the extern's output buffer [N, C_out, *spatial_out]
  proto::DType dtype = proto::DTYPE_UNSPECIFIED;  // of x, w, bias and out
  int spatial = 0;                                // 1, 2 or 3
  std::vector<int64_t> stride, padding, dilation;  // one per spatial dimension
  int64_t groups = 1;
  // 2-D convolutions only: input 0 / the output stored [N, H, W, C] (ir/channels_last.h).
  bool x_nhwc = false, out_nhwc = false;
  // Why cuDNN cannot run this convolution at all ("" when it can): it then runs on the host.
  std::string unsupported;
  // The epilogue cuDNN applies instead of the generated one.
  bool fused = false;
  int d = 0;  // fused: the buffer the epilogue stores (cuDNN writes it directly)
  int r = 0;  // fused: a buffer of the output's shape added (a residual), or 0
  bool relu = false;
  // Why a kernel with an epilogue keeps the generated one ("" when fused or there is none).
  std::string not_fused;
};

// The plan for `kernel` of `schedule`; nullopt when it is not an EXTERN aten.convolution.
std::optional<ConvPlan> PlanConv(const proto::Schedule& schedule, const proto::Kernel& kernel);

}  // namespace coil::cuda

#endif  // COIL_RUNTIME_CUDA_CONV_PLAN_H_
