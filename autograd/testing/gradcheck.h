// Test support: gradients of a graph from the joint graph vs. central finite differences,
// both run in float64 on the reference interpreter (runtime/interpreter.h), the oracle.
//
//   GradcheckResult r = Gradcheck(forward, inputs, requires_grad, {.seed = 1});
//   EXPECT_TRUE(r.status.ok()) << r.status;
//   EXPECT_LE(r.max_error, 1e-6) << r.worst;
//
// The checked quantity is the vector-Jacobian product with random tangents: for input x,
// d/dx sum_k <tangent_k, out_k(x)>, one central difference per element of x. The joint graph
// runs twice: as built (aten ops and prims) and after prims::Decompose (prims and externs
// only, as the compile driver runs it); both must match the differences.
#ifndef COIL_AUTOGRAD_TESTING_GRADCHECK_H_
#define COIL_AUTOGRAD_TESTING_GRADCHECK_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ir/attribute.h"
#include "ir/graph.h"
#include "runtime/host_tensor.h"

namespace coil::autograd::testing {

struct GradcheckOptions {
  uint64_t seed = 1;
  double step = 1e-6;
  // |analytic - numeric| <= atol + rtol * |numeric| per element.
  double atol = 1e-6;
  double rtol = 1e-5;
  // Also run the joint graph after prims::Decompose.
  bool decomposed = true;
};

struct GradcheckResult {
  absl::Status status;     // building or running failed
  double max_error = 0;    // worst |analytic - numeric| - rtol * |numeric|, over atol
  std::string worst;       // where that was, with both values
  bool ok(const GradcheckOptions& o) const { return status.ok() && max_error <= o.atol; }
};

// A graph with one node of `op` over inputs of the given types (outputs: every output of the
// node). Symbols found in the types are declared with `min` 2 and no maximum.
absl::StatusOr<Graph> SingleOpGraph(const std::string& op, const std::vector<TensorType>& inputs,
                                    AttrMap attrs);

// Checks the joint graph's input gradients against finite differences at `inputs`.
GradcheckResult Gradcheck(const Graph& forward, const std::vector<HostTensor>& inputs,
                          const std::vector<bool>& requires_grad,
                          const GradcheckOptions& options = {});

// The joint graph's results (forward outputs, then gradients) for `inputs` and `tangents`,
// on the reference interpreter (float64 mode, or each op rounded to its dtype), optionally
// after prims::Decompose.
absl::StatusOr<std::vector<HostTensor>> RunJoint(const Graph& forward,
                                                 const std::vector<HostTensor>& inputs,
                                                 const std::vector<bool>& requires_grad,
                                                 const std::vector<HostTensor>& tangents,
                                                 bool decomposed, bool float64 = true);

}  // namespace coil::autograd::testing

#endif  // COIL_AUTOGRAD_TESTING_GRADCHECK_H_
