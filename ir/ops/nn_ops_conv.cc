// Schemas and meta functions of convolution: aten.convolution (1-D, 2-D and 3-D, grouped,
// dilated, transposed), the convenience ops aten.conv{1,2,3}d and
// aten.conv_transpose{1,2,3}d, which share its shape rule, and
// aten.convolution_backward_weight (a plain convolution's weight gradient, which training
// graphs emit: autograd/rules/conv.cc).
#include <algorithm>
#include <optional>
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

struct ConvVariant {
  int64_t spatial = 0;                // 0: taken from the weight's rank (aten.convolution)
  std::optional<bool> transposed;     // nullopt: the `transposed` attribute
  bool allow_unbatched = false;       // the conv1d/conv2d/... wrappers accept [C, *spatial]
};

absl::Status CheckAll(const IntList& v, absl::string_view name, int64_t min) {
  for (int64_t x : v) {
    if (x < min) {
      return meta::Error(name, " must be >= ", min, ", got [", absl::StrJoin(v, ", "), "]");
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<TensorType>> ConvMeta(absl::Span<const TensorType> in,
                                                 const AttrMap& attrs, ConvVariant variant) {
  const TensorType& x = in[0];
  const TensorType& w = in[1];
  if (x.dtype != w.dtype) {
    return meta::Error("input ", Describe(x), " and weight ", Describe(w),
                       " must have the same dtype");
  }
  for (const TensorType& t : in) {
    if (IsBool(t.dtype)) return meta::Error("bool tensors are not supported, got ", Describe(t));
  }
  int64_t d = variant.spatial != 0 ? variant.spatial : w.rank() - 2;
  if (d < 1 || d > 3 || w.rank() != d + 2) {
    return meta::Error("weight must be ", variant.spatial != 0 ? absl::StrCat(d + 2, "-D")
                                                               : std::string("3-D, 4-D or 5-D"),
                       ", got ", Describe(w));
  }
  bool unbatched = variant.allow_unbatched && x.rank() == d + 1;
  if (x.rank() != d + 2 && !unbatched) {
    return meta::Error("input must be ", d + 2, "-D (batched)",
                       variant.allow_unbatched ? absl::StrCat(" or ", d + 1, "-D (unbatched)") : "",
                       " for a ", d + 2, "-D weight, got ", Describe(x));
  }
  std::vector<SymExpr> xs = x.shape;
  if (unbatched) xs.insert(xs.begin(), SymExpr(1));

  bool transposed = variant.transposed.has_value() ? *variant.transposed
                                                   : *GetBool(attrs, "transposed");
  absl::StatusOr<IntList> stride = ExpandInts(attrs, "stride", d);
  absl::StatusOr<IntList> padding = ExpandInts(attrs, "padding", d);
  absl::StatusOr<IntList> dilation = ExpandInts(attrs, "dilation", d);
  absl::StatusOr<IntList> output_padding =
      HasAttr(attrs, "output_padding") ? ExpandInts(attrs, "output_padding", d)
                                        : absl::StatusOr<IntList>(IntList(d, 0));
  for (const auto* v : {&stride, &padding, &dilation, &output_padding}) {
    if (!v->ok()) return v->status();
  }
  int64_t groups = *GetInt(attrs, "groups");
  if (absl::Status s = CheckAll(*stride, "stride", 1); !s.ok()) return s;
  if (absl::Status s = CheckAll(*dilation, "dilation", 1); !s.ok()) return s;
  if (absl::Status s = CheckAll(*padding, "padding", 0); !s.ok()) return s;
  if (absl::Status s = CheckAll(*output_padding, "output_padding", 0); !s.ok()) return s;
  if (groups < 1) return meta::Error("groups must be >= 1, got ", groups);

  // Channels: weight is [C_out, C_in / groups, *k] or, transposed, [C_in, C_out / groups, *k].
  SymExpr c_out;
  if (auto w0 = w.shape[0].AsConstant(); w0.has_value() && *w0 % groups != 0) {
    return meta::Error("weight ", Describe(w), ": dimension 0 is not divisible by groups = ",
                       groups);
  }
  if (!transposed) {
    if (auto w0 = w.shape[0].AsConstant(); w0.has_value() && *w0 == 0) {
      return meta::Error("weight ", Describe(w), " has no output channels");
    }
    if (!MayEqual(xs[1], w.shape[1] * groups, "input channels match the weight's")) {
      return meta::Error("input ", Describe(x), " has ", xs[1].ToString(),
                         " channels, weight ", Describe(w), " with groups = ", groups,
                         " expects ", (w.shape[1] * groups).ToString());
    }
    c_out = w.shape[0];
  } else {
    if (!MayEqual(xs[1], w.shape[0], "input channels match the transposed weight's")) {
      return meta::Error("input ", Describe(x), " has ", xs[1].ToString(),
                         " channels, transposed weight ", Describe(w), " expects ",
                         w.shape[0].ToString());
    }
    for (int64_t i = 0; i < d; ++i) {
      if ((*output_padding)[i] >= std::max((*stride)[i], (*dilation)[i])) {
        return meta::Error("output_padding must be smaller than stride or dilation, got "
                           "output_padding [", absl::StrJoin(*output_padding, ", "),
                           "], stride [", absl::StrJoin(*stride, ", "), "], dilation [",
                           absl::StrJoin(*dilation, ", "), "]");
      }
    }
    c_out = w.shape[1] * groups;
  }
  if (in.size() == 3) {
    const TensorType& b = in[2];
    if (b.rank() != 1 || !MayEqual(b.shape[0], c_out, "the bias has one element per output channel")) {
      return meta::Error("bias must be 1-D with ", c_out.ToString(), " elements, got ",
                         Describe(b));
    }
  }

  std::vector<SymExpr> shape = {xs[0], c_out};
  for (int64_t i = 0; i < d; ++i) {
    const SymExpr& size = xs[2 + i];
    const SymExpr& k = w.shape[2 + i];
    SymExpr extent = SymExpr((*dilation)[i]) * (k - 1) + 1;  // the dilated kernel's extent
    SymExpr out;
    if (!transposed) {
      SymExpr padded = size + 2 * (*padding)[i];
      if (ProveLt(padded, extent) == Truth::kTrue) {
        return meta::Error("padded input size ", padded.ToString(), " of spatial dimension ", i,
                           " is smaller than the dilated kernel size ", extent.ToString(),
                           " (input ", Describe(x), ", weight ", Describe(w), ")");
      }
      out = SymExpr::FloorDiv(padded - extent, (*stride)[i]) + 1;
    } else {
      out = (size - 1) * (*stride)[i] - 2 * (*padding)[i] + extent + (*output_padding)[i];
      if (ProveLe(out, 0) == Truth::kTrue) {
        return meta::Error("output size ", out.ToString(), " of spatial dimension ", i,
                           " is not positive (input ", Describe(x), ", weight ", Describe(w),
                           ")");
      }
    }
    shape.push_back(out);
  }
  if (unbatched) shape.erase(shape.begin());
  return OneOutput(x.dtype, std::move(shape), in);
}

std::vector<OpInput> ConvInputs() {
  return {{"input"}, {"weight"}, {"bias", /*optional=*/true}};
}

AttrSpec Ints(const char* name, int64_t v) { return {name, AttrKind::kInts, Attribute(IntList{v})}; }

// convolution_backward_weight(input [N, C, *], grad_output [N, O, *out]) -> [O, C/G, *k]: the
// gradient of a plain convolution's weight (kernel sizes `kernel_size`) given the gradient of
// its output; grad_output's spatial sizes must be the convolution's output sizes.
absl::StatusOr<std::vector<TensorType>> WeightGradMeta(absl::Span<const TensorType> in,
                                                       const AttrMap& attrs) {
  const TensorType& x = in[0];
  const TensorType& g = in[1];
  if (x.dtype != g.dtype) {
    return meta::Error("input ", Describe(x), " and grad_output ", Describe(g),
                       " must have the same dtype");
  }
  if (!IsFloating(x.dtype)) {
    return meta::Error("floating tensors only, got ", Describe(x));
  }
  const IntList kernel = *GetInts(attrs, "kernel_size");
  const int64_t d = static_cast<int64_t>(kernel.size());
  if (d < 1 || d > 3) {
    return meta::Error("kernel_size must have 1 to 3 values, got [", absl::StrJoin(kernel, ", "),
                       "]");
  }
  if (x.rank() != d + 2 || g.rank() != d + 2) {
    return meta::Error("input ", Describe(x), " and grad_output ", Describe(g), " must be ",
                       d + 2, "-D for a ", d, "-D kernel_size");
  }
  absl::StatusOr<IntList> stride = ExpandInts(attrs, "stride", d);
  absl::StatusOr<IntList> padding = ExpandInts(attrs, "padding", d);
  absl::StatusOr<IntList> dilation = ExpandInts(attrs, "dilation", d);
  for (const auto* v : {&stride, &padding, &dilation}) {
    if (!v->ok()) return v->status();
  }
  if (absl::Status s = CheckAll(kernel, "kernel_size", 1); !s.ok()) return s;
  if (absl::Status s = CheckAll(*stride, "stride", 1); !s.ok()) return s;
  if (absl::Status s = CheckAll(*dilation, "dilation", 1); !s.ok()) return s;
  if (absl::Status s = CheckAll(*padding, "padding", 0); !s.ok()) return s;
  const int64_t groups = *GetInt(attrs, "groups");
  if (groups < 1) return meta::Error("groups must be >= 1, got ", groups);
  for (const TensorType* t : {&x, &g}) {
    if (auto c = t->shape[1].AsConstant(); c.has_value() && *c % groups != 0) {
      return meta::Error(Describe(*t), ": channels are not divisible by groups = ", groups);
    }
  }
  if (!MayEqual(x.shape[0], g.shape[0], "input and grad_output have the same batch")) {
    return meta::Error("input ", Describe(x), " and grad_output ", Describe(g),
                       " have different batch sizes");
  }
  for (int64_t i = 0; i < d; ++i) {
    SymExpr extent = SymExpr((*dilation)[i] * (kernel[i] - 1) + 1);
    SymExpr out = SymExpr::FloorDiv(x.shape[2 + i] + 2 * (*padding)[i] - extent, (*stride)[i]) + 1;
    if (!MayEqual(g.shape[2 + i], out, "grad_output has the convolution's output size")) {
      return meta::Error("grad_output ", Describe(g), " has size ", g.shape[2 + i].ToString(),
                         " in spatial dimension ", i, "; the convolution of input ", Describe(x),
                         " gives ", out.ToString());
    }
  }
  std::vector<SymExpr> shape = {g.shape[1], SymExpr::FloorDiv(x.shape[1], groups)};
  for (int64_t k : kernel) shape.push_back(SymExpr(k));
  return OneOutput(x.dtype, std::move(shape), in);
}

}  // namespace

void RegisterConvOps(OpRegistry& r) {
  r.Register({"aten.convolution", ConvInputs(),
              {Ints("stride", 1), Ints("padding", 0), Ints("dilation", 1),
               {"transposed", AttrKind::kBool, Attribute(false)}, Ints("output_padding", 0),
               {"groups", AttrKind::kInt, Attribute(int64_t{1})}},
              OpClass::kConvolution,
              [](absl::Span<const TensorType> in, const AttrMap& a) {
                return ConvMeta(in, a, {});
              },
              "aten.convolution: N-D (1 to 3 spatial dims, from the weight's rank), batched "
              "input only; stride/padding/dilation/output_padding take 1 or N values; "
              "output_padding is ignored unless transposed; bias may have another dtype."});
  r.Register({"aten.convolution_backward_weight", {{"input"}, {"grad_output"}},
              {{"kernel_size", AttrKind::kInts, std::nullopt}, Ints("stride", 1),
               Ints("padding", 0), Ints("dilation", 1),
               {"groups", AttrKind::kInt, Attribute(int64_t{1})}},
              OpClass::kConvolution, WeightGradMeta,
              "The weight gradient [O, C/G, *kernel_size] of a plain aten.convolution of input "
              "[N, C, *] whose output gradient is grad_output [N, O, *] (torch's "
              "convolution_backward with output_mask [False, True, False]); floating only."});
  for (int64_t d = 1; d <= 3; ++d) {
    r.Register({absl::StrCat("aten.conv", d, "d"), ConvInputs(),
                {Ints("stride", 1), Ints("padding", 0), Ints("dilation", 1),
                 {"groups", AttrKind::kInt, Attribute(int64_t{1})}},
                OpClass::kConvolution,
                [d](absl::Span<const TensorType> in, const AttrMap& a) {
                  return ConvMeta(in, a, {d, false, true});
                },
                absl::StrCat("torch.nn.functional.conv", d, "d (batched or unbatched input); "
                             "padding is numeric only (no 'same'/'valid').")});
    r.Register({absl::StrCat("aten.conv_transpose", d, "d"), ConvInputs(),
                {Ints("stride", 1), Ints("padding", 0), Ints("output_padding", 0),
                 {"groups", AttrKind::kInt, Attribute(int64_t{1})}, Ints("dilation", 1)},
                OpClass::kConvolution,
                [d](absl::Span<const TensorType> in, const AttrMap& a) {
                  return ConvMeta(in, a, {d, true, true});
                },
                absl::StrCat("torch.nn.functional.conv_transpose", d,
                             "d (batched or unbatched input).")});
  }
}

}  // namespace coil::nn_internal
