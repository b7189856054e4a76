// Resize (opsets 10-19) and Upsample.
//
// Resize is separable: each resized axis is interpolated on its own, as a sum over taps of
// index_select(x, idx_t, axis) * w_t (1 tap for nearest, 2 for linear, 4 for cubic), with the
// indices and weights computed here from ONNX's coordinate transformation (the reference
// implementation's formulas), so every coordinate_transformation_mode / nearest_mode /
// exclude_outside / extrapolation combination works on static sizes. Resized axes with
// symbolic sizes use aten.upsample_* where the mode has a PyTorch equivalent.
#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "capture/onnx/internal/op_table.h"

namespace coil::onnx_internal {
namespace {

struct ResizeAttrs {
  std::string mode = "nearest";
  std::string coord = "half_pixel";
  std::string nearest = "round_prefer_floor";
  double cubic_a = -0.75;
  bool exclude_outside = false;
  double extrapolation = 0;
};

// Per axis: the output length and the scale used by the coordinate transformation.
struct AxisPlan {
  bool resized = false;
  int64_t out = 0;
  SymExpr sym_out;  // the output size when given as a symbolic size (sizes input)
  bool has_sym_out = false;
  double scale = 1;
  double roi_start = 0, roi_end = 1;
};

double Transform(const ResizeAttrs& a, double x, double scale, int64_t out, int64_t in,
                 double roi_start, double roi_end) {
  const std::string& m = a.coord;
  if (m == "half_pixel") return (x + 0.5) / scale - 0.5;
  if (m == "half_pixel_symmetric") {
    const double adj = static_cast<double>(out) / (scale * static_cast<double>(in));
    const double center = static_cast<double>(in) / 2;
    return center * (1 - adj) + (x + 0.5) / scale - 0.5;
  }
  if (m == "pytorch_half_pixel") return out > 1 ? (x + 0.5) / scale - 0.5 : 0;
  if (m == "align_corners") return out == 1 ? 0 : x * static_cast<double>(in - 1) / static_cast<double>(out - 1);
  if (m == "asymmetric") return x / scale;
  // tf_crop_and_resize
  return out > 1 ? roi_start * (in - 1) + x * (roi_end - roi_start) * (in - 1) / static_cast<double>(out - 1)
                 : 0.5 * (roi_start + roi_end) * (in - 1);
}

std::vector<double> Coeffs(const ResizeAttrs& a, double r) {
  if (a.mode == "linear") return {1 - r, r};
  const double A = a.cubic_a;
  const double s = 1 - r;
  return {((A * (r + 1) - 5 * A) * (r + 1) + 8 * A) * (r + 1) - 4 * A,
          ((A + 2) * r - (A + 3)) * r * r + 1,
          ((A + 2) * s - (A + 3)) * s * s + 1,
          ((A * (s + 1) - 5 * A) * (s + 1) + 8 * A) * (s + 1) - 4 * A};
}

int64_t NearestIndex(const ResizeAttrs& a, double x) {
  const double f = std::floor(x), r = x - f;
  if (r == 0) return static_cast<int64_t>(f);
  bool up = false;
  if (a.nearest == "round_prefer_floor") up = r > 0.5;
  if (a.nearest == "round_prefer_ceil") up = r >= 0.5;
  if (a.nearest == "ceil") up = true;
  return static_cast<int64_t>(f) + (up ? 1 : 0);
}

// Interpolates x along `axis` from `in` to plan.out elements.
absl::StatusOr<Value*> ResizeAxis(OnnxNode& n, const ResizeAttrs& a, Value* x, int64_t axis, int64_t in,
                                  const AxisPlan& plan) {
  const int64_t out = plan.out, rank = x->type().rank();
  const int taps = a.mode == "nearest" ? 1 : (a.mode == "linear" ? 2 : 4);
  std::vector<std::vector<SymExpr>> idx(taps, std::vector<SymExpr>(out));
  std::vector<std::vector<double>> w(taps, std::vector<double>(out));
  std::vector<SymExpr> outside(out, SymExpr(0));
  bool any_outside = false;
  for (int64_t o = 0; o < out; ++o) {
    const double xo = Transform(a, static_cast<double>(o), plan.scale, out, in, plan.roi_start, plan.roi_end);
    if (a.coord == "tf_crop_and_resize" && (xo < 0 || xo > in - 1)) {
      outside[o] = SymExpr(1);
      any_outside = true;
    }
    auto clamp = [in](int64_t i) { return std::max<int64_t>(0, std::min(i, in - 1)); };
    if (taps == 1) {
      idx[0][o] = SymExpr(clamp(NearestIndex(a, xo)));
      w[0][o] = 1;
      continue;
    }
    const double f = std::floor(xo);
    std::vector<double> c = Coeffs(a, xo - f);
    const int64_t first = static_cast<int64_t>(f) - (taps == 4 ? 1 : 0);
    double sum = 0;
    for (int t = 0; t < taps; ++t) {
      const int64_t i = first + t;
      if (a.exclude_outside && (i < 0 || i >= in)) c[t] = 0;
      sum += c[t];
    }
    for (int t = 0; t < taps; ++t) {
      idx[t][o] = SymExpr(clamp(first + t));
      w[t][o] = a.exclude_outside && sum != 0 ? c[t] / sum : c[t];
    }
  }
  std::vector<int64_t> wshape = {out};
  for (int64_t d = axis + 1; d < rank; ++d) wshape.push_back(1);
  const DType dtype = x->type().dtype;
  Value* y = nullptr;
  for (int t = 0; t < taps; ++t) {
    Value* index = n.Const(KnownValue::Ints(proto::INT64, {out}, idx[t]));
    COIL_ASSIGN_OR_RETURN(Value* g, n.Op("aten.index_select", {x, index}, {{"dim", axis}}));
    if (taps > 1) {
      std::optional<KnownValue> wk = FoldCast(KnownValue::Floats(proto::FLOAT64, wshape, w[t]), dtype);
      COIL_ASSIGN_OR_RETURN(g, n.Op("aten.mul", {g, n.Const(*wk)}));
    }
    if (y == nullptr) {
      y = g;
    } else {
      COIL_ASSIGN_OR_RETURN(y, n.Op("aten.add", {y, g}));
    }
  }
  if (any_outside) {
    Value* mask = n.Const(KnownValue::Ints(proto::BOOL, wshape, outside));
    COIL_ASSIGN_OR_RETURN(y, n.Op("aten.where", {mask, n.Scalar(dtype, a.extrapolation), y}));
  }
  return y;
}

// Resized axes with symbolic sizes: the PyTorch-equivalent upsample ops (4-D, H and W only).
absl::StatusOr<Value*> ResizeSymbolic(OnnxNode& n, const ResizeAttrs& a, Value* x,
                                      const std::vector<AxisPlan>& plans, bool from_sizes) {
  const TensorType& t = x->type();
  if (t.rank() != 4 || plans[0].resized || plans[1].resized) {
    return n.Unsupported("Resize of a symbolic dimension other than H and W of a 4-D input");
  }
  AttrMap attrs;
  if (from_sizes) {
    SymList out;
    for (int64_t d : {2, 3}) {
      const AxisPlan& p = plans[d];
      out.push_back(!p.resized ? t.shape[d] : (p.has_sym_out ? p.sym_out : SymExpr(p.out)));
    }
    attrs["output_size"] = out;
  } else {
    attrs["scale_factors"] = FloatList{plans[2].scale, plans[3].scale};
  }
  if (a.mode == "nearest" && a.coord == "asymmetric" && a.nearest == "floor") {
    return n.Op("aten.upsample_nearest2d", {x}, attrs);
  }
  if (a.mode == "linear" && (a.coord == "half_pixel" || a.coord == "pytorch_half_pixel" ||
                             a.coord == "align_corners")) {
    attrs["align_corners"] = a.coord == "align_corners";
    return n.Op("aten.upsample_bilinear2d", {x}, attrs);
  }
  return n.UnsupportedAttr("coordinate_transformation_mode",
                           absl::StrCat(a.coord, " (mode ", a.mode, ") on a symbolic size"));
}

absl::Status ImportResize(OnnxNode& n) {
  COIL_ASSIGN_OR_RETURN(Value* x, n.In(0));
  const TensorType xt = x->type();
  const int64_t rank = xt.rank();
  const bool legacy = n.op_type() == "Upsample" || n.opset() < 11;
  ResizeAttrs a;
  a.mode = n.String("mode", "nearest");
  if (a.mode != "nearest" && a.mode != "linear" && a.mode != "cubic") return n.UnsupportedAttr("mode", a.mode);
  if (legacy) {
    if (a.mode == "cubic") return n.UnsupportedAttr("mode", a.mode);
    a.coord = "asymmetric";
    a.nearest = "floor";
  } else {
    a.coord = n.String("coordinate_transformation_mode", "half_pixel");
    a.nearest = n.String("nearest_mode", "round_prefer_floor");
    a.cubic_a = n.Float("cubic_coeff_a", -0.75);
    a.exclude_outside = n.Int("exclude_outside", 0) != 0;
    a.extrapolation = n.Float("extrapolation_value", 0.0);
  }
  for (const char* m : {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
                        "asymmetric", "tf_crop_and_resize"}) {
    if (a.coord == m) goto coord_ok;
  }
  return n.UnsupportedAttr("coordinate_transformation_mode", a.coord);
coord_ok:
  if (a.nearest != "round_prefer_floor" && a.nearest != "round_prefer_ceil" && a.nearest != "floor" &&
      a.nearest != "ceil") {
    return n.UnsupportedAttr("nearest_mode", a.nearest);
  }
  // The resized axes (opset 18 `axes`) and their scales or sizes.
  std::vector<int64_t> axes;
  for (int64_t ax : n.Ints("axes")) {
    COIL_ASSIGN_OR_RETURN(int64_t d, n.Axis(ax, rank));
    axes.push_back(d);
  }
  if (axes.empty()) {
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  }
  std::vector<double> scales, roi;
  std::vector<SymExpr> sizes;
  const int scales_input = n.op_type() == "Upsample" || n.opset() < 11 ? 1 : 2;
  if (const KnownValue* s = n.Known(scales_input); s != nullptr && s->numel() > 0) {
    if (!s->IsConstant()) {
      return n.Unsupported(absl::StrCat("symbolic scales (", s->ints[0].ToString(),
                                        s->den != 1 ? absl::StrCat(" / ", s->den) : "",
                                        ", ...): give sizes instead"));
    }
    for (int64_t i = 0; i < s->numel(); ++i) scales.push_back(s->AsDouble(i));
  } else if (n.has_input(scales_input) && s == nullptr) {
    return n.Unsupported("scales computed at run time");
  } else if (n.op_type() == "Upsample" && n.opset() < 9) {
    scales = n.Floats("scales");
  }
  if (!legacy && n.has_input(3)) {
    COIL_ASSIGN_OR_RETURN(sizes, n.KnownSyms(3, "sizes"));
  }
  if (!legacy && a.coord == "tf_crop_and_resize" && n.has_input(1)) {
    const KnownValue* r = n.Known(1);
    if (r == nullptr) return n.Unsupported("roi computed at run time");
    if (!r->IsConstant()) return n.Unsupported("a symbolic roi");
    for (int64_t i = 0; i < r->numel(); ++i) roi.push_back(r->AsDouble(i));
  }
  const size_t k = axes.size();
  if (scales.empty() == sizes.empty()) return n.Invalid("exactly one of scales and sizes must be given");
  if ((!scales.empty() && scales.size() != k) || (!sizes.empty() && sizes.size() != k) ||
      (!roi.empty() && roi.size() != 2 * k)) {
    return n.Invalid("scales, sizes and roi must have one entry per resized axis");
  }
  const std::string policy = n.String("keep_aspect_ratio_policy", "stretch");
  if (policy != "stretch" && policy != "not_larger" && policy != "not_smaller") {
    return n.UnsupportedAttr("keep_aspect_ratio_policy", policy);
  }
  std::vector<AxisPlan> plans(rank);
  bool symbolic = false;
  double common = policy == "not_larger" ? 1e300 : 0;
  if (!sizes.empty() && policy != "stretch") {
    for (size_t i = 0; i < k; ++i) {
      std::optional<int64_t> in = xt.shape[axes[i]].AsConstant();
      std::optional<int64_t> sz = sizes[i].AsConstant();
      if (!in || !sz) return n.UnsupportedAttr("keep_aspect_ratio_policy", policy + " with symbolic sizes");
      const double s = static_cast<double>(*sz) / static_cast<double>(*in);
      common = policy == "not_larger" ? std::min(common, s) : std::max(common, s);
    }
  }
  for (size_t i = 0; i < k; ++i) {
    AxisPlan& p = plans[axes[i]];
    const SymExpr& in = xt.shape[axes[i]];
    std::optional<int64_t> cin = in.AsConstant();
    if (!roi.empty()) {
      p.roi_start = roi[i];
      p.roi_end = roi[i + k];
    }
    if (!sizes.empty()) {
      if (policy != "stretch") {
        p.scale = common;
        p.out = static_cast<int64_t>(std::nearbyint(common * static_cast<double>(*cin)));
        p.resized = p.out != *cin || a.coord == "tf_crop_and_resize";
        continue;
      }
      std::optional<int64_t> sz = sizes[i].AsConstant();
      if (sizes[i] == in && a.coord != "tf_crop_and_resize") continue;
      p.resized = true;
      if (!cin || !sz) {
        symbolic = true;
        p.sym_out = sizes[i];  // the upsample op's output_size (a size computed from shapes)
        p.has_sym_out = true;
        continue;
      }
      if (*sz <= 0 || *sz > (int64_t{1} << 24)) return n.Invalid("sizes must be positive");
      p.out = *sz;
      p.scale = static_cast<double>(*sz) / static_cast<double>(*cin);
    } else {
      p.scale = scales[i];
      if (!(p.scale > 0) || p.scale > (1 << 24)) return n.Invalid("scales must be positive");
      if (p.scale == 1 && a.coord != "tf_crop_and_resize") continue;
      p.resized = true;
      if (!cin) {
        symbolic = true;
        continue;
      }
      p.out = static_cast<int64_t>(std::floor(static_cast<double>(*cin) * p.scale));
      if (p.out > (int64_t{1} << 24)) return n.Invalid("output is too large");
    }
  }
  if (n.Int("antialias", 0) != 0) {
    for (const AxisPlan& p : plans) {
      if (p.resized && p.scale < 1 && a.mode != "nearest") return n.UnsupportedAttr("antialias", "1 when downscaling");
    }
  }
  Value* y = x;
  if (symbolic) {
    COIL_ASSIGN_OR_RETURN(y, ResizeSymbolic(n, a, x, plans, !sizes.empty()));
    return n.SetOutput(0, y);
  }
  if (a.mode != "nearest" && !IsFloating(xt.dtype)) {
    return n.Unsupported(absl::StrCat(a.mode, " Resize of element type ", DTypeName(xt.dtype)));
  }
  for (int64_t d = 0; d < rank; ++d) {
    if (!plans[d].resized) continue;
    COIL_ASSIGN_OR_RETURN(y, ResizeAxis(n, a, y, d, xt.shape[d].constant(), plans[d]));
  }
  if (y == x) {
    COIL_ASSIGN_OR_RETURN(y, n.Op("aten.clone", {x}));
  }
  return n.SetOutput(0, y);
}

}  // namespace

void RegisterResizeOps(OpTable& t) {
  t["Resize"].emit = ImportResize;
  t["Upsample"].emit = ImportResize;
}

}  // namespace coil::onnx_internal
