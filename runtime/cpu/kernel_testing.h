// Test helpers for the CPU runtime's own kernels (internal/gemv.h, own_gemm.h, conv_direct.h):
// random operands (as vectors, or as tensors for the calls routed to the kernels), and the
// float64 oracle of a product with a bias and an extern epilogue
// (externs.h's ExternEpilogueStep).
#ifndef COIL_RUNTIME_CPU_KERNEL_TESTING_H_
#define COIL_RUNTIME_CPU_KERNEL_TESTING_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "runtime/cpu/externs.h"

namespace coil::cpu::testing {

// `size` floats uniform in [-1, 1) from std::mt19937(seed): the inputs and weights of the
// runtime's kernel tests.
std::vector<float> RandomFloats(int64_t size, int seed);

// A random f32 tensor (RandomFloats(numel, seed)) and the ExternTensor that points at it, for
// the tests' calls through RunExtern / RunExternFused. Not copyable: `t` points into `data`.
//
//   RandomTensor x({m, k}, 20), w({k, n}, 21, /*constant=*/true), out({m, n}, 22);
//   const std::vector<ExternTensor> in = {x.t, w.t};
//   RunExtern("aten.mm", ExternArgs{in, out.t, {}, 4, &state, &pool});
struct RandomTensor {
  RandomTensor(std::vector<int64_t> shape, int seed, bool constant = false);
  RandomTensor(const RandomTensor&) = delete;
  RandomTensor& operator=(const RandomTensor&) = delete;

  std::vector<float> data;
  ExternTensor t;
};

// out[r, j] = steps(sum_c x[r * ldx + c] * weight(c, j) + bias[j]) in float64 (bias may be
// null; kAdd's other is [m, n], kBias's [n]); `scale` per element is the sum of the products'
// magnitudes + 1, for a tolerance relative to the terms.
void ReferenceProduct(const std::vector<float>& x, int64_t m, int64_t ldx, int64_t k, int64_t n,
                      const std::function<double(int64_t c, int64_t j)>& weight,
                      const float* bias, const std::vector<ExternEpilogueStep>& steps,
                      std::vector<double>& want, std::vector<double>& scale);

}  // namespace coil::cpu::testing

#endif  // COIL_RUNTIME_CPU_KERNEL_TESTING_H_
