// f32 and bf16 aten.mm and aten.bmm through oneDNN (dnnl_externs.cc registers them). f32
// aten.mm with constant weights runs a matmul primitive whose weights oneDNN packs once per call
// site, or for at most 8 rows the small-M product over the executable's pool (gemv.h: UseGemv
// decides); otherwise a plain sgemm. aten.bmm runs a batched matmul primitive. bf16 operands
// (--precision bf16; a bf16 or f32 output) always run a matmul primitive (f32 accumulation;
// constant weights packed once per site; transposed operands as transposed layouts), on
// AVX512-BF16 / AMX where the CPU has them, emulated on other AVX-512 CPUs. Other dtypes, no
// oneDNN, or only oneDNN's reference implementation (bf16 before AVX-512): false (the
// reference kernel runs).
// Not an API: used by dnnl_externs.cc.
#ifndef COIL_RUNTIME_CPU_INTERNAL_DNNL_MATMUL_H_
#define COIL_RUNTIME_CPU_INTERNAL_DNNL_MATMUL_H_

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "runtime/cpu/externs.h"

namespace coil::cpu::dnnl_internal {

// x[m, k] @ y[k, n]. InvalidArgument for shapes that do not multiply into the output.
absl::StatusOr<bool> Mm(const ExternArgs& a);

// x[m, k] @ y[k, n] with `epilogue` applied inside oneDNN's matmul (a leading kBias as its
// bias argument, the other steps as post-ops: eltwise relu / clip / hardswish / gelu_erf /
// gelu_tanh, binary add), into a.output: f32, constant weights (packed once per site, as Mm's),
// x row-major (a view that is a reshape will do); false (nothing ran) otherwise or when oneDNN
// has only its reference implementation for the post-ops.
absl::StatusOr<bool> MmWithEpilogue(const ExternArgs& a,
                                    absl::Span<const ExternEpilogueStep> epilogue);

// x[b, m, k] @ y[b, k, n]. InvalidArgument for shapes that do not multiply into the output.
absl::StatusOr<bool> Bmm(const ExternArgs& a);

// The same with an operand read through its view (ExternTensor::view;
// dnnl_matmul_strided.cc): f32 (bmm: also bf16); false when the strides do not fit
// (RunExtern gathers).
absl::StatusOr<bool> MmViewed(const ExternArgs& a);
absl::StatusOr<bool> BmmViewed(const ExternArgs& a);

}  // namespace coil::cpu::dnnl_internal

#endif  // COIL_RUNTIME_CPU_INTERNAL_DNNL_MATMUL_H_
