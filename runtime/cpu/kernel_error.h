// The Status of a data error that a generated kernel reported through its CoilKernelError
// record (runtime/cpu/kernel_abi.h): an index out of bounds, an integer division by zero.
//
//   CoilKernelError err{};
//   fn(0, n, buffers, symbols, &err);
//   if (err.failed != 0) return KernelErrorStatus(err, "kernel 3 'k3_gather'");
//
// The messages match the reference kernels' (runtime/reference/indexing_kernels.cc,
// binary_kernels.cc) after the kernel's name: "kernel 3 'k3_gather': index 4 is out of bounds for
// dimension 0 with size 4 (expr 2 (LOAD) of buffer 2 ('table'))" (OutOfRange), "kernel 5
// 'k5_div': integer division by zero (expr 4 (prims.div))" (InvalidArgument).
#ifndef COIL_RUNTIME_CPU_KERNEL_ERROR_H_
#define COIL_RUNTIME_CPU_KERNEL_ERROR_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "runtime/cpu/kernel_abi.h"

namespace coil::cpu {

// The error `e` reports (OK when e.failed == 0), prefixed with `where` (the kernel).
absl::Status KernelErrorStatus(const CoilKernelError& e, absl::string_view where);

}  // namespace coil::cpu

#endif  // COIL_RUNTIME_CPU_KERNEL_ERROR_H_
