// Finds attention spelled out in aten ops, as ONNX exports of transformers give it, and
// rewrites it into one aten.scaled_dot_product_attention, for a backend that keeps that op
// whole (DecomposeOptions::keep; the CPU backend's fused attention extern):
//
//   s = matmul(q, kt)            kt: [..., E, S] (K transposed; a transpose of it is made)
//   s = div(s, c) | mul(s, c)    c: a one-element f32 constant (scale 1 / c or c); or q
//                                and / or kt so scaled before the product (vit's export)
//   s = where(cond, -inf, s)     optional (masked_fill): is_causal when cond is a bool
//                                [L, L] true exactly above the diagonal, a constant or
//                                computed from constants only (a causal buffer sliced to the
//                                sequence; `evaluate` computes it), else the bool mask
//                                logical_not(cond)
//   o = matmul(softmax(s, dim = last), v)
//
// q, kt, v of one floating dtype among f32, f16 and bf16 (the softmax in it too), of the same
// rank >= 3; every intermediate used once and not a graph output. Anything else is left alone,
// as is a match `keep` (when given) refuses: keep(inputs of the op it would build: q, k, v[,
// mask], its attributes). Precondition: the graph verifies; it still does afterwards.
#ifndef COIL_PRIMS_ATTENTION_MATCH_H_
#define COIL_PRIMS_ATTENTION_MATCH_H_

#include <functional>

#include "absl/types/span.h"
#include "ir/constant_evaluator.h"
#include "ir/graph.h"

namespace coil::prims {

// Whether a backend keeps an aten.scaled_dot_product_attention with these input types and
// attributes whole (its fused kernel runs it); null: every one.
using AttentionFilter =
    std::function<bool(absl::Span<const TensorType> inputs, const AttrMap& attrs)>;

// Rewrites every match; returns how many. `evaluate` (may be null: then only a constant
// condition is recognized as causal) computes a condition that no graph input reaches.
int MatchAttention(Graph& graph, const AttentionFilter& keep = nullptr,
                   const ConstantEvaluator& evaluate = nullptr);

}  // namespace coil::prims

#endif  // COIL_PRIMS_ATTENTION_MATCH_H_
