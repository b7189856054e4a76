// CudaBackend() (coil_cuda.h).
#include "coil_cuda.h"

#include "tools/driver/capture_backend.h"
#include "tools/driver/cuda_backend.h"

namespace coil {

std::shared_ptr<Backend> CudaBackend() { return driver::CaptureBackend(driver::CudaBackend()); }

}  // namespace coil
