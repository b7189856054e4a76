// ExpectClose and RandomInputs (test_kit.h).
#include "runtime/testing/test_kit.h"

#include <cmath>
#include <random>

#include "gtest/gtest.h"
#include "ir/check.h"

namespace coil::test_kit {

void ExpectClose(const HostTensor& want, const HostTensor& got, const Tolerance& tol,
                 absl::string_view what) {
  ASSERT_EQ(want.shape(), got.shape()) << what;
  if (tol.compare_dtypes) {
    ASSERT_EQ(want.dtype(), got.dtype()) << what;
  }
  const std::vector<double> a = want.ToDoubles(), b = got.ToDoubles();
  int bad = 0;
  for (size_t i = 0; i < a.size() && bad < 5; ++i) {
    if (tol.nan_matches_nan && std::isnan(a[i]) && std::isnan(b[i])) continue;
    if (tol.equal_values_match && a[i] == b[i]) continue;
    if (!(std::abs(a[i] - b[i]) <= tol.abs + tol.rel * std::abs(a[i]))) {
      ADD_FAILURE() << what << " element " << i << ": want " << a[i] << ", got " << b[i]
                    << " (abs " << tol.abs << " + rel " << tol.rel << ")";
      ++bad;
    }
  }
}

std::vector<HostTensor> RandomInputs(const Graph& g,
                                     const absl::flat_hash_map<std::string, int64_t>& symbols,
                                     int seed, const RandomInputSpec& spec) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> real(-2.0, 2.0), unit(0.0, 1.0);
  std::vector<HostTensor> out;
  for (const Value* in : g.inputs()) {
    std::vector<int64_t> shape;
    for (const SymExpr& d : in->type().shape) {
      absl::StatusOr<int64_t> n = d.Evaluate(symbols);
      COIL_CHECK(n.ok()) << "input %" << in->id() << ": " << n.status();
      shape.push_back(*n);
    }
    HostTensor t = HostTensor::Zeros(in->type().dtype, shape);
    for (int64_t i = 0; i < t.numel(); ++i) {
      if (IsFloating(t.dtype())) {
        t.StoreDouble(i, unit(rng) < spec.nan_rate ? NAN : real(rng));
      } else if (IsBool(t.dtype())) {
        t.StoreInt(i, rng() % 2);
      } else {
        int64_t v = static_cast<int64_t>(rng() % spec.int_range);
        if (spec.signed_nonzero) {
          v = static_cast<int64_t>(rng() % (2 * spec.int_range)) - spec.int_range;
          if (v == 0) v = 1;
        }
        t.StoreInt(i, v);
      }
    }
    out.push_back(t);
  }
  return out;
}

}  // namespace coil::test_kit
