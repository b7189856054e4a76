// f32 aten.mm / aten.bmm / aten.convolution (plain and transposed) /
// aten.convolution_backward_weight, and bf16 aten.mm / aten.bmm / forward aten.convolution
// (--precision bf16: internal/dnnl_matmul.h, internal/dnnl_conv.h), through oneDNN 2.6 (the library chosen by
// measurement: docs/benchmarks.md), loaded at run time (runtime/cpu/dnnl_api.h). Unsupported
// dtypes and variants, or no oneDNN on the machine, return false, so the reference kernel
// runs them. Its threads are OpenMP's, set per call from ExternArgs::num_threads (one thread
// for small calls, a few for small memory-bound ones: dnnl_plans.h's ThreadsFor). Products of
// at most 8 rows against constant weights (classifier GEMVs at batch 1, squeeze-excitation 1x1
// convolutions) run coil's own kernel on the executable's pool instead (internal/gemv.h).
//
// With a call site's state slot (ExternArgs::state), each op keeps a plan per distinct call
// (shapes, attributes, thread count; at most kMaxPlans, least recently used dropped: a
// symbolic batch gets one plan per batch size in use): the primitive, its reorders and memory
// objects, so a call only sets data pointers and executes. CONSTANT weights
// (ExternTensor::constant) are reordered into the primitive's layout once per site and kept;
// other weights, and blocked copies of activations, go through per-thread scratch buffers that
// grow and are reused. A convolution plan measures, on its first call, oneDNN's blocked
// activation layouts (with reorders) against the plain layout and keeps the faster.
#include "ir/attribute.h"
#include "runtime/cpu/dnnl_api.h"
#include "runtime/cpu/externs.h"
#include "runtime/cpu/internal/dnnl_conv.h"
#include "runtime/cpu/internal/dnnl_conv_weight_grad.h"
#include "runtime/cpu/internal/dnnl_deconv.h"
#include "runtime/cpu/internal/dnnl_matmul.h"

namespace coil::cpu {

const ThreadTeam* ExternThreadTeam() { return OpenMpTeam(); }

// The shared plumbing (plans, operands, weights, scratch) is internal/dnnl_plans.h; the ops are
// internal/dnnl_matmul.h and internal/dnnl_conv.h.
void RegisterDnnlExterns(ExternRegistry& registry) {
  registry.Register("aten.mm", dnnl_internal::Mm);
  registry.Register("aten.bmm", dnnl_internal::Bmm);
  // Transposed convolutions (the input gradient of a plain one) are oneDNN deconvolutions.
  registry.Register("aten.convolution", [](const ExternArgs& a) -> absl::StatusOr<bool> {
    absl::StatusOr<bool> transposed = GetBool(a.attrs, "transposed");
    if (transposed.ok() && *transposed) return dnnl_internal::TransposedConvolution(a);
    return dnnl_internal::Convolution(a);
  });
  registry.RegisterFused("aten.convolution", dnnl_internal::ConvolutionWithEpilogue);
  registry.RegisterFused("aten.mm", dnnl_internal::MmWithEpilogue);
  // A convolution's weight gradient (training): oneDNN's backward-weights primitive.
  registry.Register("aten.convolution_backward_weight", dnnl_internal::ConvolutionWeightGrad);
}

}  // namespace coil::cpu
