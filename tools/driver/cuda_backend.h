// The CUDA backend as a driver::Backend: codegen_cuda (Schedule -> CUDA C++ -> NVRTC CUBIN) and
// runtime/cuda (CudaExecutable: driver API via dlopen, device arena, host copies at the edges,
// aten.mm / aten.bmm through cuBLASLt with fused epilogues). Declares aten.mm, aten.bmm and
// aten.convolution to inductor as externs with epilogues, and keeps aten.scaled_dot_product_attention
// whole for its fused attention kernels where they fit.
// Generate needs only NVRTC (no GPU: CI compiles every kernel); Load needs a CUDA driver and
// GPU, and says "no CUDA driver" (FailedPrecondition) cleanly where there is none; without
// cuBLASLt it loads anyway, GEMMs run on the host, and the first Load says so on stderr.
//
//   std::shared_ptr<driver::Backend> cuda = driver::CudaBackend();
//   driver::DriverOptions options;  options.backend = cuda;
//   absl::StatusOr<driver::CompileResult> r = driver::CompileGraph(std::move(graph), options);
#ifndef COIL_TOOLS_DRIVER_CUDA_BACKEND_H_
#define COIL_TOOLS_DRIVER_CUDA_BACKEND_H_

#include <memory>
#include <optional>

#include "codegen_cuda/codegen_cuda.h"
#include "runtime/cuda/executable.h"
#include "tools/driver/backend.h"

namespace coil::driver {

struct CudaBackendOptions {
  codegen_cuda::CudaCodegenOptions codegen;  // target architecture
  // Device, external data folder, per-kernel sync, CUDA graphs (runtime.cuda_graphs; the
  // environment's COIL_CUDA_GRAPHS=1 / 0 overrides it).
  cuda::CudaExecutableOptions runtime;
  // aten.scaled_dot_product_attention kept whole where the fused kernels run it
  // (runtime/cuda/attention_plan.h), the rest decomposed; unset: on unless the environment
  // says COIL_CUDA_ATTENTION=0.
  std::optional<bool> fused_attention;
};

std::shared_ptr<Backend> CudaBackend(const CudaBackendOptions& options = {});

// The CudaExecutable behind an Executable the CUDA backend loaded; null for other backends'.
cuda::CudaExecutable* AsCudaExecutable(Executable& executable);

}  // namespace coil::driver

#endif  // COIL_TOOLS_DRIVER_CUDA_BACKEND_H_
