// CoilKernelError -> absl::Status, with the reference kernels' wording.
#include "runtime/cpu/kernel_error.h"

#include <string>

#include "absl/strings/str_cat.h"

namespace coil::cpu {

absl::Status KernelErrorStatus(const CoilKernelError& e, absl::string_view where) {
  if (e.failed == 0) return absl::OkStatus();
  const std::string what = e.what != nullptr ? absl::StrCat(" (", e.what, ")") : "";
  switch (e.kind) {
    case COIL_KERNEL_INDEX_OUT_OF_BOUNDS:
    case COIL_KERNEL_WRAPPED_INDEX_OUT_OF_BOUNDS: {
      // A wrapped index below 0 was below -bound before the op added bound to it.
      const bool wrapped = e.kind == COIL_KERNEL_WRAPPED_INDEX_OUT_OF_BOUNDS && e.value < 0;
      const int64_t given = wrapped ? static_cast<int64_t>(static_cast<uint64_t>(e.value) -
                                                           static_cast<uint64_t>(e.bound))
                                    : e.value;
      return absl::OutOfRangeError(absl::StrCat(where, ": index ", given,
                                                " is out of bounds for dimension ", e.dim,
                                                " with size ", e.bound, what));
    }
    // The reference interpreter's message for all three (binary_kernels.cc); `what` names the
    // prim.
    case COIL_KERNEL_INT_DIV_BY_ZERO:
    case COIL_KERNEL_INT_REM_BY_ZERO:
    case COIL_KERNEL_INT_FMOD_BY_ZERO:
      return absl::InvalidArgumentError(absl::StrCat(where, ": integer division by zero", what));
    // As torch ("Integers to negative integer powers are not allowed") and the reference.
    case COIL_KERNEL_INT_NEGATIVE_POWER:
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": an integer to a negative power is not allowed", what));
    default:
      return absl::InternalError(absl::StrCat(where, ": the kernel reported error kind ", e.kind,
                                              what, " (coil bug: unknown kind)"));
  }
}

}  // namespace coil::cpu
