// aten.scaled_dot_product_attention as a native CPU extern (externs.cc registers it): one
// fused, blocked online-softmax kernel (flash-attention style) instead of QK^T, mask, softmax
// and a second matmul through memory. Each task takes a block of query rows of one (batch,
// head) and walks the keys in tiles: scores of the block against a tile (K's tile packed
// transposed so the inner loops run over keys and are vectorizable), a running row max and
// sum, the output rows rescaled when the max grows; no [seq, seq] score buffer exists.
// Tasks (batch x heads x query blocks) run on the executable's thread pool.
//
// f32 q / k / v / output, an optional f32 (additive) or bool mask, is_causal, scale (0: 1 /
// sqrt(E)); batch dims of every input broadcast against the output's. Numerics: f32 dot
// products and sums (the reference works in double); a row whose scores are all -inf (fully
// masked) is NaN, as the reference and PyTorch give. dropout_p != 0 and other dtypes decline
// (false) so that the reference kernel runs or reports the error.
// Not an API: used by externs.cc.
#ifndef COIL_RUNTIME_CPU_INTERNAL_ATTENTION_H_
#define COIL_RUNTIME_CPU_INTERNAL_ATTENTION_H_

#include "absl/status/statusor.h"
#include "runtime/cpu/externs.h"

namespace coil::cpu::internal {

// inputs q [..., L, E], k [..., S, E], v [..., S, Ev], mask? [..., L, S]; output [..., L, Ev].
absl::StatusOr<bool> Attention(const ExternArgs& a);

}  // namespace coil::cpu::internal

#endif  // COIL_RUNTIME_CPU_INTERNAL_ATTENTION_H_
