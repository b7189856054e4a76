// training_cuda_test's compiled backend: the CUDA backend (NVRTC kernels, cuBLASLt GEMMs,
// cuDNN convolutions), with a sync after every kernel so that a failing kernel is named.
// Without a CUDA driver or GPU the tests that use it skip and say why.
#include "runtime/cuda/executable.h"
#include "tools/driver/cuda_backend.h"
#include "tools/driver/training_test_data.h"

namespace coil::driver::testing {

std::shared_ptr<Backend> CompiledBackend() {
  CudaBackendOptions options;
  options.runtime.sync_each_kernel = true;
  return CudaBackend(options);
}

absl::Status CompiledBackendAvailable() { return cuda::CudaExecutable::DriverStatus(); }

}  // namespace coil::driver::testing
