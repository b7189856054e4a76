// The shared kit of coil's tests that compare tensors: ExpectClose (element-wise, with a
// tolerance) and seeded RandomInputs for a graph's inputs. Testonly (//runtime:test_kit); a
// single number for a whole tensor is runtime/tensor_compare.h's MaxRelativeError.
//
// It lives in package //runtime because every stage's tests may use //runtime (the reference
// interpreter is their oracle; tests/package_graph allows testonly edges to it), and a
// tensor comparison needs HostTensor, a graph's inputs need ir's Graph: runtime is the lowest
// package that has both.
//
//   std::vector<HostTensor> in = RandomInputs(graph, {{"batch", 3}}, /*seed=*/1);
//   ExpectClose(want[0], got[0], {.abs = 1e-6, .rel = 1e-5}, "output 0");
#ifndef COIL_RUNTIME_TESTING_TEST_KIT_H_
#define COIL_RUNTIME_TESTING_TEST_KIT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "ir/graph.h"
#include "runtime/host_tensor.h"

namespace coil::test_kit {

// How close `got` must be to `want`, element by element: |want - got| <= abs + rel * |want|
// (a NaN difference fails unless one of the flags below lets the element match first).
struct Tolerance {
  double abs = 0;
  double rel = 0;
  // NaN in both at one element: a match.
  bool nan_matches_nan = true;
  // want == got (so also equal infinities, whose difference is NaN): a match.
  bool equal_values_match = false;
  // The dtypes must be equal too (the shapes always must).
  bool compare_dtypes = true;
};

// Adds a gtest failure naming `what` when the shapes (or dtypes) differ, else one for each
// element out of tolerance (the first 5 reported).
void ExpectClose(const HostTensor& want, const HostTensor& got, const Tolerance& tol,
                 absl::string_view what);

// What RandomInputs draws: floating elements uniform in [-2, 2) (NaN with probability
// nan_rate), bools 0/1, integers from [0, int_range) or, with signed_nonzero, from
// [-int_range, int_range) without 0 (safe divisors).
struct RandomInputSpec {
  int int_range = 3;
  double nan_rate = 0.0;
  bool signed_nonzero = false;
};

// One tensor per input of `g`, its shape evaluated with `symbols` (which must bind every
// symbol of the input shapes), filled from std::mt19937(seed).
std::vector<HostTensor> RandomInputs(const Graph& g,
                                     const absl::flat_hash_map<std::string, int64_t>& symbols,
                                     int seed, const RandomInputSpec& spec = {});

}  // namespace coil::test_kit

#endif  // COIL_RUNTIME_TESTING_TEST_KIT_H_
