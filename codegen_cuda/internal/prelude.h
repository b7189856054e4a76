// The device-side helpers every generated CUDA module starts with: fixed-width types, the error
// record of runtime/cuda/kernel_abi.h, f16/bf16 conversions (PTX cvt, so no CUDA header is
// needed and NVRTC runs with no include path), the interpreter's casts (TruncSat, NaN-propagating
// max/min, Python floordiv/mod), Philox4x32-10 (bit-exact with runtime/reference/philox.h) and
// block reductions (warp shuffles, then one shared slot per warp). Not an API: used by
// kernel_source.cc.
#ifndef COIL_CODEGEN_CUDA_INTERNAL_PRELUDE_H_
#define COIL_CODEGEN_CUDA_INTERNAL_PRELUDE_H_

namespace coil::codegen_cuda_internal {

// CUDA C++ text, ending in a newline.
const char* CudaPrelude();

}  // namespace coil::codegen_cuda_internal

#endif  // COIL_CODEGEN_CUDA_INTERNAL_PRELUDE_H_
