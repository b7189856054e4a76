// Test helpers: reading the NamedValues files that the torch generators (nn_cases.py,
// capture/examples/*_cases.py) write, and comparing tensors with a tolerance.
#ifndef COIL_CAPTURE_NN_TEST_VALUES_H_
#define COIL_CAPTURE_NN_TEST_VALUES_H_

#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "capture/tensor.h"
#include "runtime/host_tensor.h"

namespace coil::nn {

// name -> tensor, from a serialized coil.nn_test.NamedValues file.
absl::StatusOr<std::map<std::string, HostTensor>> ReadNamedValues(const std::string& path);

// OK when `actual` and `expected` have one shape and every element satisfies
// |a - e| <= atol + rtol * |e| (NaNs must match); otherwise an error naming the first
// mismatching element and the largest difference.
absl::Status AllClose(const HostTensor& actual, const HostTensor& expected, double rtol,
                      double atol);

}  // namespace coil::nn

#endif  // COIL_CAPTURE_NN_TEST_VALUES_H_
