// Test oracle for the CPU runtime's own products (internal/gemv.h, internal/own_gemm.h): an
// [m, n] product of f32 rows against f32 weights, plus a bias and an extern epilogue
// (externs.h's ExternEpilogueStep), computed in float64.
#ifndef COIL_RUNTIME_CPU_PRODUCT_REFERENCE_TESTING_H_
#define COIL_RUNTIME_CPU_PRODUCT_REFERENCE_TESTING_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "runtime/cpu/externs.h"

namespace coil::cpu::testing {

// out[r, j] = steps(sum_c x[r * ldx + c] * weight(c, j) + bias[j]) in float64 (bias may be
// null; kAdd's other is [m, n], kBias's [n]); `scale` per element is the sum of the products'
// magnitudes + 1, for a tolerance relative to the terms.
void ReferenceProduct(const std::vector<float>& x, int64_t m, int64_t ldx, int64_t k, int64_t n,
                      const std::function<double(int64_t c, int64_t j)>& weight,
                      const float* bias, const std::vector<ExternEpilogueStep>& steps,
                      std::vector<double>& want, std::vector<double>& scale);

}  // namespace coil::cpu::testing

#endif  // COIL_RUNTIME_CPU_PRODUCT_REFERENCE_TESTING_H_
