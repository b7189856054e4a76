// f32 aten.convolution_backward_weight (a plain convolution's weight gradient, 1-3 spatial
// dims, grouped, strided, dilated) through oneDNN's convolution backward-weights primitive
// (dnnl_externs.cc registers it). Training graphs need it: the decomposed form is a
// convolution of transposed copies of x and the output gradient followed by a transposing copy
// of the [C, O, *k] result (prims/decompositions/nn.cc); the primitive reads x [N, C, *] and
// the gradient [N, O, *] as they are and writes [O, C/G, *k]. A plan per call site and shape:
// oneDNN's blocked layouts (with reorders), its plain layout, and im2col + oneDNN's sgemm (for
// outputs of at most 4 spatial positions: up to 5x faster at 1x1) are measured on the first
// call and the fastest kept (COIL_CONV_LAYOUT=blocked, =plain or =gemm forces one; =dnnl
// measures oneDNN's two only, as before the gemm variant). Unsupported dtypes or sizes, or no
// oneDNN: false (the reference kernel runs).
// Not an API: used by dnnl_externs.cc.
#ifndef COIL_RUNTIME_CPU_INTERNAL_DNNL_CONV_WEIGHT_GRAD_H_
#define COIL_RUNTIME_CPU_INTERNAL_DNNL_CONV_WEIGHT_GRAD_H_

#include "absl/status/statusor.h"
#include "runtime/cpu/externs.h"

namespace coil::cpu::dnnl_internal {

// inputs: x [N, C, *], grad_output [N, O, *]; output [O, C/G, *kernel_size]; attributes
// kernel_size, stride, padding, dilation, groups. InvalidArgument when the shapes do not fit
// one convolution.
absl::StatusOr<bool> ConvolutionWeightGrad(const ExternArgs& a);

}  // namespace coil::cpu::dnnl_internal

#endif  // COIL_RUNTIME_CPU_INTERNAL_DNNL_CONV_WEIGHT_GRAD_H_
