// Whether the CUDA runtime runs an EXTERN aten.scaled_dot_product_attention kernel with its
// fused kernel (kernel_abi.h's AttentionSymbol; the source is codegen_cuda's), and with which
// buffers and parameters. A pure function of the Schedule (no GPU): CI tests it. The same rule
// decides, before decomposition, which attention the CUDA backend keeps whole
// (AttentionUnsupported), so that what it keeps runs fused and the rest is decomposed into
// bmm + softmax + bmm as before.
//
// Runs fused: q, k, v and the output of one dtype among f32, f16, bf16, of equal rank >= 3
// with equal batch dims (the extern's buffers are dense), a static head dim E of 64 or 128
// for q, k and v alike, no dropout (dropout_p = 0 or train = false), an optional mask of rank
// <= the output's that is bool or of the query's dtype.
//
//   std::optional<AttentionPlan> p = PlanAttention(schedule, kernel);   // nullopt: not SDPA
#ifndef COIL_RUNTIME_CUDA_ATTENTION_PLAN_H_
#define COIL_RUNTIME_CUDA_ATTENTION_PLAN_H_

#include <cstdint>
#include <optional>
#include <string>

#include "ir/proto/schedule.pb.h"

namespace coil::cuda {

inline constexpr char kAttentionOp[] = "aten.scaled_dot_product_attention";

struct AttentionPlan {
  int q = 0, k = 0, v = 0, mask = 0, out = 0;  // buffers (mask 0: none)
  proto::DType dtype = proto::DTYPE_UNSPECIFIED;
  proto::DType mask_dtype = proto::DTYPE_UNSPECIFIED;
  int64_t head_dim = 0;
  bool causal = false;
  double scale = 0;  // resolved: the attribute, or 1 / sqrt(E) for 0
  // Why the fused kernel cannot run it ("" when it can): the host runs it then.
  std::string unsupported;
};

// The description of one attention call the rule needs. head_dim / v_head_dim: -1 when
// symbolic; mask_dtype DTYPE_UNSPECIFIED without a mask.
struct AttentionShape {
  proto::DType dtype = proto::DTYPE_UNSPECIFIED;  // of q; k and v must equal it
  bool same_dtypes = true;
  int rank = 0;                // of the output; q, k and v must have it too
  bool same_ranks = true;
  bool same_batch_dims = true;  // q, k, v (and the output) over dims [0, rank - 2)
  int64_t head_dim = -1, k_head_dim = -1, v_head_dim = -1;
  proto::DType mask_dtype = proto::DTYPE_UNSPECIFIED;
  int mask_rank = 0;
  double dropout_p = 0;
  bool train = true;
};

// "" when the fused kernel runs it, else why not.
std::string AttentionUnsupported(const AttentionShape& shape);

// The plan for `kernel`; nullopt when it is not an EXTERN aten.scaled_dot_product_attention.
std::optional<AttentionPlan> PlanAttention(const proto::Schedule& schedule,
                                           const proto::Kernel& kernel);

// "f32", "f16", "bf16" (kernel_abi.h's AttentionSymbol); "" for other dtypes.
std::string AttentionDTypeName(proto::DType dtype);

// Which entry point runs `plan` (kernel_abi.h's AttentionSymbol(dtype, head_dim, masked)): the
// masked one for f32 and for calls with a mask; f16 / bf16 calls without a mask get the one
// built without the mask code. codegen_cuda emits exactly the entry points its plans name, in
// the module's last image; the runtime asks that image for them.
inline bool AttentionEntryMasked(const AttentionPlan& plan) {
  return plan.mask != 0 || plan.dtype == proto::FLOAT32;
}

}  // namespace coil::cuda

#endif  // COIL_RUNTIME_CUDA_ATTENTION_PLAN_H_
