// Registration entry points, one per family file in autograd/rules/.
// DerivativeRegistry::Global() calls each once.
#ifndef COIL_AUTOGRAD_RULES_REGISTER_H_
#define COIL_AUTOGRAD_RULES_REGISTER_H_

namespace coil::autograd {

class DerivativeRegistry;

// Unary math and activations (ir/ops/elementwise_ops.cc).
void RegisterElementwiseRules(DerivativeRegistry& r);    // elementwise.cc
// Binary and ternary math, where, masked_fill; comparisons and logical ops (not differentiable).
void RegisterBinaryRules(DerivativeRegistry& r);         // binary.cc
// Reductions, scans, softmax/log_softmax, normalizations.
void RegisterReductionRules(DerivativeRegistry& r);      // reduction.cc
// Views, reshapes, concatenation, padding, indexing.
void RegisterShapeRules(DerivativeRegistry& r);          // shape.cc, indexing.cc
// Matmul family, embedding, dropout, creation ops and the other nn ops.
void RegisterNnRules(DerivativeRegistry& r);             // nn.cc
// convolution and the conv{1,2,3}d wrappers.
void RegisterConvRules(DerivativeRegistry& r);           // conv.cc
// max_pool / avg_pool (1-3d).
void RegisterPoolRules(DerivativeRegistry& r);           // pool.cc
// scaled_dot_product_attention.
void RegisterAttentionRules(DerivativeRegistry& r);      // attention.cc
// upsample_nearest2d.
void RegisterUpsampleRules(DerivativeRegistry& r);       // upsample.cc
// Ops that never carry gradients (creation, comparisons, index results, in-place, prims).
void RegisterNotDifferentiable(DerivativeRegistry& r);   // not_differentiable.cc

}  // namespace coil::autograd

#endif  // COIL_AUTOGRAD_RULES_REGISTER_H_
