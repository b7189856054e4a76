// Version counters of tensor storage for the autograd tape's saved-tensor checks. Internal to
// capture/.
//
// As in PyTorch, every in-place op run eagerly (aten.add_, copy_, ... under grad mode or
// coil::no_grad alike) bumps the version of the storage it wrote, which a tensor shares with
// all its views. An eager tape node records the versions of the inputs it saves; its backward
// refuses to run when one changed since ("one of the variables needed for gradient computation
// has been modified by an inplace operation"), naming the op, the input and the in-place op
// that changed it, instead of computing a gradient from the modified values.
//
//   SavedVersion v = SavedVersion::Of(x.impl()->data());   // when the node is recorded
//   absl::Status s = v.Check(x_saved, "aten.mul", 1, "file.cc:12");  // before its backward
//
// Versions are kept per storage address, only for storages that were ever written in place
// (others are at version 0), so ops that never write in place cost one lookup.
#ifndef COIL_CAPTURE_INTERNAL_SAVED_VERSION_H_
#define COIL_CAPTURE_INTERNAL_SAVED_VERSION_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "runtime/host_tensor.h"

namespace coil::capture_internal {

// Records that `op` (called at `location`) wrote `t`'s storage in place.
void BumpStorageVersion(const HostTensor& t, absl::string_view op, absl::string_view location);

// A saved tensor's storage version at the time it was saved.
struct SavedVersion {
  uint64_t version = 0;

  static SavedVersion Of(const HostTensor& t);
  // OK while `t`'s storage is still at `version`; else FailedPrecondition naming input `input`
  // of `op` (recorded at `location`) and the in-place op that last wrote the storage.
  absl::Status Check(const HostTensor& t, absl::string_view op, int input,
                     absl::string_view location) const;
};

}  // namespace coil::capture_internal

#endif  // COIL_CAPTURE_INTERNAL_SAVED_VERSION_H_
