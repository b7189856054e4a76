// assert_allclose-style tensor comparison that reports the worst element.
#include "tests/onnx_conformance/compare.h"

#include <cmath>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace coil::onnx_testing {
namespace {

std::string IndexString(int64_t flat, const std::vector<int64_t>& shape) {
  std::vector<int64_t> index(shape.size());
  for (int64_t i = static_cast<int64_t>(shape.size()) - 1; i >= 0; --i) {
    index[i] = shape[i] == 0 ? 0 : flat % shape[i];
    flat = shape[i] == 0 ? 0 : flat / shape[i];
  }
  return absl::StrCat("[", absl::StrJoin(index, ", "), "]");
}

// How far |got - expected| exceeds the tolerance (<= 0: within it; +inf: NaN or infinity
// mismatches).
double Excess(double got, double expected, const Tolerance& tol) {
  if (std::isnan(got) || std::isnan(expected)) {
    return std::isnan(got) && std::isnan(expected) ? 0 : INFINITY;
  }
  if (std::isinf(got) || std::isinf(expected)) return got == expected ? 0 : INFINITY;
  return std::fabs(got - expected) - (tol.atol + tol.rtol * std::fabs(expected));
}

}  // namespace

absl::Status CheckTolerance(const Tolerance& tolerance) {
  for (auto [name, value] : {std::pair<const char*, double>{"rtol", tolerance.rtol},
                             std::pair<const char*, double>{"atol", tolerance.atol}}) {
    if (!std::isfinite(value) || value < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, " ", value, " is not a finite number >= 0"));
    }
  }
  return absl::OkStatus();
}

absl::Status CompareTensors(const HostTensor& got, const HostTensor& expected,
                            const Tolerance& tolerance) {
  if (absl::Status s = CheckTolerance(tolerance); !s.ok()) return s;
  if (got.dtype() != expected.dtype()) {
    return absl::FailedPreconditionError(
        absl::StrCat("dtype ", got.TypeString(), ", expected ", expected.TypeString()));
  }
  if (got.shape() != expected.shape()) {
    return absl::FailedPreconditionError(
        absl::StrCat("shape ", got.TypeString(), ", expected ", expected.TypeString()));
  }
  std::vector<double> a = got.ToDoubles();
  std::vector<double> b = expected.ToDoubles();
  int64_t worst = -1, bad = 0;
  double worst_excess = 0;
  for (int64_t i = 0; i < static_cast<int64_t>(a.size()); ++i) {
    double e = Excess(a[i], b[i], tolerance);
    if (e > 0) {
      ++bad;
      if (worst < 0 || e > worst_excess) {
        worst = i;
        worst_excess = e;
      }
    }
  }
  if (worst < 0) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrFormat(
      "element %s of %s: got %.9g, expected %.9g (|diff| %.3g > atol %g + rtol %g * |expected|); "
      "%d of %d elements differ",
      IndexString(worst, got.shape()), got.TypeString(), a[worst], b[worst],
      std::fabs(a[worst] - b[worst]), tolerance.atol, tolerance.rtol, bad,
      static_cast<int64_t>(a.size())));
}

}  // namespace coil::onnx_testing
