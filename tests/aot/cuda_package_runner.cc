// A deployment of the CUDA backend's AOT package: links //runtime/cuda:cuda_package only (no
// NVRTC wrapper, no code generator, no LLVM; cuda_package_test checks with nm). Loads PACKAGE
// (CUBINs onto the GPU) and prints "loaded PACKAGE"; without a CUDA driver it prints
// "skipped: ..." and exits 0. (Running it on inputs is the GPU test's job, not done yet.)
//
//   cuda_package_runner DIR/mlp.coilcuda
#include <cstdio>
#include <memory>
#include <string>

#include "runtime/cuda/cuda_package.h"

int main(int argc, char** argv) {
  using namespace coil;
  if (argc != 2) {
    std::fprintf(stderr, "usage: cuda_package_runner PACKAGE.coilcuda\n");
    return 2;
  }
  absl::StatusOr<std::unique_ptr<cuda::CudaExecutable>> exe = cuda::LoadCudaPackage(argv[1]);
  if (!exe.ok()) {
    if (exe.status().code() == absl::StatusCode::kFailedPrecondition) {
      std::printf("skipped: %s\n", std::string(exe.status().message()).c_str());
      return 0;
    }
    std::fprintf(stderr, "cuda_package_runner: %s\n", std::string(exe.status().message()).c_str());
    return 1;
  }
  std::printf("loaded %s\n", argv[1]);
  return 0;
}
