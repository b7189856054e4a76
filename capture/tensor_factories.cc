// coil::Tensor's factories (capture/tensor.h): concrete CPU tensors from values, constants
// and a deterministic per-seed generator.
#include <cmath>
#include <memory>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "capture/internal/tensor_impl.h"
#include "capture/tensor.h"

namespace coil {
namespace {

Tensor Wrap(HostTensor t) {
  return Tensor(std::make_shared<capture_internal::TensorImpl>(std::move(t)));
}

int64_t CheckedNumel(const std::vector<int64_t>& shape, const char* what) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) {
      throw Error(absl::InvalidArgumentError(
          absl::StrCat(what, ": negative dimension ", d, " in the shape")));
    }
    n *= d;
  }
  return n;
}

void CheckDType(DType dtype, const char* what) {
  if (!IsValidDType(dtype)) {
    throw Error(absl::InvalidArgumentError(absl::StrCat(what, ": unsupported dtype")));
  }
}

// SplitMix64: a tiny generator whose sequence is fixed by the seed on every platform.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1), 53 random bits.
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

 private:
  uint64_t state_;
};

}  // namespace

Tensor Tensor::FromHost(HostTensor t) {
  if (!t.defined()) throw Error(absl::InvalidArgumentError("FromHost: undefined HostTensor"));
  return Wrap(std::move(t));
}

Tensor Tensor::FromValues(std::vector<double> values, std::vector<int64_t> shape, DType dtype) {
  CheckDType(dtype, "FromValues");
  int64_t n = CheckedNumel(shape, "FromValues");
  if (n != static_cast<int64_t>(values.size())) {
    throw Error(absl::InvalidArgumentError(absl::StrCat(
        "FromValues: ", values.size(), " values for a shape with ", n, " elements")));
  }
  return Wrap(HostTensor::FromDoubles(dtype, std::move(shape), values));
}

Tensor Tensor::Scalar(double value, DType dtype) { return FromValues({value}, {}, dtype); }

Tensor Tensor::Zeros(std::vector<int64_t> shape, DType dtype) {
  CheckDType(dtype, "Zeros");
  CheckedNumel(shape, "Zeros");
  return Wrap(HostTensor::Zeros(dtype, std::move(shape)));
}

Tensor Tensor::Ones(std::vector<int64_t> shape, DType dtype) {
  int64_t n = CheckedNumel(shape, "Ones");
  return FromValues(std::vector<double>(n, 1.0), std::move(shape), dtype);
}

Tensor Tensor::Rand(std::vector<int64_t> shape, uint64_t seed, DType dtype) {
  int64_t n = CheckedNumel(shape, "Rand");
  SplitMix64 rng(seed);
  std::vector<double> values(n);
  for (double& v : values) v = rng.Uniform();
  return FromValues(std::move(values), std::move(shape), dtype);
}

Tensor Tensor::Randn(std::vector<int64_t> shape, uint64_t seed, DType dtype) {
  int64_t n = CheckedNumel(shape, "Randn");
  SplitMix64 rng(seed);
  std::vector<double> values(n);
  // Box-Muller: two uniforms give two independent standard normals.
  for (int64_t i = 0; i < n; i += 2) {
    double u1 = 1.0 - rng.Uniform();  // (0, 1]
    double u2 = rng.Uniform();
    double r = std::sqrt(-2.0 * std::log(u1));
    values[i] = r * std::cos(2.0 * M_PI * u2);
    if (i + 1 < n) values[i + 1] = r * std::sin(2.0 * M_PI * u2);
  }
  return FromValues(std::move(values), std::move(shape), dtype);
}

}  // namespace coil
