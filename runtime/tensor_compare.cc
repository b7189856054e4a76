// MaxRelativeError (tensor_compare.h).
#include "runtime/tensor_compare.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace coil {

double MaxRelativeError(absl::Span<const double> got, absl::Span<const double> want,
                        NanPolicy nans) {
  double diff = 0, scale = 0;
  for (size_t i = 0; i < got.size() && i < want.size(); ++i) {
    const double a = got[i], b = want[i];
    if (nans == NanPolicy::kNanIsError) {
      const double d = std::fabs(a - b);
      diff = std::isnan(d) ? INFINITY : std::max(diff, d);
      scale = std::max(scale, std::fabs(b));  // a NaN `b` leaves `scale` as it is
      continue;
    }
    if (std::isnan(a) || std::isnan(b)) {
      if (std::isnan(a) != std::isnan(b)) diff = INFINITY;
      continue;
    }
    diff = std::max(diff, std::fabs(a - b));  // inf - inf is NaN: max keeps `diff`
    scale = std::max(scale, std::fabs(b));
  }
  return scale == 0 ? diff : diff / scale;
}

double MaxRelativeError(const HostTensor& got, const HostTensor& want, NanPolicy nans) {
  const std::vector<double> a = got.ToDoubles(), b = want.ToDoubles();
  return MaxRelativeError(a, b, nans);
}

}  // namespace coil
