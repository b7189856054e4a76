// f32 and bf16 aten.convolution (1-3 spatial dims, not transposed) through oneDNN
// (dnnl_externs.cc registers it). bf16 (--precision bf16): bf16 activations and weights, a bf16
// or f32 bias and output, f32 accumulation; the same plans and layout choice as f32, oneDNN's
// bf16 kernels (brgconv on AVX512-BF16 / AMX, emulated on other AVX-512 CPUs); where oneDNN has
// only its reference implementation the call declines. coil's own kernels (gemv, direct) are f32
// only. A convolution plan measures, on its first call, oneDNN's blocked activation
// layouts (with reorders) against the plain layout and keeps the faster (COIL_CONV_LAYOUT=
// blocked or =plain forces one); constant weights are reordered once per call site.
// A 1x1 convolution of a 1x1 input (groups 1, no padding, constant weights, batch <= 8) is a
// small-M product and runs gemv.h's kernel on the executable's pool where UseGemv says so,
// with the bias and any epilogue applied there. Channels-last depthwise, small pointwise and
// few-input-channel convolutions with constant weights run conv_direct.h's kernels on the pool
// (UseDirectConv; COIL_CONV_DIRECT overrides).
// Unsupported dtypes, variants or sizes, or no oneDNN: false (the reference kernel runs).
// ConvolutionWithEpilogue also applies a pointwise epilogue (relu, clip, hardswish, residual
// add) as oneDNN post-ops.
// A squeeze-excitation multiply read as a 1x1 convolution's scaled input (externs.h,
// ExternScaledInput) runs the direct pointwise kernel; ConvolutionTakesScaledInput, declared in
// externs.h for the executable, is defined in dnnl_conv.cc with the rule it shares.
// Not an API: used by dnnl_externs.cc.
#ifndef COIL_RUNTIME_CPU_INTERNAL_DNNL_CONV_H_
#define COIL_RUNTIME_CPU_INTERNAL_DNNL_CONV_H_

#include "absl/status/statusor.h"
#include "runtime/cpu/externs.h"

namespace coil::cpu::dnnl_internal {

// InvalidArgument when the output's shape is not the convolution's.
absl::StatusOr<bool> Convolution(const ExternArgs& a);

// The convolution with `epilogue` as oneDNN post-ops (bias, then each step in order) into
// a.output: false (nothing ran) when the call is not one Convolution takes or oneDNN has no
// non-reference implementation with those post-ops. Residuals (kAdd) are read in the plain
// layout and must not overlap a.output.
absl::StatusOr<bool> ConvolutionWithEpilogue(const ExternArgs& a,
                                             absl::Span<const ExternEpilogueStep> epilogue);

}  // namespace coil::cpu::dnnl_internal

#endif  // COIL_RUNTIME_CPU_INTERNAL_DNNL_CONV_H_
