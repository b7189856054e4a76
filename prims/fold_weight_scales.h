// A scalar scale of a projection's output folded into its constant weights and bias:
//
//   y = matmul(x, W) [+ b]                 W: [K, N] inline constant, b: [N] inline constant
//   q = view...(slice(y, dim = last, s, e))   reshapes / permutes / transposes, each used once
//   z = mul(q, c) | mul(c, q) | div(q, c)  c: a one-element constant of q's floating dtype
// becomes W's and b's columns [s, e) times c (or divided by it) in new constants, and z = q.
//
// vit_b_16's exports scale q (torch 1.13: q / sqrt(d)) or q and K^T (torch 2.11: each times
// sqrt(1 / sqrt(d))) after the head split: each scale was a pointwise kernel writing a permuted
// copy that the next bmm read; folded, the bmm reads the projection's slice in place (the CPU's
// operand views). Conditions: y's producer is used only on its way to y, y is no graph output
// and every use of y is a step-1 slice of the last dim with static bounds, the one slice that
// overlaps [s, e) being this one; the chain's values are no graph outputs. Each element of z
// is the same dot product with the weights rounded once after scaling instead of the sum
// rounded once (exact for a power of 2). Run on an aten graph after functionalize, before
// decomposition. Precondition: the graph verifies; it still does afterwards.
#ifndef COIL_PRIMS_FOLD_WEIGHT_SCALES_H_
#define COIL_PRIMS_FOLD_WEIGHT_SCALES_H_

#include "absl/status/statusor.h"
#include "ir/graph.h"

namespace coil::prims {

// Folds every match; returns how many scales were folded.
absl::StatusOr<int> FoldWeightScales(Graph& graph);

}  // namespace coil::prims

#endif  // COIL_PRIMS_FOLD_WEIGHT_SCALES_H_
