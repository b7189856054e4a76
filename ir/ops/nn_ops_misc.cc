// Schemas and meta functions of aten.scaled_dot_product_attention, the 2-D upsampling ops
// (aten.upsample_nearest2d, aten.upsample_bilinear2d) and aten.pixel_shuffle /
// aten.pixel_unshuffle.
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/op_registry.h"
#include "ir/ops/meta_util.h"
#include "ir/ops/nn_ops_internal.h"

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
  if (ProveEq(q.shape.back(), k.shape.back()) == Truth::kFalse ||
      ProveEq(s, v.shape[v.rank() - 2]) == Truth::kFalse) {
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
  double dropout = *GetFloat(attrs, "dropout_p");
  if (dropout < 0 || dropout > 1) return meta::Error("dropout_p must be in [0, 1], got ", dropout);
  std::vector<SymExpr> shape = *batch;
  shape.push_back(l);
  shape.push_back(v.shape.back());
  return OneOutput(q.dtype, shape, in);
}

// out = trunc(size * scale), as PyTorch's upsample output size; symbolic sizes need a scale
// that double represents exactly as m / 2^e (1.5, 0.25, 3.0, ...).
absl::StatusOr<SymExpr> ScaledSize(const SymExpr& size, double scale) {
  if (!(scale > 0) || !std::isfinite(scale)) {
    return meta::Error("scale factors must be positive and finite, got ", scale);
  }
  if (auto c = size.AsConstant()) {
    return SymExpr(static_cast<int64_t>(static_cast<double>(*c) * scale));
  }
  for (int64_t e = 0; e <= 20; ++e) {
    double m = std::ldexp(scale, static_cast<int>(e));
    if (m == std::floor(m) && m < 1e9) {
      return SymExpr::FloorDiv(size * static_cast<int64_t>(m), int64_t{1} << e);
    }
  }
  return meta::Error("scale factor ", scale, " of a symbolic size ", size.ToString(),
                     " is not a dyadic fraction; give output_size instead");
}

absl::StatusOr<std::vector<TensorType>> UpsampleMeta(absl::Span<const TensorType> in,
                                                     const AttrMap& attrs, bool linear) {
  const TensorType& x = in[0];
  if (x.rank() != 4) return meta::Error("input must be 4-D, got ", Describe(x));
  if (IsBool(x.dtype) || (linear && !IsFloating(x.dtype))) {
    return meta::Error("unsupported dtype: ", Describe(x));
  }
  SymList size = *GetSyms(attrs, "output_size");
  FloatList scales = *GetFloats(attrs, "scale_factors");
  if (size.empty() == scales.empty()) {
    return meta::Error("exactly one of output_size and scale_factors must be given");
  }
  std::vector<SymExpr> shape = {x.shape[0], x.shape[1]};
  for (int64_t i = 0; i < 2; ++i) {
    if (!size.empty()) {
      if (size.size() != 2)
        return meta::Error("output_size must have 2 values, got ", meta::ShapeText(size));
      shape.push_back(size[i]);
    } else {
      if (scales.size() != 2) {
        return meta::Error("scale_factors must have 2 values, got [", absl::StrJoin(scales, ", "),
                           "]");
      }
      absl::StatusOr<SymExpr> out = ScaledSize(x.shape[2 + i], scales[i]);
      if (!out.ok()) return out.status();
      shape.push_back(*out);
    }
  }
  for (int64_t i = 2; i < 4; ++i) {
    if (ProveLe(x.shape[i], 0) == Truth::kTrue || ProveLe(shape[i], 0) == Truth::kTrue) {
      return meta::Error("input and output sizes must be positive, got input ", Describe(x),
                         " and output ", meta::ShapeText(shape));
    }
  }
  return OneOutput(x.dtype, shape, in);
}

absl::StatusOr<std::vector<TensorType>> ShuffleMeta(absl::Span<const TensorType> in,
                                                    const AttrMap& attrs, bool up) {
  const TensorType& x = in[0];
  int64_t r = *GetInt(attrs, up ? "upscale_factor" : "downscale_factor");
  if (x.rank() < 3) return meta::Error("input must be at least 3-D, got ", Describe(x));
  if (r < 1) return meta::Error("the factor must be positive, got ", r);
  std::vector<SymExpr> shape = x.shape;
  int64_t n = x.rank();
  // The sizes that must be divisible by r*r (channels, up) or r (height and width, down).
  for (int64_t i = up ? n - 3 : n - 2; i < (up ? n - 2 : n); ++i) {
    int64_t divisor = up ? r * r : r;
    if (auto c = x.shape[i].AsConstant(); c.has_value() && *c % divisor != 0) {
      return meta::Error("input ", Describe(x), ": dimension ", i, " is not divisible by ",
                         divisor);
    }
  }
  if (up) {
    shape[n - 3] = SymExpr::FloorDiv(x.shape[n - 3], r * r);
    shape[n - 2] = x.shape[n - 2] * r;
    shape[n - 1] = x.shape[n - 1] * r;
  } else {
    shape[n - 3] = x.shape[n - 3] * (r * r);
    shape[n - 2] = SymExpr::FloorDiv(x.shape[n - 2], r);
    shape[n - 1] = SymExpr::FloorDiv(x.shape[n - 1], r);
  }
  return OneOutput(x.dtype, shape, in);
}

AttrSpec Syms(const char* name) { return {name, AttrKind::kSyms, Attribute(SymList{})}; }
AttrSpec Floats(const char* name) { return {name, AttrKind::kFloats, Attribute(FloatList{})}; }

}  // namespace

void RegisterAttentionOps(OpRegistry& r) {
  r.Register({"aten.scaled_dot_product_attention",
              {{"query"}, {"key"}, {"value"}, {"attn_mask", /*optional=*/true}},
              {{"dropout_p", AttrKind::kFloat, Attribute(0.0)},
               {"is_causal", AttrKind::kBool, Attribute(false)},
               {"scale", AttrKind::kFloat, Attribute(0.0)}},
              OpClass::kAttention, SdpaMeta,
              "torch 2.1's F.scaled_dot_product_attention (absent from torch 1.13): "
              "softmax(q @ k^T * scale + mask) @ v; bool mask True = attend; causal mask is "
              "top-left aligned; scale 0 means 1/sqrt(E); the reference requires dropout_p 0; "
              "fully masked rows give NaN."});
  r.Register({"aten.upsample_nearest2d", {{"input"}}, {Syms("output_size"), Floats("scale_factors")},
              OpClass::kIndexing,
              [](absl::Span<const TensorType> in, const AttrMap& a) {
                return UpsampleMeta(in, a, /*linear=*/false);
              },
              "aten.upsample_nearest2d.vec: empty output_size / scale_factors mean None; "
              "exactly one is given."});
  r.Register({"aten.upsample_bilinear2d", {{"input"}},
              {Syms("output_size"), {"align_corners", AttrKind::kBool, Attribute(false)},
               Floats("scale_factors")},
              OpClass::kIndexing,
              [](absl::Span<const TensorType> in, const AttrMap& a) {
                return UpsampleMeta(in, a, /*linear=*/true);
              },
              "aten.upsample_bilinear2d.vec: empty output_size / scale_factors mean None; "
              "exactly one is given."});
  r.Register({"aten.pixel_shuffle", {{"self"}},
              {{"upscale_factor", AttrKind::kInt, std::nullopt}}, OpClass::kShape,
              [](absl::Span<const TensorType> in, const AttrMap& a) {
                return ShuffleMeta(in, a, /*up=*/true);
              },
              "torch.pixel_shuffle: [*, C*r*r, H, W] -> [*, C, H*r, W*r]."});
  r.Register({"aten.pixel_unshuffle", {{"self"}},
              {{"downscale_factor", AttrKind::kInt, std::nullopt}}, OpClass::kShape,
              [](absl::Span<const TensorType> in, const AttrMap& a) {
                return ShuffleMeta(in, a, /*up=*/false);
              },
              "torch.pixel_unshuffle: [*, C, H*r, W*r] -> [*, C*r*r, H, W] (also for empty "
              "inputs, which torch 1.13 returns unchanged)."});
}

}  // namespace coil::nn_internal
