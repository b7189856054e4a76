// f32 aten.mm and aten.bmm through oneDNN (dnnl_externs.cc registers them). aten.mm with
// constant weights runs a matmul primitive whose weights oneDNN packs once per call site, or
// for at most 8 rows the small-M product over the executable's pool (gemv.h: UseGemv decides);
// otherwise a plain sgemm. aten.bmm runs a batched matmul primitive. Unsupported dtypes or no
// oneDNN: false (the reference kernel runs).
// Not an API: used by dnnl_externs.cc.
#ifndef COIL_RUNTIME_CPU_INTERNAL_DNNL_MATMUL_H_
#define COIL_RUNTIME_CPU_INTERNAL_DNNL_MATMUL_H_

#include "absl/status/statusor.h"
#include "runtime/cpu/externs.h"

namespace coil::cpu::dnnl_internal {

// x[m, k] @ y[k, n]. InvalidArgument for shapes that do not multiply into the output.
absl::StatusOr<bool> Mm(const ExternArgs& a);

// x[b, m, k] @ y[b, k, n]. InvalidArgument for shapes that do not multiply into the output.
absl::StatusOr<bool> Bmm(const ExternArgs& a);

}  // namespace coil::cpu::dnnl_internal

#endif  // COIL_RUNTIME_CPU_INTERNAL_DNNL_MATMUL_H_
