// MaxRelativeError (see cpu_bench_compare.h).
#include "tools/bench/cpu_bench_compare.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace coil::bench {

double MaxRelativeError(absl::Span<const double> got, absl::Span<const double> want) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (got.size() != want.size()) return kInf;
  double diff = 0, scale = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const bool got_nan = std::isnan(got[i]), want_nan = std::isnan(want[i]);
    if (got_nan || want_nan) {
      if (got_nan != want_nan) return kInf;
      continue;
    }
    // Infinities: equal ones match, anything else is infinitely wrong.
    if (std::isinf(got[i]) || std::isinf(want[i])) {
      if (got[i] != want[i]) return kInf;
      continue;
    }
    diff = std::max(diff, std::fabs(got[i] - want[i]));
    scale = std::max(scale, std::fabs(want[i]));
  }
  return scale == 0 ? diff : diff / scale;
}

}  // namespace coil::bench
