// Private to the prims reference kernels (runtime/reference/prims_*kernels.cc): helpers that the
// shape and indexing kernels share.
#ifndef COIL_RUNTIME_REFERENCE_PRIMS_KERNELS_INTERNAL_H_
#define COIL_RUNTIME_REFERENCE_PRIMS_KERNELS_INTERNAL_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "runtime/host_tensor.h"
#include "runtime/reference/kernel_util.h"

namespace coil::prims_kernels {

// The error of a prim's kernel on concrete data or sizes: "<prim>: <what>".
inline absl::Status KernelError(const char* prim, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(prim, ": ", what));
}

// Copies `in` in row-major order into the contiguous `out` (same number of elements).
inline void CopyRowMajor(const HostTensor& in, HostTensor& out) {
  if (in.dtype() == out.dtype() && out.IsContiguous() && in.numel() == out.numel() &&
      !in.SharesStorageWith(out)) {
    in.CopyElementsTo(out.RawData());  // the same bytes: at memory speed
    return;
  }
  int64_t o = 0;
  ForEachIndex(in.shape(), [&](absl::Span<const int64_t> idx) {
    CopyElem(in, in.StorageOffset(idx), out, o++);
  });
}

}  // namespace coil::prims_kernels

#endif  // COIL_RUNTIME_REFERENCE_PRIMS_KERNELS_INTERNAL_H_
