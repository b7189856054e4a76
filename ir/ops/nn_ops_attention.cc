// Schema and meta function of aten.scaled_dot_product_attention.
#include <vector>

#include "ir/op_registry.h"
#include "ir/ops/meta_util.h"
#include "ir/ops/nn_ops_internal.h"
#include "ir/shape_assumption.h"

namespace coil::nn_internal {
namespace {

// q [..., L, E], k [..., S, E], v [..., S, Ev], mask broadcastable to [..., L, S];
// batch dimensions broadcast (PyTorch's math implementation uses matmul).
absl::StatusOr<std::vector<TensorType>> SdpaMeta(absl::Span<const TensorType> in,
                                                 const AttrMap& attrs) {
  const TensorType& q = in[0];
  const TensorType& k = in[1];
  const TensorType& v = in[2];
  for (const TensorType* t : {&q, &k, &v}) {
    if (t->rank() < 2) return meta::Error("query, key and value must be at least 2-D, got ", Describe(*t));
    if (t->dtype != q.dtype || !IsFloating(t->dtype)) {
      return meta::Error("query, key and value must have one floating dtype, got ", Describe(q),
                         ", ", Describe(k), ", ", Describe(v));
    }
  }
  const SymExpr& l = q.shape[q.rank() - 2];
  const SymExpr& s = k.shape[k.rank() - 2];
  if (!MayEqual(q.shape.back(), k.shape.back(), "query and key have the same embedding size") ||
      !MayEqual(s, v.shape[v.rank() - 2], "key and value have the same sequence length")) {
    return meta::Error("query ", Describe(q), ", key ", Describe(k), " and value ",
                       Describe(v), " disagree on the embedding or sequence size");
  }
  absl::StatusOr<std::vector<SymExpr>> batch = meta::BroadcastShapes(
      absl::MakeConstSpan(q.shape).first(q.rank() - 2),
      absl::MakeConstSpan(k.shape).first(k.rank() - 2));
  if (batch.ok()) {
    batch = meta::BroadcastShapes(*batch, absl::MakeConstSpan(v.shape).first(v.rank() - 2));
  }
  if (!batch.ok()) return batch.status();
  if (in.size() == 4) {
    const TensorType& mask = in[3];
    if (!IsBool(mask.dtype) && mask.dtype != q.dtype) {
      return meta::Error("attn_mask must be bool or the query's dtype, got ", Describe(mask));
    }
    if (*GetBool(attrs, "is_causal")) {
      return meta::Error("attn_mask and is_causal cannot both be given");
    }
    std::vector<SymExpr> scores = *batch;
    scores.push_back(l);
    scores.push_back(s);
    absl::StatusOr<std::vector<SymExpr>> b = meta::BroadcastShapes(mask.shape, scores);
    if (!b.ok() || *b != scores) {
      return meta::Error("attn_mask ", Describe(mask), " does not broadcast to the scores' shape ",
                         meta::ShapeText(scores));
    }
  }
  // Dropout of the attention weights (after the softmax), drawn like aten.dropout's mask:
  // weight i (row-major over [batch..., L, S]) is kept where
  // prims.philox_uniform(seed, offset)[i] < 1 - dropout_p.
  double dropout = *GetFloat(attrs, "dropout_p");
  if (!(dropout >= 0 && dropout <= 1)) {
    return meta::Error("dropout_p must be in [0, 1], got ", dropout);
  }
  absl::StatusOr<SymExpr> offset = GetSym(attrs, "offset");
  if (!offset.ok()) return offset.status();
  if (*GetBool(attrs, "train") && dropout > 0 && dropout < 1 && *GetInt(attrs, "seed") < 0) {
    return meta::Error("dropout_p = ", dropout,
                       " with train=true needs a seed attribute (seed >= 0; the weights' mask "
                       "is prims.philox_uniform(seed, offset)); train=false or dropout_p = 0 "
                       "draws nothing");
  }
  if (offset->is_constant() && offset->constant() < 0) {
    return meta::Error("offset must be >= 0, got ", offset->constant());
  }
  std::vector<SymExpr> shape = *batch;
  shape.push_back(l);
  shape.push_back(v.shape.back());
  return OneOutput(q.dtype, shape, in);
}

}  // namespace

void RegisterAttentionOps(OpRegistry& r) {
  r.Register({"aten.scaled_dot_product_attention",
              {{"query"}, {"key"}, {"value"}, {"attn_mask", /*optional=*/true}},
              {{"dropout_p", AttrKind::kFloat, Attribute(0.0)},
               {"is_causal", AttrKind::kBool, Attribute(false)},
               {"scale", AttrKind::kFloat, Attribute(0.0)},
               {"train", AttrKind::kBool, Attribute(true)},
               {"seed", AttrKind::kInt, Attribute(int64_t{-1}), false},
               {"offset", AttrKind::kSym, Attribute(int64_t{0}), false}},
              OpClass::kAttention, SdpaMeta,
              "torch 2.1's F.scaled_dot_product_attention (absent from torch 1.13): "
              "softmax(q @ k^T * scale + mask) @ v; bool mask True = attend; causal mask is "
              "top-left aligned; scale 0 means 1/sqrt(E); fully masked rows give NaN. With "
              "train=true and dropout_p > 0 the softmax weights are dropped as aten.dropout "
              "drops: weight i of [batch..., L, S] kept, times 1 / (1 - dropout_p), where "
              "prims.philox_uniform(seed, offset)[i] < 1 - dropout_p (dropout_p = 1: zeros); "
              "0 < dropout_p < 1 needs seed >= 0 (the Tensor API draws seed -1 and the offset "
              "from the default generator, capture/random.h); train=false draws nothing."});
}

}  // namespace coil::nn_internal
