// Recognizes a convolution kernel's generated epilogue as oneDNN post-ops: an EXTERN
// aten.convolution kernel of a Schedule whose epilogue Loop stores one chain of relu, clamp,
// hardswish and residual adds of its result (each element at its own index) into another
// buffer, and whose result no other kernel reads. The executable then runs the convolution
// with those post-ops straight into the epilogue's buffer and skips the generated epilogue
// (externs.h, ExternEpilogueStep; docs/cpu_backend.md, "Runtime performance"). An f32 result's
// epilogue computes in f32; a bf16 result's (--precision bf16) in bf16, or in f32 between
// converts, and stores bf16 or f32 (oneDNN then rounds once, after the post-ops).
// An f32 aten.mm kernel's epilogue likewise (COIL_MM_POST_OPS), which may also start with a
// bias (a load of a [n] buffer at the last index: oneDNN's matmul bias) and apply GELU, erf or
// tanh (ONNX exports' spelled-out forms, their constants literals or scalar constant
// buffers), as oneDNN's eltwise_gelu_erf / eltwise_gelu_tanh.
// Not an API: used by executable.cc.
//
//   std::optional<EpilogueMatch> m = MatchExternEpilogue(schedule, kernel_index);
//   if (m) ... m->steps (kAdd steps name their residual buffer), m->store_buffer
#ifndef COIL_RUNTIME_CPU_INTERNAL_EXTERN_EPILOGUE_H_
#define COIL_RUNTIME_CPU_INTERNAL_EXTERN_EPILOGUE_H_

#include <functional>
#include <optional>
#include <vector>

#include "ir/proto/schedule.pb.h"
#include "runtime/cpu/externs.h"

namespace coil::cpu {

struct EpilogueMatch {
  struct Step {
    ExternEpilogueStep::Kind kind = ExternEpilogueStep::kRelu;
    float lo = 0, hi = 0;  // kClip
    int buffer = 0;        // kAdd: the residual's buffer id; kBias: the bias's
  };
  std::vector<Step> steps;  // at least one
  int store_buffer = 0;     // where the epilogue's result goes
};

// The value of a scalar (rank-0) constant buffer, or nullopt (not a constant, not known).
using ScalarConstant = std::function<std::optional<double>(int buffer_id)>;

// The post-op form of `schedule.kernels(kernel_index)`'s epilogue, or nullopt when the kernel
// is not an aten.convolution or f32 aten.mm with such an epilogue (any other expression, a
// masked or shifted access, a second store, a result read elsewhere or returned, a residual
// or bias that is the destination buffer) or, for a convolution, unless `residuals` or it writes
// channels-last (ir/channels_last.h), when the epilogue adds a residual: on NCHW activations
// oneDNN 2.6's GEMM-based convolution applies a binary post-op element by element through its
// reference code (resnet50's 1x1 convolution with add + relu at batch 1: 53 ms against about
// 1 ms with the generated epilogue, docs/benchmarks.md); its nhwc kernels do not. The shapes
// and dtypes of the buffers are checked again per call. `scalar` resolves scalar constants.
// A convolution's destination written in place over its residual (another buffer on the same
// bytes: inductor's extern_epilogue_in_place) matches; the executable then runs the add as
// oneDNN's `sum` post-op.
std::optional<EpilogueMatch> MatchExternEpilogue(const proto::Schedule& schedule,
                                                 int kernel_index, bool residuals,
                                                 const ScalarConstant& scalar = nullptr);

// A pointwise kernel whose result is only a 1x1 convolution's input, computed as a scaled
// input (externs.h, ExternScaledInput): y[n, h, w, c] = steps(x[n, h, w, c]) * g(s[n, 0, 0, c])
// with steps relu / clip / hardswish and g the identity or hardsigmoid, all f32 (mobilenet_v3's
// squeeze-excitation multiply, with the activation of the depthwise convolution before it).
struct ScaledInputMatch {
  int x_buffer = 0;
  std::vector<EpilogueMatch::Step> steps;  // kRelu, kClip, kHardswish
  int scale_buffer = 0;
  bool hardsigmoid = false;
  int store_buffer = 0;  // y: the convolution's input 0
};

// The scaled-input form of `schedule.kernels(kernel_index)` for the EXTERN aten.convolution
// `schedule.kernels(conv_index)`, or nullopt: the kernel must be POINTWISE over four ranges
// with one store (y, an f32 intermediate), y the convolution's input 0 and read by no other
// kernel or output, and the stored value such a product (in either operand order). Whether
// the call takes it, and the buffers' shapes and places, are the executable's to check per run.
std::optional<ScaledInputMatch> MatchScaledInput(const proto::Schedule& schedule,
                                                 int kernel_index, int conv_index);

}  // namespace coil::cpu

#endif  // COIL_RUNTIME_CPU_INTERNAL_EXTERN_EPILOGUE_H_
