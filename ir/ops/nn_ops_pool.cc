// Schemas and meta functions of pooling: aten.max_pool{1,2,3}d, aten.avg_pool{1,2,3}d,
// aten.adaptive_avg_pool{1,2,3}d and aten.adaptive_max_pool{1,2,3}d. Inputs are
// [N, C, *spatial] or unbatched [C, *spatial].
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/op_registry.h"
#include "ir/ops/meta_util.h"
#include "ir/ops/nn_ops_internal.h"

namespace coil::nn_internal {
namespace {

// PyTorch's pooling input check: rank d+1 or d+2, every non-batch dimension non-empty.
absl::Status CheckPoolInput(const TensorType& x, int64_t d, bool floating_only) {
  if (x.rank() != d + 1 && x.rank() != d + 2) {
    return meta::Error("input must be ", d + 1, "-D (unbatched) or ", d + 2,
                       "-D (batched), got ", Describe(x));
  }
  for (int64_t i = x.rank() - d - 1; i < x.rank(); ++i) {
    if (x.shape[i] == SymExpr(0)) {
      return meta::Error("input ", Describe(x), " has an empty non-batch dimension ", i);
    }
  }
  if (IsBool(x.dtype) || (floating_only && !IsFloating(x.dtype))) {
    return meta::Error(floating_only ? "input must be floating point" : "bool is not supported",
                       ", got ", Describe(x));
  }
  return absl::OkStatus();
}

// torch's pooling_output_shape: floor (or ceil) of the window count; in ceil mode the last
// window must start inside the input or the left padding, which caps the count at
// floor((size + pad - 1) / stride) + 1 (exactly torch's single decrement, given pad <= k/2).
SymExpr PoolOutputSize(const SymExpr& size, int64_t k, int64_t stride, int64_t pad,
                       int64_t dilation, bool ceil_mode) {
  SymExpr span = size + 2 * pad - dilation * (k - 1) - 1;
  if (!ceil_mode) return SymExpr::FloorDiv(span, stride) + 1;
  SymExpr out = SymExpr::FloorDiv(span + (stride - 1), stride) + 1;
  return SymExpr::Min(out, SymExpr::FloorDiv(size + pad - 1, stride) + 1);
}

// max_pool (with_dilation) and avg_pool (without): the window parameters and output shape.
absl::StatusOr<std::vector<TensorType>> PoolMeta(absl::Span<const TensorType> in,
                                                 const AttrMap& attrs, int64_t d, bool is_max) {
  const TensorType& x = in[0];
  if (absl::Status s = CheckPoolInput(x, d, /*floating_only=*/false); !s.ok()) return s;
  absl::StatusOr<IntList> kernel = ExpandInts(attrs, "kernel_size", d);
  absl::StatusOr<IntList> stride = ExpandInts(attrs, "stride", d, /*allow_empty=*/true);
  absl::StatusOr<IntList> padding = ExpandInts(attrs, "padding", d);
  absl::StatusOr<IntList> dilation =
      is_max ? ExpandInts(attrs, "dilation", d) : absl::StatusOr<IntList>(IntList(d, 1));
  for (const auto* v : {&kernel, &stride, &padding, &dilation}) {
    if (!v->ok()) return v->status();
  }
  if (stride->empty()) stride = kernel;
  bool ceil_mode = *GetBool(attrs, "ceil_mode");
  std::vector<SymExpr> shape(x.shape.begin(), x.shape.end() - d);
  for (int64_t i = 0; i < d; ++i) {
    int64_t k = (*kernel)[i], s = (*stride)[i], p = (*padding)[i], dil = (*dilation)[i];
    if (k < 1 || s < 1 || dil < 1) {
      return meta::Error("kernel_size, stride and dilation must be positive, got kernel_size [",
                         absl::StrJoin(*kernel, ", "), "], stride [", absl::StrJoin(*stride, ", "),
                         "], dilation [", absl::StrJoin(*dilation, ", "), "]");
    }
    if (p < 0 || p > k / 2) {
      return meta::Error("padding must be between 0 and half the kernel size, got padding [",
                         absl::StrJoin(*padding, ", "), "] for kernel_size [",
                         absl::StrJoin(*kernel, ", "), "]");
    }
    SymExpr out = PoolOutputSize(x.shape[x.rank() - d + i], k, s, p, dil, ceil_mode);
    if (ProveLe(out, 0) == Truth::kTrue) {
      return meta::Error("input ", Describe(x), " is too small: output size of spatial "
                         "dimension ", i, " would be ", out.ToString());
    }
    shape.push_back(out);
  }
  return OneOutput(x.dtype, std::move(shape), in);
}

absl::StatusOr<std::vector<TensorType>> AdaptiveMeta(absl::Span<const TensorType> in,
                                                     const AttrMap& attrs, int64_t d,
                                                     bool is_max) {
  const TensorType& x = in[0];
  if (absl::Status s = CheckPoolInput(x, d, /*floating_only=*/true); !s.ok()) return s;
  absl::StatusOr<IntList> size = ExpandInts(attrs, "output_size", d);
  if (!size.ok()) return size.status();
  std::vector<SymExpr> shape(x.shape.begin(), x.shape.end() - d);
  for (int64_t v : *size) {
    if (v < 0) {
      return meta::Error("output_size must be non-negative, got [", absl::StrJoin(*size, ", "),
                         "]");
    }
    shape.push_back(v);
  }
  absl::StatusOr<Device> device = meta::CommonDevice(in);
  if (!device.ok()) return device.status();
  std::vector<TensorType> out = {meta::Out(x.dtype, shape, *device)};
  if (is_max) out.push_back(meta::Out(proto::INT64, shape, *device));
  return out;
}

AttrSpec Ints(const char* name, IntList v) { return {name, AttrKind::kInts, Attribute(v)}; }
AttrSpec Required(const char* name) { return {name, AttrKind::kInts, std::nullopt}; }
AttrSpec Bool(const char* name, bool v) { return {name, AttrKind::kBool, Attribute(v)}; }

}  // namespace

void RegisterPoolOps(OpRegistry& r) {
  for (int64_t d = 1; d <= 3; ++d) {
    r.Register({absl::StrCat("aten.max_pool", d, "d"), {{"self"}},
                {Required("kernel_size"), Ints("stride", {}), Ints("padding", {0}),
                 Ints("dilation", {1}), Bool("ceil_mode", false)},
                OpClass::kPooling,
                [d](absl::Span<const TensorType> in, const AttrMap& a) {
                  return PoolMeta(in, a, d, /*is_max=*/true);
                },
                absl::StrCat("torch max_pool", d, "d (values only); empty stride means "
                             "kernel_size; integer inputs allowed (torch's CPU has none).")});
    std::vector<AttrSpec> avg_attrs = {Required("kernel_size"), Ints("stride", {}),
                                       Ints("padding", {0}), Bool("ceil_mode", false),
                                       Bool("count_include_pad", true)};
    if (d > 1) avg_attrs.push_back({"divisor_override", AttrKind::kInt, Attribute(int64_t{0})});
    r.Register({absl::StrCat("aten.avg_pool", d, "d"), {{"self"}}, avg_attrs, OpClass::kPooling,
                [d](absl::Span<const TensorType> in, const AttrMap& a) {
                  return PoolMeta(in, a, d, /*is_max=*/false);
                },
                absl::StrCat("torch avg_pool", d, "d; empty stride means kernel_size",
                             d > 1 ? "; divisor_override 0 means None" : "",
                             "; integer inputs divide truncating toward zero, as PyTorch.")});
    r.Register({absl::StrCat("aten.adaptive_avg_pool", d, "d"), {{"self"}},
                {Required("output_size")}, OpClass::kPooling,
                [d](absl::Span<const TensorType> in, const AttrMap& a) {
                  return AdaptiveMeta(in, a, d, /*is_max=*/false);
                },
                absl::StrCat("torch adaptive_avg_pool", d, "d; output_size has no None.")});
    r.Register({absl::StrCat("aten.adaptive_max_pool", d, "d"), {{"self"}},
                {Required("output_size")}, OpClass::kPooling,
                [d](absl::Span<const TensorType> in, const AttrMap& a) {
                  return AdaptiveMeta(in, a, d, /*is_max=*/true);
                },
                absl::StrCat("torch adaptive_max_pool", d, "d: (values, int64 indices into "
                             "each flattened spatial plane).")});
  }
}

}  // namespace coil::nn_internal
