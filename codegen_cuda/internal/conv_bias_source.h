// The convolution bias kernels of runtime/cuda/kernel_abi.h (ConvBiasSymbol): CUDA C++ text a
// module carries when its Schedule has an EXTERN aten.convolution with a bias, so that the
// runtime can add the bias after a cuDNN convolution whose graph could not fuse it. Not an API:
// used by codegen_cuda.cc.
#ifndef COIL_CODEGEN_CUDA_INTERNAL_CONV_BIAS_SOURCE_H_
#define COIL_CODEGEN_CUDA_INTERNAL_CONV_BIAS_SOURCE_H_

#include <string>

#include "ir/proto/schedule.pb.h"

namespace coil::codegen_cuda_internal {

// Whether `schedule` has an EXTERN aten.convolution kernel with a bias input.
bool HasConvolutionBias(const proto::Schedule& schedule);

// The four kernels (f32, f16, bf16, f64); needs the prelude's f16/bf16 conversions.
std::string ConvBiasKernelsSource();

}  // namespace coil::codegen_cuda_internal

#endif  // COIL_CODEGEN_CUDA_INTERNAL_CONV_BIAS_SOURCE_H_
