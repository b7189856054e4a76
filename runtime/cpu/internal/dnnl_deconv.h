// f32 transposed aten.convolution (conv_transpose, 1-3 spatial dims) through oneDNN's
// deconvolution primitive (dnnl_externs.cc dispatches a convolution with transposed=true here).
// Training graphs need it: the derivative of a plain convolution with respect to its input is
// a transposed convolution of the output gradient (autograd/rules/conv.cc), which otherwise
// ran on the float64 reference kernel. A plan per call site and shape, as for the plain
// convolution: oneDNN's blocked activation layouts (with reorders) and the plain layout are
// measured on the first call and the faster kept (COIL_CONV_LAYOUT=blocked or =plain forces
// one). Unsupported dtypes, variants or sizes, or no oneDNN: false (the reference kernel runs).
// Not an API: used by dnnl_externs.cc.
#ifndef COIL_RUNTIME_CPU_INTERNAL_DNNL_DECONV_H_
#define COIL_RUNTIME_CPU_INTERNAL_DNNL_DECONV_H_

#include "absl/status/statusor.h"
#include "runtime/cpu/externs.h"

namespace coil::cpu::dnnl_internal {

// x [N, C, *] and the weight w [C, O/G, *k] (torch's conv_transpose layout), optional bias
// [O], attributes stride, padding, dilation, output_padding, groups. InvalidArgument when the
// output's shape is not the transposed convolution's.
absl::StatusOr<bool> TransposedConvolution(const ExternArgs& a);

}  // namespace coil::cpu::dnnl_internal

#endif  // COIL_RUNTIME_CPU_INTERNAL_DNNL_DECONV_H_
