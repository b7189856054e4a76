// A kernel's error record as a Status (see kernel_error.h).
#include "runtime/cuda/kernel_error.h"

#include <string>

#include "absl/strings/str_cat.h"

namespace coil::cuda {

absl::Status KernelErrorStatus(const proto::Schedule& schedule, const CoilCudaError& e) {
  const proto::Kernel* kernel = nullptr;
  for (const proto::Kernel& k : schedule.kernels()) {
    if (k.id() == e.kernel) kernel = &k;
  }
  std::string at = kernel != nullptr ? absl::StrCat("kernel ", kernel->id(), " '", kernel->name(), "'") : absl::StrCat("kernel ", e.kernel);
  const proto::Expr* expr = nullptr;
  if (kernel != nullptr) {
    for (const proto::Loop& l : kernel->loops()) {
      for (const proto::Expr& x : l.body()) {
        if (x.id() == e.expr) expr = &x;
      }
    }
  }
  absl::StrAppend(&at, ": expr ", e.expr,
                  expr != nullptr ? absl::StrCat(" (", proto::Expr::Kind_Name(expr->kind()), ")") : "");
  switch (e.kind) {
    case kCudaIndexOutOfBounds: {
      std::string buf;
      for (const proto::Buffer& b : schedule.buffers()) {
        if (expr != nullptr && b.id() == expr->buffer()) {
          buf = absl::StrCat(" of buffer ", b.id(), " ('", b.name(), "')");
        }
      }
      return absl::OutOfRangeError(absl::StrCat(at, ": index ", e.value, " is out of bounds [0, ",
                                                e.bound, ") for dimension ", e.dim, buf));
    }
    case kCudaIntDivByZero: return absl::InvalidArgumentError(absl::StrCat(at, ": integer division by zero"));
    case kCudaIntRemByZero: return absl::InvalidArgumentError(absl::StrCat(at, ": integer remainder by zero"));
    case kCudaIntFmodByZero: return absl::InvalidArgumentError(absl::StrCat(at, ": integer fmod by zero"));
    case kCudaNegativeIntPow: return absl::InvalidArgumentError(absl::StrCat(at, ": integer to the negative power ", e.value, " is not allowed"));
    default: return absl::InternalError(absl::StrCat(at, ": unknown kernel error kind ", e.kind));
  }
}

}  // namespace coil::cuda
