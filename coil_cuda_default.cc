// In //:coil_cuda (the CUDA backend alone), CudaBackend() is coil::compile's default. //:coil
// leaves this file out: there the CPU backend is the default.
#include "coil_cuda.h"

namespace coil {
namespace {
const bool kCudaBackendIsDefault = [] {
  SetDefaultBackend(&CudaBackend);
  return true;
}();
}  // namespace
}  // namespace coil
