// The CPU runtime's EXTERN kernels (Schedule Kernel.extern_op): library implementations found
// by op name, with the op's reference kernel (runtime/reference/kernel_registry.h) as the
// fallback for every op or case a library does not cover.
//
// Library (chosen by measurement, docs/benchmarks.md "CPU extern library choice"): oneDNN 2.6,
// loaded at run time (dnnl_api.h; OpenMP threads wait passively unless OMP_WAIT_POLICY says
// otherwise).
//   aten.mm / aten.bmm / aten.convolution (forward)
//                     bf16 operands (a bf16 or f32 output; a convolution's bias bf16 or f32):
//                     oneDNN's bf16 matmul / convolution primitives with f32 accumulation
//                     (AVX512-BF16 / AMX kernels, emulated on other AVX-512 CPUs; the
//                     reference kernel where oneDNN has only its reference implementation)
//   aten.mm           f32: dnnl_sgemm; with constant weights a oneDNN matmul whose packed
//                     weights the call site keeps, or, for at most 8 rows on a pool whose
//                     threads the weights' bytes can keep busy, coil's own small-M product
//                     over the pool (internal/gemv.h; also 1x1 convolutions of a 1x1 input)
//   aten.bmm          f32: a batched oneDNN matmul primitive
//   aten.convolution  f32, not transposed, 1-3 spatial dims, any stride / padding / dilation /
//                     groups, optional f32 bias: oneDNN convolution (blocked layouts, reorders;
//                     constant weights reordered once per call site), or, for channels-last
//                     depthwise, small pointwise and few-input-channel ones with constant
//                     weights, coil's own kernels on the executable's pool
//                     (internal/conv_direct.h); transposed: oneDNN deconvolution
//                     (internal/dnnl_deconv.h)
//   aten.convolution_backward_weight
//                     f32, 1-3 spatial dims, any stride / padding / dilation / groups: oneDNN's
//                     convolution backward-weights primitive (internal/dnnl_conv_weight_grad.h)
//   prims.scatter     f32 / f64 / i32 / i64 values: a typed loop (internal/scatter.h)
//   aten.scaled_dot_product_attention
//                     f32, optional f32 / bool mask, causal: one fused online-softmax kernel
//                     on the executable's thread pool (internal/attention.h)
// With a call site's state (ExternArgs::state) primitives are made once per shape, not per
// call. Everything else (other dtypes: f16 / f64 / integers, bf16 outside the ops above, prims.cumsum / cumprod,
// any other op, or no oneDNN on the machine) runs the reference kernel: correct, slow
// (elements go through double).
//
//   ExternTensor a{proto::FLOAT32, {2, 3}, a_bytes}, b{...}, out{...};
//   absl::Status s = RunExtern("aten.mm", {a, b}, out, attrs, /*num_threads=*/2);
#ifndef COIL_RUNTIME_CPU_EXTERNS_H_
#define COIL_RUNTIME_CPU_EXTERNS_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "ir/attribute.h"
#include "ir/dtype.h"

namespace coil::cpu {

class ThreadPool;   // thread_pool.h
struct ThreadTeam;  // thread_pool.h
struct ExternScaledInput;  // below

// One factor of a viewed operand's dim (ExternTensor::view): a size and a stride in elements.
struct ExternFactor {
  int64_t size = 0, stride = 0;
  bool operator==(const ExternFactor& o) const { return size == o.size && stride == o.stride; }
};

// A buffer as an extern sees it: contiguous row-major `shape` of `dtype` at `data`, or, with a
// `view`, a strided view of a buffer (schedule.proto's ExternView, evaluated).
struct ExternTensor {
  DType dtype = proto::DTYPE_UNSPECIFIED;
  std::vector<int64_t> shape;
  char* data = nullptr;
  // A CONSTANT buffer of the schedule: the same bytes at the same address on every call of
  // this call site, so a library may keep a transformed copy (reordered weights) in its state.
  bool constant = false;
  // aten.mm's operands only (runtime/cpu/internal/transposed_operand.h): the bytes at `data`
  // are the row-major [shape[1], shape[0]] transpose of this 2-D tensor. An implementation
  // that does not read it so must decline the call (the executable then copies).
  bool transposed = false;
  // Empty: contiguous. Else one entry per dim of `shape`: the dim split row-major into factors
  // (outer to inner, sizes multiplying to the dim's size; none for size 1), element (j_0, ..)
  // at `data` + sum of its digits times their strides (>= 0, elements; `data` includes the
  // view's offset). Only aten.mm and aten.bmm get views (internal/extern_view.h), and an
  // implementation that cannot read one declines: RunExtern then gathers the view into a
  // contiguous copy and calls again.
  std::vector<std::vector<ExternFactor>> view;
  int64_t numel() const;
};

// What an implementation keeps across the calls of one call site (a Schedule's EXTERN kernel):
// created primitives per shape, constant weights in the library's layout. Each implementation
// derives its own type and replaces a state of another type. The CPU executable keeps one
// slot per EXTERN kernel for its lifetime; runs are serialized, so a slot is never used by two
// threads at once.
class ExternState {
 public:
  virtual ~ExternState() = default;
};
using ExternStateSlot = std::unique_ptr<ExternState>;

// One call: inputs, the output to write, the op's attributes (normalized by its schema, sym
// attributes bound to constants), the threads the library may use, and the call site's state
// slot (nullptr: nothing is kept, e.g. a one-off call).
struct ExternArgs {
  absl::Span<const ExternTensor> inputs;
  const ExternTensor& output;
  const AttrMap& attrs;
  int num_threads = 1;
  ExternStateSlot* state = nullptr;
  // The executable's pool, for an implementation that parallelizes on it (the attention
  // kernel); nullptr: run on the calling thread.
  ThreadPool* pool = nullptr;
  // aten.convolution only: input 0 is given as a scaled activation (ExternScaledInput) that
  // no kernel wrote; set only where ConvolutionTakesScaledInput said yes for this call.
  const ExternScaledInput* scaled_input = nullptr;
};

// A library implementation: true when it ran the call, false to let the reference kernel run
// it (an unsupported dtype or variant); an error for inconsistent shapes.
using ExternImpl = std::function<absl::StatusOr<bool>(const ExternArgs&)>;

// A pointwise epilogue that a library may apply inside the op (oneDNN post-ops) instead of
// the schedule's generated epilogue: steps applied in order to each element of the op's
// result, with the result of the last step stored in ExternArgs::output (then the epilogue's
// destination, not the op's own result buffer). executable.cc finds them in the schedule
// (internal/extern_epilogue.h).
struct ExternEpilogueStep {
  enum Kind {
    kAdd,        // v + other[same index] (a residual; `other` has the output's shape; it may be
                 // the output itself, written in place: the residual is already there)
    kRelu,       // max(v, 0)
    kClip,       // min(max(v, lo), hi)
    kHardswish,  // v * min(max(v / 6 + 1/2, 0), 1)
    // aten.mm only (extern_epilogue.h): a bias, first if at all; `other` is [n], added to
    // each row of the [m, n] result (oneDNN's matmul bias argument).
    kBias,
    kGeluErf,   // v / 2 * (1 + erf(v / sqrt(2)))
    kGeluTanh,  // v / 2 * (1 + tanh(sqrt(2 / pi) * (v + 0.044715 v^3)))
  };
  Kind kind = kRelu;
  float lo = 0, hi = 0;                 // kClip
  const ExternTensor* other = nullptr;  // kAdd, kBias
};

// A channels-last activation scaled per image and channel before a 1x1 convolution reads it:
// input 0 is y[n, h, w, c] = steps(x[n, h, w, c]) * g(scale[n, c]), with g the identity or
// hardsigmoid, min(max(v / 6 + 1/2, 0), 1): a squeeze-excitation block's multiply (and the
// activation before it) that executable.cc reads out of the generated kernel computing y
// (internal/extern_epilogue.h, MatchScaledInput) and skips; the convolution's kernel scales
// the rows it reads instead of a pass writing y and one reading it back.
struct ExternScaledInput {
  ExternTensor x;                          // f32, input 0's shape, read in its place
  std::vector<ExternEpilogueStep> steps;   // kRelu, kClip, kHardswish, in order
  ExternTensor scale;                      // f32, N * C elements, [n][c]
  bool hardsigmoid = false;                // g
};

// Whether aten.convolution `args` (without a scaled input) would run a kernel that reads a
// scaled input: conv_direct.h's pointwise kernel, f32, channels-last, constant weights, on a
// pool, where the default rule (or COIL_CONV_DIRECT=1) takes it. Calls with a scaled input that
// it does not take are errors (Internal).
bool ConvolutionTakesScaledInput(const ExternArgs& args);

// An implementation that applies `epilogue` itself: true when it ran the op and the
// epilogue into args.output, false when it did nothing (the caller then runs the op and the
// generated epilogue); an error for inconsistent shapes.
using FusedExternImpl = std::function<absl::StatusOr<bool>(
    const ExternArgs&, absl::Span<const ExternEpilogueStep> epilogue)>;

// Library implementations by op name.
class ExternRegistry {
 public:
  // aten.mm, aten.bmm and aten.convolution through oneDNN.
  static const ExternRegistry& Default();
  void Register(absl::string_view op, ExternImpl impl);
  const ExternImpl* Find(absl::string_view op) const;
  // aten.convolution and aten.mm with oneDNN post-ops.
  void RegisterFused(absl::string_view op, FusedExternImpl impl);
  const FusedExternImpl* FindFused(absl::string_view op) const;

 private:
  absl::flat_hash_map<std::string, ExternImpl> impls_;
  absl::flat_hash_map<std::string, FusedExternImpl> fused_;
};

// Registers aten.mm / aten.bmm / aten.convolution through oneDNN (dnnl_externs.cc); they
// decline (reference kernels run) when oneDNN cannot be loaded.
void RegisterDnnlExterns(ExternRegistry& registry);

// The thread team the externs' library runs on, for an executable's pool to share
// (libgomp's, under COIL_CPU_POOL=omp: dnnl_api.h); nullptr: the pool keeps its own threads.
const ThreadTeam* ExternThreadTeam();

// Runs `op`: the Default() implementation if it takes the call, else the reference kernel.
// Viewed inputs (ExternTensor::view) reach only implementations that read views (aten.mm,
// aten.bmm); otherwise, or when they decline, contiguous copies of them.
// Errors (InvalidArgument unless said otherwise): shapes that do not match the op's meta
// function, no reference kernel (Unimplemented), the reference kernel's own errors.
absl::Status RunExtern(absl::string_view op, const ExternArgs& args);

// `op` with `epilogue` applied inside it by the Default() implementation: true when it did,
// false when no implementation takes it (nothing ran: run RunExtern and the generated
// epilogue instead).
absl::StatusOr<bool> RunExternFused(absl::string_view op, const ExternArgs& args,
                                    absl::Span<const ExternEpilogueStep> epilogue);

// The reference kernel alone (inputs copied into HostTensors; the result copied to `output`
// after its type is checked against the op's meta function).
absl::Status RunReferenceExtern(absl::string_view op, const ExternArgs& args);

}  // namespace coil::cpu

#endif  // COIL_RUNTIME_CPU_EXTERNS_H_
