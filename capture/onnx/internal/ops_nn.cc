// Linear algebra, convolution and pooling: MatMul, Gemm, Conv, ConvTranspose, MaxPool,
// AveragePool, GlobalAveragePool, GlobalMaxPool.
//
// ONNX pads are per side; aten's are symmetric. Asymmetric (or, for pooling, oversized)
// padding becomes an explicit aten.pad in front. auto_pad SAME_* needs static spatial sizes.
#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "capture/onnx/internal/op_table.h"

namespace coil::onnx_internal {
namespace {

struct Window {
  int64_t k = 0;  // spatial rank
  std::vector<int64_t> kernel, strides, dilations, begin, end;
  bool symmetric() const { return begin == end; }
};

// Kernel, strides, dilations and per-side pads of a conv/pool node. `kernel` comes from the
// weight for Conv (empty `kernel_from` = read the attribute).
absl::StatusOr<Window> GetWindow(OnnxNode& n, const TensorType& x, std::vector<int64_t> kernel_from) {
  Window w;
  w.k = x.rank() - 2;
  if (w.k < 1 || w.k > 3) return n.Unsupported(absl::StrCat(x.rank(), "-D input"));
  w.kernel = n.Ints("kernel_shape", kernel_from);
  w.strides = n.Ints("strides", std::vector<int64_t>(w.k, 1));
  w.dilations = n.Ints("dilations", std::vector<int64_t>(w.k, 1));
  std::vector<int64_t> pads = n.Ints("pads", std::vector<int64_t>(2 * w.k, 0));
  if (static_cast<int64_t>(w.kernel.size()) != w.k || static_cast<int64_t>(w.strides.size()) != w.k ||
      static_cast<int64_t>(w.dilations.size()) != w.k || static_cast<int64_t>(pads.size()) != 2 * w.k) {
    return n.Invalid("kernel_shape, strides, dilations and pads must match the spatial rank");
  }
  for (int64_t i = 0; i < w.k; ++i) {
    if (w.kernel[i] <= 0 || w.strides[i] <= 0 || w.dilations[i] <= 0 || w.kernel[i] > (1 << 20) ||
        w.strides[i] > (1 << 20) || w.dilations[i] > (1 << 20)) {
      return n.Invalid("kernel_shape, strides and dilations must be positive");
    }
    if (pads[i] < 0 || pads[i + w.k] < 0 || pads[i] > (1 << 20) || pads[i + w.k] > (1 << 20)) {
      return n.Invalid("pads must be non-negative");
    }
  }
  w.begin.assign(pads.begin(), pads.begin() + w.k);
  w.end.assign(pads.begin() + w.k, pads.end());
  const std::string auto_pad = n.String("auto_pad", "NOTSET");
  if (auto_pad == "VALID") {
    std::fill(w.begin.begin(), w.begin.end(), 0);
    std::fill(w.end.begin(), w.end.end(), 0);
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    for (int64_t i = 0; i < w.k; ++i) {
      std::optional<int64_t> in = x.shape[2 + i].AsConstant();
      if (!in) return n.UnsupportedAttr("auto_pad", auto_pad + " with a symbolic spatial size");
      const int64_t out = (*in + w.strides[i] - 1) / w.strides[i];
      const int64_t total =
          std::max<int64_t>((out - 1) * w.strides[i] + (w.kernel[i] - 1) * w.dilations[i] + 1 - *in, 0);
      w.begin[i] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      w.end[i] = total - w.begin[i];
    }
  } else if (auto_pad != "NOTSET") {
    return n.UnsupportedAttr("auto_pad", auto_pad);
  }
  return w;
}

// Pads x explicitly (aten.pad lists the last dim first).
absl::StatusOr<Value*> PadSpatial(OnnxNode& n, Value* x, const std::vector<int64_t>& begin,
                                  const std::vector<int64_t>& end, double value) {
  IntList pad;
  for (int64_t i = static_cast<int64_t>(begin.size()) - 1; i >= 0; --i) {
    pad.push_back(begin[i]);
    pad.push_back(end[i]);
  }
  return n.Op("aten.pad", {x}, {{"pad", pad}, {"mode", std::string("constant")}, {"value", value}});
}

absl::Status ImportConv(OnnxNode& n) {
  COIL_ASSIGN_OR_RETURN(Value* x, n.In(0));
  COIL_ASSIGN_OR_RETURN(Value* wt, n.In(1));
  std::vector<int64_t> kernel;
  for (size_t i = 2; i < wt->type().shape.size(); ++i) {
    std::optional<int64_t> c = wt->type().shape[i].AsConstant();
    if (!c) return n.Unsupported("a symbolic kernel size");
    kernel.push_back(*c);
  }
  COIL_ASSIGN_OR_RETURN(Window w, GetWindow(n, x->type(), kernel));
  if (w.kernel != kernel) return n.Invalid("kernel_shape does not match the weight");
  std::vector<Value*> inputs = {x, wt};
  if (n.has_input(2)) {
    COIL_ASSIGN_OR_RETURN(Value* b, n.In(2));
    inputs.push_back(b);
  }
  IntList padding = w.begin;
  if (!w.symmetric()) {
    COIL_ASSIGN_OR_RETURN(inputs[0], PadSpatial(n, x, w.begin, w.end, 0.0));
    padding.assign(w.k, 0);
  }
  COIL_ASSIGN_OR_RETURN(Value* y, n.Op(absl::StrCat("aten.conv", w.k, "d"), inputs,
                                       {{"stride", IntList(w.strides)}, {"padding", padding},
                                        {"dilation", IntList(w.dilations)}, {"groups", n.Int("group", 1)}}));
  return n.SetOutput(0, y);
}

absl::Status ImportConvTranspose(OnnxNode& n) {
  COIL_ASSIGN_OR_RETURN(Value* x, n.In(0));
  COIL_ASSIGN_OR_RETURN(Value* wt, n.In(1));
  const TensorType& xt = x->type();
  std::vector<int64_t> kernel;
  for (size_t i = 2; i < wt->type().shape.size(); ++i) {
    std::optional<int64_t> c = wt->type().shape[i].AsConstant();
    if (!c) return n.Unsupported("a symbolic kernel size");
    kernel.push_back(*c);
  }
  // auto_pad is resolved below (it depends on the output size, not the input's).
  const std::string auto_pad = n.String("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID" && auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER") {
    return n.UnsupportedAttr("auto_pad", auto_pad);
  }
  Window w;
  w.k = xt.rank() - 2;
  if (w.k < 1 || w.k > 3) return n.Unsupported(absl::StrCat(xt.rank(), "-D input"));
  w.kernel = n.Ints("kernel_shape", kernel);
  w.strides = n.Ints("strides", std::vector<int64_t>(w.k, 1));
  w.dilations = n.Ints("dilations", std::vector<int64_t>(w.k, 1));
  std::vector<int64_t> pads = n.Ints("pads", std::vector<int64_t>(2 * w.k, 0));
  std::vector<int64_t> out_pad = n.Ints("output_padding", std::vector<int64_t>(w.k, 0));
  std::vector<int64_t> out_shape = n.Ints("output_shape");
  if (w.kernel != kernel || static_cast<int64_t>(w.strides.size()) != w.k ||
      static_cast<int64_t>(w.dilations.size()) != w.k || static_cast<int64_t>(pads.size()) != 2 * w.k ||
      static_cast<int64_t>(out_pad.size()) != w.k) {
    return n.Invalid("kernel_shape, strides, dilations, pads and output_padding must match the spatial rank");
  }
  for (int64_t i = 0; i < w.k; ++i) {
    if (w.strides[i] <= 0 || w.dilations[i] <= 0 || w.strides[i] > (1 << 20) || w.dilations[i] > (1 << 20) ||
        std::abs(out_pad[i]) > (1 << 20) || std::abs(pads[i]) > (1 << 20) || std::abs(pads[i + w.k]) > (1 << 20)) {
      return n.Invalid("bad strides, dilations, pads or output_padding");
    }
  }
  w.begin.assign(pads.begin(), pads.begin() + w.k);
  w.end.assign(pads.begin() + w.k, pads.end());
  if (!out_shape.empty() || auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    if (!out_shape.empty() && static_cast<int64_t>(out_shape.size()) != w.k) {
      if (static_cast<int64_t>(out_shape.size()) != w.k + 2) return n.Invalid("output_shape must match the spatial rank");
      out_shape.erase(out_shape.begin(), out_shape.begin() + 2);
    }
    for (int64_t i = 0; i < w.k; ++i) {
      std::optional<int64_t> in = xt.shape[2 + i].AsConstant();
      if (!in) return n.UnsupportedAttr(out_shape.empty() ? "auto_pad" : "output_shape", "with a symbolic spatial size");
      const int64_t target = out_shape.empty() ? *in * w.strides[i] : out_shape[i];
      const int64_t total = w.strides[i] * (*in - 1) + out_pad[i] + (w.kernel[i] - 1) * w.dilations[i] + 1 - target;
      const bool upper = auto_pad == "SAME_UPPER";
      const int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);  // floor(total / 2)
      w.begin[i] = upper ? half : total - half;
      w.end[i] = total - w.begin[i];
    }
  } else if (auto_pad == "VALID") {
    std::fill(w.begin.begin(), w.begin.end(), 0);
    std::fill(w.end.begin(), w.end.end(), 0);
  }
  const std::string op = absl::StrCat("aten.conv_transpose", w.k, "d");
  const int64_t groups = n.Int("group", 1);
  bool direct = w.symmetric();
  for (int64_t i = 0; i < w.k; ++i) {
    direct = direct && w.begin[i] >= 0 && out_pad[i] >= 0 &&
             out_pad[i] < std::max(w.strides[i], w.dilations[i]);
  }
  std::vector<Value*> inputs = {x, wt};
  Value* bias = nullptr;
  if (n.has_input(2)) {
    COIL_ASSIGN_OR_RETURN(bias, n.In(2));
  }
  if (direct) {
    if (bias != nullptr) inputs.push_back(bias);
    COIL_ASSIGN_OR_RETURN(Value* y, n.Op(op, inputs, {{"stride", IntList(w.strides)}, {"padding", IntList(w.begin)},
                                                      {"output_padding", IntList(out_pad)}, {"groups", groups},
                                                      {"dilation", IntList(w.dilations)}}));
    return n.SetOutput(0, y);
  }
  // Full transposed convolution, then crop/extend each side (aten.pad accepts negative
  // pads), then the bias.
  COIL_ASSIGN_OR_RETURN(Value* y, n.Op(op, inputs, {{"stride", IntList(w.strides)}, {"padding", IntList(w.k, 0)},
                                                    {"output_padding", IntList(w.k, 0)}, {"groups", groups},
                                                    {"dilation", IntList(w.dilations)}}));
  std::vector<int64_t> lo(w.k), hi(w.k);
  for (int64_t i = 0; i < w.k; ++i) {
    lo[i] = -w.begin[i];
    hi[i] = out_pad[i] - w.end[i];
  }
  COIL_ASSIGN_OR_RETURN(y, PadSpatial(n, y, lo, hi, 0.0));
  if (bias != nullptr) {
    SymList bshape = {bias->type().NumElements()};
    for (int64_t i = 0; i < w.k; ++i) bshape.push_back(1);
    COIL_ASSIGN_OR_RETURN(Value* b, n.Op("aten.reshape", {bias}, {{"shape", bshape}}));
    COIL_ASSIGN_OR_RETURN(y, n.Op("aten.add", {y, b}));
  }
  return n.SetOutput(0, y);
}

absl::Status ImportMaxPool(OnnxNode& n) {
  if (n.wants_output(1)) return n.Unsupported("the Indices output");
  COIL_ASSIGN_OR_RETURN(Value* x, n.In(0));
  COIL_ASSIGN_OR_RETURN(Window w, GetWindow(n, x->type(), {}));
  if (!IsFloating(x->type().dtype)) return n.Unsupported(absl::StrCat("element type ", DTypeName(x->type().dtype)));
  IntList padding = w.begin;
  bool fits = w.symmetric();
  for (int64_t i = 0; i < w.k; ++i) fits = fits && 2 * w.begin[i] <= (w.kernel[i] - 1) * w.dilations[i] + 1;
  Value* in = x;
  if (!fits) {
    COIL_ASSIGN_OR_RETURN(in, PadSpatial(n, x, w.begin, w.end, -std::numeric_limits<double>::infinity()));
    padding.assign(w.k, 0);
  }
  COIL_ASSIGN_OR_RETURN(Value* y, n.Op(absl::StrCat("aten.max_pool", w.k, "d"), {in},
                                       {{"kernel_size", IntList(w.kernel)}, {"stride", IntList(w.strides)},
                                        {"padding", padding}, {"dilation", IntList(w.dilations)},
                                        {"ceil_mode", n.Int("ceil_mode", 0) != 0}}));
  return n.SetOutput(0, y);
}

absl::Status ImportAveragePool(OnnxNode& n) {
  COIL_ASSIGN_OR_RETURN(Value* x, n.In(0));
  COIL_ASSIGN_OR_RETURN(Window w, GetWindow(n, x->type(), {}));
  for (int64_t d : w.dilations) {
    if (d != 1) return n.UnsupportedAttr("dilations", "> 1");
  }
  const bool include_pad = n.Int("count_include_pad", 0) != 0;
  const bool ceil_mode = n.Int("ceil_mode", 0) != 0;
  bool fits = w.symmetric();
  for (int64_t i = 0; i < w.k; ++i) fits = fits && 2 * w.begin[i] <= w.kernel[i];
  const std::string op = absl::StrCat("aten.avg_pool", w.k, "d");
  auto pool = [&](Value* in, const IntList& padding, bool include) {
    return n.Op(op, {in}, {{"kernel_size", IntList(w.kernel)}, {"stride", IntList(w.strides)},
                           {"padding", padding}, {"ceil_mode", ceil_mode}, {"count_include_pad", include}});
  };
  if (fits) {
    COIL_ASSIGN_OR_RETURN(Value* y, pool(x, IntList(w.begin), include_pad));
    return n.SetOutput(0, y);
  }
  // Explicit zero padding; without count_include_pad, divide by the pooled mask of real
  // elements instead of the window size.
  COIL_ASSIGN_OR_RETURN(Value* padded, PadSpatial(n, x, w.begin, w.end, 0.0));
  COIL_ASSIGN_OR_RETURN(Value* y, pool(padded, IntList(w.k, 0), true));
  if (!include_pad) {
    COIL_ASSIGN_OR_RETURN(Value* ones, n.Op("aten.ones_like", {x}, {{"dtype", x->type().dtype}, {"has_dtype", true}}));
    COIL_ASSIGN_OR_RETURN(Value* mask, PadSpatial(n, ones, w.begin, w.end, 0.0));
    COIL_ASSIGN_OR_RETURN(Value* count, pool(mask, IntList(w.k, 0), true));
    COIL_ASSIGN_OR_RETURN(y, n.Op("aten.div", {y, count}));
  }
  return n.SetOutput(0, y);
}

absl::Status ImportGlobalPool(OnnxNode& n, bool max) {
  COIL_ASSIGN_OR_RETURN(Value* x, n.In(0));
  if (x->type().rank() < 3) return n.Invalid("input must have spatial dimensions");
  IntList dims;
  for (int64_t d = 2; d < x->type().rank(); ++d) dims.push_back(d);
  COIL_ASSIGN_OR_RETURN(Value* y, n.Op(max ? "aten.amax" : "aten.mean", {x}, {{"dim", dims}, {"keepdim", true}}));
  return n.SetOutput(0, y);
}

absl::Status ImportMatMul(OnnxNode& n) {
  COIL_ASSIGN_OR_RETURN(Value* a, n.In(0));
  COIL_ASSIGN_OR_RETURN(Value* b, n.In(1));
  COIL_ASSIGN_OR_RETURN(Value* y, n.Op("aten.matmul", {a, b}));
  return n.SetOutput(0, y);
}

absl::Status ImportGemm(OnnxNode& n) {
  COIL_ASSIGN_OR_RETURN(Value* a, n.In(0));
  COIL_ASSIGN_OR_RETURN(Value* b, n.In(1));
  const double alpha = n.Float("alpha", 1.0), beta = n.Float("beta", 1.0);
  const bool ta = n.Int("transA", 0) != 0, tb = n.Int("transB", 0) != 0;
  if (a->type().rank() != 2 || b->type().rank() != 2) return n.Invalid("A and B must be 2-D");
  Value* c = nullptr;
  if (n.has_input(2)) {
    COIL_ASSIGN_OR_RETURN(c, n.In(2));
  }
  // The common classifier head: x @ W.T + b.
  if (!ta && tb && alpha == 1 && beta == 1 && (c == nullptr || c->type().rank() == 1)) {
    std::vector<Value*> in = {a, b};
    if (c != nullptr) in.push_back(c);
    COIL_ASSIGN_OR_RETURN(Value* y, n.Op("aten.linear", in));
    return n.SetOutput(0, y);
  }
  if (ta) {
    COIL_ASSIGN_OR_RETURN(a, n.Op("aten.t", {a}));
  }
  if (tb) {
    COIL_ASSIGN_OR_RETURN(b, n.Op("aten.t", {b}));
  }
  COIL_ASSIGN_OR_RETURN(Value* y, n.Op("aten.mm", {a, b}));
  if (alpha != 1) {
    COIL_ASSIGN_OR_RETURN(y, n.Op("aten.mul_scalar", {y}, {{"other", alpha}}));
  }
  if (c != nullptr && beta != 0) {
    if (beta != 1) {
      COIL_ASSIGN_OR_RETURN(c, n.Op("aten.mul_scalar", {c}, {{"other", beta}}));
    }
    COIL_ASSIGN_OR_RETURN(y, n.Op("aten.add", {y, c}));
  }
  COIL_ASSIGN_OR_RETURN(y, n.Cast(y, a->type().dtype));
  return n.SetOutput(0, y);
}

}  // namespace

void RegisterNnOps(OpTable& t) {
  t["MatMul"].emit = ImportMatMul;
  t["Gemm"].emit = ImportGemm;
  t["Conv"].emit = ImportConv;
  t["ConvTranspose"].emit = ImportConvTranspose;
  t["MaxPool"].emit = ImportMaxPool;
  t["AveragePool"].emit = ImportAveragePool;
  t["GlobalAveragePool"].emit = [](OnnxNode& n) { return ImportGlobalPool(n, false); };
  t["GlobalMaxPool"].emit = [](OnnxNode& n) { return ImportGlobalPool(n, true); };
}

}  // namespace coil::onnx_internal
