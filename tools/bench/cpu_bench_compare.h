// How `coil bench cpu` decides that coil computed the right thing: the largest error relative
// to the scale of the expected values, as tests/real_models measures it.
//
//   double err = MaxRelativeError(got.ToDoubles(), want.ToDoubles());  // 0 when equal
#ifndef COIL_TOOLS_BENCH_CPU_BENCH_COMPARE_H_
#define COIL_TOOLS_BENCH_CPU_BENCH_COMPARE_H_

#include "absl/types/span.h"

namespace coil::bench {

// max|got - want| / max|want| (max|got - want| when `want` is all zeros). A NaN on one side
// only, or sizes that differ, give +infinity; NaN on both sides counts as equal.
double MaxRelativeError(absl::Span<const double> got, absl::Span<const double> want);

}  // namespace coil::bench

#endif  // COIL_TOOLS_BENCH_CPU_BENCH_COMPARE_H_
