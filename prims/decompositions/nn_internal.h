// Internal to the nn decomposition family (prims/decompositions/nn*.cc): the registration
// entry points of the family's other files and helpers they share.
//
//   // in nn.cc
//   nn_internal::RegisterPoolDecompositions(r);
#ifndef COIL_PRIMS_DECOMPOSITIONS_NN_INTERNAL_H_
#define COIL_PRIMS_DECOMPOSITIONS_NN_INTERNAL_H_

#include "prims/decomposition_registry.h"
#include "prims/emitter.h"

namespace coil::prims::nn_internal {

// max/avg pooling and the adaptive pools (nn_pool.cc).
void RegisterPoolDecompositions(DecompositionRegistry& r);
// scaled_dot_product_attention (nn_attention.cc).
void RegisterAttentionDecompositions(DecompositionRegistry& r);
// upsample_nearest2d, upsample_bilinear2d, pixel_shuffle, pixel_unshuffle (nn_upsample.cc).
void RegisterUpsampleDecompositions(DecompositionRegistry& r);

// torch.matmul of a and b (operands of one dtype) whose result has shape `out`: 1-D operands
// become a row / column, batch dims broadcast; emits aten.mm or aten.bmm.
Val Matmul(Val a, Val b, const SymList& out);

// A rank-0 int64 tensor holding a size.
Val Int64Of(Emitter& e, const SymExpr& v);

// x with a different but equal-valued spelling of its shape (symbolic sizes that the
// simplifier writes two ways); x itself when the shapes already match.
Val AsShape(Val x, const SymList& shape);

}  // namespace coil::prims::nn_internal

#endif  // COIL_PRIMS_DECOMPOSITIONS_NN_INTERNAL_H_
