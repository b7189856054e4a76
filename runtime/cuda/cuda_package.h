// The CUDA backend's AOT package: a compiled KernelModule (every kernel's CUBIN and launch
// configuration, the Schedule, its constants) in one file, loaded by the CUDA runtime alone:
// no NVRTC, no code generator, no LLVM in the program that runs it (tests/aot checks with nm).
//
//   coil compile model.onnx --backend cuda --aot DIR --name mlp     -> DIR/mlp.coilcuda
//   absl::StatusOr<std::unique_ptr<cuda::CudaExecutable>> exe = cuda::LoadCudaPackage(path);
//
// The CUBINs are for the architecture they were compiled for (sm_90 by default); a GPU of
// another architecture fails to load them (Create's error names the kernel).
#ifndef COIL_RUNTIME_CUDA_CUDA_PACKAGE_H_
#define COIL_RUNTIME_CUDA_CUDA_PACKAGE_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ir/proto/kernel_module.pb.h"
#include "runtime/cuda/executable.h"

namespace coil::cuda {

// The package file's extension.
inline constexpr char kCudaPackageExtension[] = ".coilcuda";

// Writes `module` (backend "cuda", as GenerateCuda made it: CUBINs for the generated kernels,
// externs such as cuBLASLt GEMMs described in the Schedule) to `path`, atomically.
// InvalidArgument for a module of another backend or without code.
absl::Status WriteCudaPackage(const proto::KernelModule& module, const std::string& path);

// Reads a package and loads it (CudaExecutable::Create). Errors name the file: unreadable,
// not a package, or what Create says (no CUDA driver: FailedPrecondition).
absl::StatusOr<std::unique_ptr<CudaExecutable>> LoadCudaPackage(
    const std::string& path, const CudaExecutableOptions& options = {});

}  // namespace coil::cuda

#endif  // COIL_RUNTIME_CUDA_CUDA_PACKAGE_H_
