// Runs one torch oracle case through coil: builds a one-node graph with GraphBuilder (so the
// op's meta function must reproduce torch's output dtypes and shapes), executes it with the
// reference interpreter, and compares every element with torch's result.
#ifndef COIL_TESTS_TORCH_ORACLE_ORACLE_RUNNER_H_
#define COIL_TESTS_TORCH_ORACLE_ORACLE_RUNNER_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tests/torch_oracle/oracle.pb.h"

namespace coil::oracle {

struct RunOptions {
  // Input dimensions >= 2 become symbols (one per distinct size), so the meta function runs
  // on symbolic shapes and the interpreter binds them at run time.
  bool symbolic = false;
  // Decompose the one-node graph into prims (prims::Decompose) before interpreting it, so the
  // op's decomposition is checked against torch. Tolerances are 4x the case's: the prims
  // round to the working dtype after every step where torch's fused kernel rounds once.
  bool decompose = false;
};

absl::Status RunCase(const Case& c, const RunOptions& options);

absl::StatusOr<Suite> LoadSuite(const std::string& path);

}  // namespace coil::oracle

#endif  // COIL_TESTS_TORCH_ORACLE_ORACLE_RUNNER_H_
