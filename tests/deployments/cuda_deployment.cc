// The smallest program of //:coil_cuda: compiles relu(x * 2 + 1) with coil::compile's default
// backend (CudaBackend()) and checks it against eager. Without a CUDA driver the compiled call
// throws coil::Error saying so: the program prints "skipped: ..." and exits 0 (a deployment
// test on a machine without a GPU checks the link, not the GPU).
#include <cstdio>
#include <string>
#include <vector>

#include "capture/error.h"
#include "coil_cuda.h"

int main() {
  using coil::Tensor;
  auto f = coil::compile([](const Tensor& x) { return (x * 2.0 + 1.0).relu(); });
  Tensor x = Tensor::FromValues({-2, -0.25, 0, 3}, {4});
  std::vector<double> got;
  try {
    got = f(x).tolist();
  } catch (const coil::Error& e) {
    const std::string what = e.what();
    if (what.find("CUDA driver") != std::string::npos || what.find("libcuda") != std::string::npos ||
        what.find("no CUDA") != std::string::npos) {
      std::printf("skipped: %s\n", what.c_str());
      return 0;
    }
    std::fprintf(stderr, "cuda_deployment: %s\n", what.c_str());
    return 1;
  }
  const std::vector<double> want = {0, 0.5, 1, 7};
  if (got != want) {
    std::fprintf(stderr, "cuda_deployment: wrong result\n");
    return 1;
  }
  std::printf("ok: coil::compile on the CUDA backend\n");
  return 0;
}
