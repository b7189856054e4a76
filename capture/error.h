// coil::Error: what the eager API and compiled functions throw on bad input.
//
// Tensor code is written with operators and chained calls, which cannot return absl::Status, so
// capture/ reports user errors (a shape mismatch, a graph break under fullgraph, a wrong
// argument) by throwing coil::Error, which carries the absl::Status (what and where). Compiled
// functions also offer a Status-returning call (CompiledFunction::Call). Internal invariants are
// still COIL_CHECKs.
#ifndef COIL_CAPTURE_ERROR_H_
#define COIL_CAPTURE_ERROR_H_

#include <stdexcept>
#include <string>

#include "absl/status/status.h"

namespace coil {

class Error : public std::runtime_error {
 public:
  explicit Error(absl::Status status)
      : std::runtime_error(std::string(status.message())), status_(std::move(status)) {}
  const absl::Status& status() const { return status_; }

 private:
  absl::Status status_;
};

}  // namespace coil

#endif  // COIL_CAPTURE_ERROR_H_
