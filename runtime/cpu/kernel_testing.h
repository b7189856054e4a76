// Test helpers for the CPU runtime's own kernels (internal/gemv.h, own_gemm.h, conv_direct.h):
// random operands, and the float64 oracle of a product with a bias and an extern epilogue
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

// out[r, j] = steps(sum_c x[r * ldx + c] * weight(c, j) + bias[j]) in float64 (bias may be
// null; kAdd's other is [m, n], kBias's [n]); `scale` per element is the sum of the products'
// magnitudes + 1, for a tolerance relative to the terms.
void ReferenceProduct(const std::vector<float>& x, int64_t m, int64_t ldx, int64_t k, int64_t n,
                      const std::function<double(int64_t c, int64_t j)>& weight,
                      const float* bias, const std::vector<ExternEpilogueStep>& steps,
                      std::vector<double>& want, std::vector<double>& scale);

}  // namespace coil::cpu::testing

#endif  // COIL_RUNTIME_CPU_KERNEL_TESTING_H_
