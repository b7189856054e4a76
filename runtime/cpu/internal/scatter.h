// prims.scatter as a native CPU extern (externs.cc registers it): the input copied to the
// output, then each src element written (reduce "none") or added (reduce "add") at its index,
// in row-major order of the index, as the reference kernel does, but on the typed buffers
// instead of through double. Training graphs meet it often: aten.slice_scatter and
// aten.select_scatter decompose into it (prims/decompositions/view_scatter.cc), and max
// pooling's backward places the gradient of every kernel offset with slice_scatter
// (autograd/rules/pool.cc), so resnet18's backward spent ~100 ms per step in the reference
// kernel. f32 / f64 / i32 / i64 values with i64 or i32 indices; anything else, and any index
// out of range, declines (false) so that the reference kernel runs or reports the error.
// Not an API: used by externs.cc.
#ifndef COIL_RUNTIME_CPU_INTERNAL_SCATTER_H_
#define COIL_RUNTIME_CPU_INTERNAL_SCATTER_H_

#include "absl/status/statusor.h"
#include "runtime/cpu/externs.h"

namespace coil::cpu::internal {

// inputs x, index, src; attributes dim, reduce ("none" or "add").
absl::StatusOr<bool> Scatter(const ExternArgs& a);

}  // namespace coil::cpu::internal

#endif  // COIL_RUNTIME_CPU_INTERNAL_SCATTER_H_
