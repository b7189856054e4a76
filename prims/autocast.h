// Autocast: runs an f32 model's matrix products in bf16 and its reductions and norms in f32,
// as torch.autocast(device_type="cuda", dtype=torch.bfloat16) does (`--precision bf16`).
//
//   absl::StatusOr<Precision> p = ParsePrecision("bf16");
//   absl::StatusOr<bool> changed = Autocast(graph, *p);   // aten graph, functional
//
// The policy is torch's CUDA autocast op lists (aten/src/ATen/autocast_mode.cpp), on coil's
// aten ops (docs/prims.md, "Autocast"):
//   bf16    mm, bmm, matmul, linear, addmm, baddbmm, mv, convolution (conv1d/2d/3d,
//           conv_transpose1d/2d/3d), scaled_dot_product_attention: every f32/f16
//           input cast to bf16, output bf16;
//   f32     exp, expm1, log, log10, log2, log1p, pow, reciprocal, rsqrt, acos, asin, cosh,
//           sinh, tan, softplus, layer_norm, group_norm, logsumexp, norm, and (coil's choice:
//           norms accumulate in f32) batch_norm, instance_norm, rms_norm: bf16/f16 inputs
//           cast to f32, output f32;
//   f32 when no dtype is given: softmax, log_softmax, sum, prod, cumsum, cumprod (a bf16
//           input is cast to f32; torch sets dtype=float32);
//   widest  addcdiv, addcmul, atan2, dot, index_put, scatter_add, cat, stack: floating inputs
//           cast to the widest floating type among them;
//   others  follow their inputs by torch's type promotion, except that a floating constant
//           (a weight, or a value computed from constants only) beside bf16 activations that
//           were f32 in the model is cast to bf16 with them: an ONNX export spells linear's
//           bias or a scale as a separate f32 constant, which torch's own op would have
//           applied in bf16. An op that refuses the new types (prims.copy_to's write-back,
//           dtype-strict ops) gets its inputs cast back to the model's types.
// f64 values are never cast (torch's autocast leaves double alone). Graph inputs keep their
// types; an output whose type changed is cast back to the model's type. Constants are cast
// once, here, at compile time (an inline f32 constant becomes a bf16 constant, a view of one
// (a transposed initializer) is made again of the converted constant; others get an
// aten.to_dtype that inductor's constant folding evaluates), and each value is cast at most
// once per type. The pass is idempotent: a second run changes nothing.
#ifndef COIL_PRIMS_AUTOCAST_H_
#define COIL_PRIMS_AUTOCAST_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "ir/graph.h"

namespace coil::prims {

enum class Precision {
  kF32,   // the model's own types (the default; no pass runs)
  kBF16,  // autocast to bf16 (above)
};

// "f32" or "bf16"; anything else is InvalidArgument naming the value and the choices.
absl::StatusOr<Precision> ParsePrecision(absl::string_view name);
std::string PrecisionName(Precision p);

// The types autocast gives the inputs of a call to `op` with these input types and
// attributes: the bf16, f32 and widest lists above; an op that follows its inputs keeps them
// here (what it gets depends on the graph around it), as does every op under kF32. For a
// caller that judges a call before the pass has run (prims' attention match under autocast).
std::vector<TensorType> AutocastInputTypes(absl::string_view op,
                                           absl::Span<const TensorType> inputs,
                                           const AttrMap& attrs, Precision precision);

// Every op the policy names (the rest follow their inputs), for tests.
std::vector<std::string> AutocastPolicyOps();

// Rewrites `graph` (aten ops, functional: after Functionalize) for `precision`; returns
// whether anything changed (kF32: never). Errors: an op whose types cannot be inferred even
// with its model's types (Internal, naming the node; the input verified, so a coil bug).
absl::StatusOr<bool> Autocast(Graph& graph, Precision precision);

}  // namespace coil::prims

#endif  // COIL_PRIMS_AUTOCAST_H_
