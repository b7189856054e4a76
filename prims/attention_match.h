// Finds attention spelled out in aten ops, as ONNX exports of transformers give it, and
// rewrites it into one aten.scaled_dot_product_attention, for a backend that keeps that op
// whole (DecomposeOptions::keep; the CPU backend's fused attention extern):
//
//   s = matmul(q, kt)            kt: [..., E, S] (K transposed; a transpose of it is made)
//   s = div(s, c) | mul(s, c)    c: a one-element f32 constant (scale 1 / c or c); or q
//                                and / or kt so scaled before the product (vit's export)
//   s = where(cond, -inf, s)     optional (masked_fill): is_causal when cond is a constant
//                                [L, L] true exactly above the diagonal, else the bool mask
//                                logical_not(cond)
//   o = matmul(softmax(s, dim = last), v)
//
// q, kt, v f32 of the same rank >= 3; every intermediate used once and not a graph output.
// Anything else is left alone. Precondition: the graph verifies; it still does afterwards.
#ifndef COIL_PRIMS_ATTENTION_MATCH_H_
#define COIL_PRIMS_ATTENTION_MATCH_H_

#include "ir/graph.h"

namespace coil::prims {

// Rewrites every match; returns how many.
int MatchAttention(Graph& graph);

}  // namespace coil::prims

#endif  // COIL_PRIMS_ATTENTION_MATCH_H_
