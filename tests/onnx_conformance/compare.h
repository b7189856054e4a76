// Compares a computed tensor with an expected one the way ONNX's backend tests do
// (numpy.testing.assert_allclose): same dtype and shape, and for every element
// |got - expected| <= atol + rtol * |expected|, with NaN equal to NaN and infinities equal
// only to themselves.
//
//   absl::Status s = CompareTensors(got, expected, {});   // rtol 1e-3, atol 1e-7
//   // "element [0, 2] of 6: got 1.5, expected 1.25 (|diff| 0.25 > tolerance 0.00125); 3 of 6
//   //  elements differ"
#ifndef COIL_TESTS_ONNX_CONFORMANCE_COMPARE_H_
#define COIL_TESTS_ONNX_CONFORMANCE_COMPARE_H_

#include "absl/status/status.h"
#include "runtime/host_tensor.h"

namespace coil::onnx_testing {

struct Tolerance {
  double rtol = 1e-3;
  double atol = 1e-7;
};

// OK when both tolerances are finite and >= 0; otherwise InvalidArgument naming the bad one
// ("rtol nan is not a finite number >= 0"). A NaN tolerance would pass every element.
absl::Status CheckTolerance(const Tolerance& tolerance);

// OK when the tensors match; otherwise FailedPrecondition naming the dtype or shape mismatch,
// or the worst element (the one exceeding its tolerance by the most): index, got, expected.
// An invalid tolerance (CheckTolerance) is InvalidArgument: nothing is compared.
absl::Status CompareTensors(const HostTensor& got, const HostTensor& expected,
                            const Tolerance& tolerance);

}  // namespace coil::onnx_testing

#endif  // COIL_TESTS_ONNX_CONFORMANCE_COMPARE_H_
