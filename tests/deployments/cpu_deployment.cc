// The smallest program of //:coil_cpu: compiles relu(x * 2 + 1) with coil::compile's default
// backend (the compiled CPU backend) and checks it against eager. Prints "ok" and exits 0.
#include <cstdio>
#include <vector>

#include "coil.h"

int main() {
  using coil::Tensor;
  auto f = coil::compile([](const Tensor& x) { return (x * 2.0 + 1.0).relu(); });
  Tensor x = Tensor::FromValues({-2, -0.25, 0, 3}, {4});
  const std::vector<double> got = f(x).tolist();
  const std::vector<double> want = {0, 0.5, 1, 7};
  if (got != want) {
    std::fprintf(stderr, "cpu_deployment: wrong result\n");
    return 1;
  }
  std::printf("ok: coil::compile on the CPU backend\n");
  return 0;
}
