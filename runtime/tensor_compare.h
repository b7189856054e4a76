// How far a computed tensor is from an oracle's, as one number: the max relative error
// max|got - want| / max|want| over all elements (max|got - want| when `want` is all zeros).
// The CLI's --check, the main job, model tests and benchmarks report it; element-wise checks
// in unit tests use runtime/testing/test_kit.h's ExpectClose instead.
//
//   double err = MaxRelativeError(got, want, NanPolicy::kNanMatchesNan);
//   if (err > 1e-4) ...
#ifndef COIL_RUNTIME_TENSOR_COMPARE_H_
#define COIL_RUNTIME_TENSOR_COMPARE_H_

#include "absl/types/span.h"
#include "runtime/host_tensor.h"

namespace coil {

// What a NaN (or a difference that is NaN) counts as.
enum class NanPolicy {
  // NaN in both at one element: a match (the element is skipped); NaN in one only: an
  // infinite error. Elements whose difference is NaN otherwise (equal infinities) are skipped.
  kNanMatchesNan,
  // Any element whose difference is NaN (a NaN on either side, equal infinities): an infinite
  // error (NaN when `want` also holds an infinity: inf / inf). Either fails every
  // `err <= bound` check. For oracles that never produce NaN.
  kNanIsError,
};

// Over the first min(got.size(), want.size()) elements; shapes are the caller's to check.
double MaxRelativeError(absl::Span<const double> got, absl::Span<const double> want,
                        NanPolicy nans);
double MaxRelativeError(const HostTensor& got, const HostTensor& want, NanPolicy nans);

}  // namespace coil

#endif  // COIL_RUNTIME_TENSOR_COMPARE_H_
