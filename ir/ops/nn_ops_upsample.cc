// Schemas and meta functions of the ops that resample NCHW images: the 2-D upsampling ops
// (aten.upsample_nearest2d, aten.upsample_bilinear2d) and aten.pixel_shuffle /
// aten.pixel_unshuffle, which trade channels for spatial size.
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/op_registry.h"
#include "ir/ops/meta_util.h"
#include "ir/ops/nn_ops_internal.h"
#include "ir/shape_assumption.h"

namespace coil::nn_internal {
namespace {

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
    // A symbolic size is assumed divisible (a guard checks it at run time).
    if (!MayEqual(SymExpr::FloorDiv(x.shape[i], divisor) * divisor, x.shape[i],
                  up ? "the channels are divisible by the factor squared"
                     : "the height and width are divisible by the factor")) {
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

void RegisterUpsampleOps(OpRegistry& r) {
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
