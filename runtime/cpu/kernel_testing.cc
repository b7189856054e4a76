// RandomFloats, RandomTensor and ReferenceProduct (kernel_testing.h).
#include "runtime/cpu/kernel_testing.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <utility>

namespace coil::cpu::testing {

std::vector<float> RandomFloats(int64_t size, int seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> v(size);
  for (float& f : v) f = u(rng);
  return v;
}

RandomTensor::RandomTensor(std::vector<int64_t> shape, int seed, bool constant) {
  t.dtype = proto::FLOAT32;
  t.shape = std::move(shape);
  t.constant = constant;
  data = RandomFloats(t.numel(), seed);
  t.data = reinterpret_cast<char*>(data.data());
}

void ReferenceProduct(const std::vector<float>& x, int64_t m, int64_t ldx, int64_t k, int64_t n,
                      const std::function<double(int64_t c, int64_t j)>& weight,
                      const float* bias, const std::vector<ExternEpilogueStep>& steps,
                      std::vector<double>& want, std::vector<double>& scale) {
  want.assign(m * n, 0);
  scale.assign(m * n, 0);
  for (int64_t r = 0; r < m; ++r) {
    for (int64_t j = 0; j < n; ++j) {
      double v = 0, s = 0;
      for (int64_t c = 0; c < k; ++c) {
        const double p = static_cast<double>(x[r * ldx + c]) * weight(c, j);
        v += p;
        s += std::abs(p);
      }
      if (bias != nullptr) v += bias[j];
      for (const ExternEpilogueStep& step : steps) {
        switch (step.kind) {
          case ExternEpilogueStep::kAdd:
            v += reinterpret_cast<const float*>(step.other->data)[r * n + j];
            break;
          case ExternEpilogueStep::kRelu:
            v = std::max(v, 0.0);
            break;
          case ExternEpilogueStep::kClip:
            v = std::min(std::max(v, static_cast<double>(step.lo)), static_cast<double>(step.hi));
            break;
          case ExternEpilogueStep::kHardswish:
            v = v * std::min(std::max(v + 3, 0.0), 6.0) / 6;
            break;
          case ExternEpilogueStep::kBias:
            v += reinterpret_cast<const float*>(step.other->data)[j];
            break;
          case ExternEpilogueStep::kGeluErf:
            v = v / 2 * (1 + std::erf(v / std::sqrt(2.0)));
            break;
          case ExternEpilogueStep::kGeluTanh:
            v = v / 2 * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
            break;
        }
      }
      want[r * n + j] = v;
      scale[r * n + j] = s + 1;
    }
  }
}

}  // namespace coil::cpu::testing
