// coil::CudaBackend(): coil::compile on an NVIDIA GPU (//:coil_cuda, or //:coil with the CPU
// backend beside it).
//
//   auto f = coil::compile(model_fn, {.backend = coil::CudaBackend()});
//
// prims + inductor + codegen_cuda (CUDA C++ compiled by NVRTC, dlopen'ed) + runtime/cuda (the
// driver API, dlopen'ed): no LLVM. Without a driver or GPU, the first call of a compiled
// function throws coil::Error saying so.
#ifndef COIL_COIL_CUDA_H_
#define COIL_COIL_CUDA_H_

#include <memory>

#include "coil.h"

namespace coil {

std::shared_ptr<Backend> CudaBackend();

}  // namespace coil

#endif  // COIL_COIL_CUDA_H_
