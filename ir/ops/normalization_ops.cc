// Schemas and meta functions of softmax, the normalizations (layer, batch, group, instance,
// RMS, local response) and dropout. Part of the reduction family: RegisterReductionOps calls RegisterNormalizationOps.
//
// Optional tensor inputs are positional: layer_norm(x), layer_norm(x, weight) and
// layer_norm(x, weight, bias). A bias without a weight is written with a weight of ones.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/op_registry.h"
#include "ir/ops/meta_util.h"
#include "ir/shape_assumption.h"

namespace coil {

void RegisterNormalizationOps(OpRegistry& registry);

namespace {

using meta::Error;
using Outs = absl::StatusOr<std::vector<TensorType>>;

// Dims that are provably different are an error; symbolic dims that may be equal become shape
// assumptions (ir/shape_assumption.h), checked at run time.
bool ShapesMayEqual(absl::Span<const SymExpr> a, absl::Span<const SymExpr> b, absl::string_view what) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!MayEqual(a[i], b[i], what)) return false;
  }
  return true;
}

absl::Status RequireFloating(const TensorType& x) {
  if (!IsFloating(x.dtype)) {
    return Error("only supports floating point inputs, got ", DTypeName(x.dtype));
  }
  return absl::OkStatus();
}

// A parameter tensor (weight, bias, running stats): of `shape`, and of x's dtype, or float32
// for a reduced-precision x where `mixed` (PyTorch's CPU mixed-dtype batch_norm).
absl::Status CheckParam(const TensorType& x, const TensorType& p, absl::string_view name,
                        absl::Span<const SymExpr> shape, bool mixed) {
  bool dtype_ok = p.dtype == x.dtype ||
                  (mixed && p.dtype == proto::FLOAT32 &&
                   (x.dtype == proto::BFLOAT16 || x.dtype == proto::FLOAT16));
  if (!dtype_ok) {
    return Error(name, " is ", DTypeName(p.dtype), " but the input is ", DTypeName(x.dtype),
                 " (expected the same dtype)");
  }
  if (!ShapesMayEqual(p.shape, shape, "a parameter has the normalized shape")) {
    return Error(name, " has shape ", meta::ShapeText(p.shape), ", expected ",
                 meta::ShapeText(shape));
  }
  if (p.device != x.device) {
    return Error(name, " is on ", p.device.ToString(), " but the input is on ",
                 x.device.ToString());
  }
  return absl::OkStatus();
}

absl::Status CheckParams(absl::Span<const TensorType> in, size_t first,
                         const std::vector<std::string>& names, absl::Span<const SymExpr> shape,
                         bool mixed = false) {
  for (size_t i = first; i < in.size(); ++i) {
    absl::Status s = CheckParam(in[0], in[i], names[i - first], shape, mixed);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status CheckEps(const AttrMap& attrs, bool allow_default_sentinel) {
  absl::StatusOr<double> eps = GetFloat(attrs, "eps");
  if (!eps.ok()) return eps.status();
  if (allow_default_sentinel && *eps == -1.0) return absl::OkStatus();
  if (!(*eps >= 0)) return Error("eps must be >= 0, got ", *eps);
  return absl::OkStatus();
}

Outs SoftmaxMeta(absl::Span<const TensorType> in, const AttrMap& attrs) {
  const TensorType& x = in[0];
  absl::StatusOr<int64_t> dim = GetInt(attrs, "dim");
  if (!dim.ok()) return dim.status();
  absl::StatusOr<int64_t> d = meta::NormalizeDim(*dim, x.rank());
  if (!d.ok()) return d.status();
  absl::StatusOr<DType> dtype = GetDType(attrs, "dtype");
  if (!dtype.ok()) return dtype.status();
  DType out = *dtype == proto::DTYPE_UNSPECIFIED ? x.dtype : *dtype;
  if (!IsFloating(out)) {
    return Error("only supports floating point results, got ", DTypeName(out),
                 " (pass a floating dtype for integral inputs)");
  }
  return std::vector<TensorType>{meta::Out(out, x.shape, x.device)};
}

// layer_norm and rms_norm: normalized_shape names x's trailing dims.
absl::StatusOr<std::vector<SymExpr>> NormalizedShape(const TensorType& x, const AttrMap& attrs) {
  absl::StatusOr<SymList> ns = GetSyms(attrs, "normalized_shape");
  if (!ns.ok()) return ns.status();
  if (ns->empty()) return Error("normalized_shape must have at least one dimension");
  if (x.rank() < static_cast<int64_t>(ns->size()) ||
      !ShapesMayEqual(absl::MakeConstSpan(x.shape).subspan(x.rank() - ns->size()), *ns,
                      "the input's last dims are normalized_shape")) {
    return Error("input of shape ", meta::ShapeText(x.shape),
                 " does not end with normalized_shape ", meta::ShapeText(*ns));
  }
  return *ns;
}

Outs LayerNormMeta(absl::Span<const TensorType> in, const AttrMap& attrs) {
  const TensorType& x = in[0];
  absl::Status s = RequireFloating(x);
  if (!s.ok()) return s;
  absl::StatusOr<std::vector<SymExpr>> ns = NormalizedShape(x, attrs);
  if (!ns.ok()) return ns.status();
  s = CheckParams(in, 1, {"weight", "bias"}, *ns);
  if (!s.ok()) return s;
  s = CheckEps(attrs, false);
  if (!s.ok()) return s;
  return std::vector<TensorType>{meta::Out(x.dtype, x.shape, x.device)};
}

Outs RmsNormMeta(absl::Span<const TensorType> in, const AttrMap& attrs) {
  const TensorType& x = in[0];
  absl::Status s = RequireFloating(x);
  if (!s.ok()) return s;
  absl::StatusOr<std::vector<SymExpr>> ns = NormalizedShape(x, attrs);
  if (!ns.ok()) return ns.status();
  s = CheckParams(in, 1, {"weight"}, *ns);
  if (!s.ok()) return s;
  s = CheckEps(attrs, true);
  if (!s.ok()) return s;
  return std::vector<TensorType>{meta::Out(x.dtype, x.shape, x.device)};
}

Outs BatchNormMeta(absl::Span<const TensorType> in, const AttrMap& attrs) {
  const TensorType& x = in[0];
  absl::Status s = RequireFloating(x);
  if (!s.ok()) return s;
  absl::StatusOr<bool> training = GetBool(attrs, "training");
  if (!training.ok()) return training.status();
  if (x.rank() < 2) {
    return Error("expected an input with at least 2 dims (N, C, ...), got ", x.ToString());
  }
  s = CheckParams(in, 1, {"running_mean", "running_var", "weight", "bias"}, {x.shape[1]},
                  /*mixed=*/true);
  if (!s.ok()) return s;
  s = CheckEps(attrs, false);
  if (!s.ok()) return s;
  std::vector<TensorType> out = {meta::Out(x.dtype, x.shape, x.device)};
  if (*training) {
    // Batch statistics over every dim but 1; the updated running statistics are outputs 1
    // and 2 (the functional form of PyTorch's in-place update).
    absl::StatusOr<double> momentum = GetFloat(attrs, "momentum");
    if (!momentum.ok()) return momentum.status();
    if (!(*momentum >= 0 && *momentum <= 1)) {
      return Error("momentum must be in [0, 1], got ", *momentum);
    }
    SymExpr per_channel(1);
    for (int64_t d = 0; d < x.rank(); ++d) {
      if (d != 1) per_channel = per_channel * x.shape[d];
    }
    if (!MayBeLe(SymExpr(2), per_channel, "more than 1 value per channel when training")) {
      return Error("expected more than 1 value per channel when training, got input size ",
                   meta::ShapeText(x.shape));
    }
    out.push_back(meta::Out(in[1].dtype, in[1].shape, in[1].device));
    out.push_back(meta::Out(in[2].dtype, in[2].shape, in[2].device));
  }
  return out;
}

Outs GroupNormMeta(absl::Span<const TensorType> in, const AttrMap& attrs) {
  const TensorType& x = in[0];
  absl::Status s = RequireFloating(x);
  if (!s.ok()) return s;
  if (x.rank() < 2) {
    return Error("expected an input with at least 2 dims (N, C, ...), got ", x.ToString());
  }
  absl::StatusOr<int64_t> groups = GetInt(attrs, "num_groups");
  if (!groups.ok()) return groups.status();
  if (*groups <= 0) return Error("num_groups must be positive, got ", *groups);
  const SymExpr& c = x.shape[1];
  if (SymExpr::Mod(c, *groups) != SymExpr(0) && c.is_constant()) {
    return Error("expected the number of channels to be divisible by num_groups, got input of "
                 "shape ", meta::ShapeText(x.shape), " and num_groups=", *groups);
  }
  s = CheckParams(in, 1, {"weight", "bias"}, {c});
  if (!s.ok()) return s;
  s = CheckEps(attrs, false);
  if (!s.ok()) return s;
  return std::vector<TensorType>{meta::Out(x.dtype, x.shape, x.device)};
}

Outs InstanceNormMeta(absl::Span<const TensorType> in, const AttrMap& attrs) {
  const TensorType& x = in[0];
  absl::Status s = RequireFloating(x);
  if (!s.ok()) return s;
  if (x.rank() < 3) {
    return Error("expected an input with at least 3 dims (N, C, spatial...), got ",
                 x.ToString());
  }
  SymExpr spatial = 1;
  for (int64_t d = 2; d < x.rank(); ++d) spatial *= x.shape[d];
  if (spatial == SymExpr(1)) {
    return Error("expected more than 1 spatial element when using input statistics, got "
                 "input of shape ", meta::ShapeText(x.shape));
  }
  s = CheckParams(in, 1, {"weight", "bias"}, {x.shape[1]});
  if (!s.ok()) return s;
  s = CheckEps(attrs, false);
  if (!s.ok()) return s;
  return std::vector<TensorType>{meta::Out(x.dtype, x.shape, x.device)};
}

Outs LocalResponseNormMeta(absl::Span<const TensorType> in, const AttrMap& attrs) {
  const TensorType& x = in[0];
  absl::Status s = RequireFloating(x);
  if (!s.ok()) return s;
  if (x.rank() < 3) {
    return Error("expected 3D or higher dimensionality input (got ", x.rank(), " dimensions)");
  }
  absl::StatusOr<int64_t> size = GetInt(attrs, "size");
  if (!size.ok()) return size.status();
  if (*size <= 0) return Error("size must be positive, got ", *size);
  return std::vector<TensorType>{meta::Out(x.dtype, x.shape, x.device)};
}

Outs DropoutMeta(absl::Span<const TensorType> in, const AttrMap& attrs) {
  absl::StatusOr<double> p = GetFloat(attrs, "p");
  if (!p.ok()) return p.status();
  if (!(*p >= 0 && *p <= 1)) {
    return Error("dropout probability has to be between 0 and 1, but got ", *p);
  }
  absl::StatusOr<bool> train = GetBool(attrs, "train");
  if (!train.ok()) return train.status();
  absl::StatusOr<int64_t> seed = GetInt(attrs, "seed");
  if (!seed.ok()) return seed.status();
  // The counter offset: a constant, or symbolic when a run-time input's value binds it (a
  // fresh mask per call without a recompile; SymbolInfo::value_of).
  absl::StatusOr<SymExpr> offset = GetSym(attrs, "offset");
  if (!offset.ok()) return offset.status();
  if (*train && *p != 0 && *seed < 0) {
    return Error("train=true needs a seed attribute (seed >= 0; the mask is "
                 "prims.philox_uniform(seed, offset)); train=false is the identity");
  }
  if (offset->is_constant() && offset->constant() < 0) {
    return Error("offset must be >= 0, got ", offset->constant());
  }
  return std::vector<TensorType>{meta::Out(in[0].dtype, in[0].shape, in[0].device)};
}

void Register(OpRegistry& r, std::string name, std::vector<OpInput> inputs,
              std::vector<AttrSpec> attrs, OpClass op_class, MetaFn meta, std::string doc) {
  r.Register(meta::MakeSchema(std::move(name), std::move(inputs), std::move(attrs), op_class,
                              std::move(meta), std::move(doc)));
}

AttrSpec Eps() { return {"eps", AttrKind::kFloat, Attribute(1e-5)}; }

}  // namespace

void RegisterNormalizationOps(OpRegistry& r) {
  for (const char* name : {"aten.softmax", "aten.log_softmax"}) {
    Register(r, name, {{"self"}},
             {{"dim", AttrKind::kInt, std::nullopt},
              {"dtype", AttrKind::kDType, Attribute(proto::DTYPE_UNSPECIFIED)}},
             OpClass::kReduction, SoftmaxMeta,
             absl::StrCat("torch.", std::string(name).substr(5),
                          "(self, dim, dtype): the input is cast to dtype first (None = "
                          "DTYPE_UNSPECIFIED); the result must be floating (no half_to_float)"));
  }
  Register(r, "aten.layer_norm", {{"input"}, {"weight", true}, {"bias", true}},
           {{"normalized_shape", AttrKind::kSyms, std::nullopt}, Eps()},
           OpClass::kNormalization, LayerNormMeta,
           "F.layer_norm(input, normalized_shape, weight, bias, eps): output y only");
  Register(r, "aten.batch_norm",
           {{"input"}, {"running_mean"}, {"running_var"}, {"weight", true}, {"bias", true}},
           {{"training", AttrKind::kBool, Attribute(false)},
            {"momentum", AttrKind::kFloat, Attribute(0.1)}, Eps()},
           OpClass::kNormalization, BatchNormMeta,
           "F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, "
           "eps): training=false: y only, normalized with the running statistics; "
           "training=true: (y, new running_mean, new running_var), y normalized with the batch "
           "statistics over every dim but 1 and the running statistics blended with momentum "
           "(the unbiased batch variance), the functional form of PyTorch's in-place update; "
           "f32 parameters with a bf16/f16 input are accepted, as PyTorch's CPU kernel");
  Register(r, "aten.group_norm", {{"input"}, {"weight", true}, {"bias", true}},
           {{"num_groups", AttrKind::kInt, std::nullopt}, Eps()}, OpClass::kNormalization,
           GroupNormMeta, "F.group_norm(input, num_groups, weight, bias, eps)");
  Register(r, "aten.rms_norm", {{"input"}, {"weight", true}},
           {{"normalized_shape", AttrKind::kSyms, std::nullopt},
            {"eps", AttrKind::kFloat, Attribute(-1.0)}},
           OpClass::kNormalization, RmsNormMeta,
           "F.rms_norm(input, normalized_shape, weight, eps) of torch 2.4: "
           "x * rsqrt(mean(x^2 over normalized dims) + eps) * weight; eps=-1 means None "
           "(the machine epsilon of the computing dtype: f64's in float64 oracle mode)");
  Register(r, "aten.instance_norm", {{"input"}, {"weight", true}, {"bias", true}},
           {{"momentum", AttrKind::kFloat, Attribute(0.1)}, Eps()}, OpClass::kNormalization,
           InstanceNormMeta,
           "F.instance_norm(input, None, None, weight, bias, use_input_stats=True, momentum, "
           "eps): statistics of each (sample, channel); no running stats (momentum unused)");
  Register(r, "aten.local_response_norm", {{"input"}},
           {{"size", AttrKind::kInt, std::nullopt},
            {"alpha", AttrKind::kFloat, Attribute(1e-4)},
            {"beta", AttrKind::kFloat, Attribute(0.75)},
            {"k", AttrKind::kFloat, Attribute(1.0)}},
           OpClass::kNormalization, LocalResponseNormMeta,
           "F.local_response_norm(input, size, alpha, beta, k): x / (k + alpha * "
           "mean of x^2 over a zero-padded window of `size` channels)^beta");
  Register(r, "aten.dropout", {{"input"}},
           {{"p", AttrKind::kFloat, std::nullopt}, {"train", AttrKind::kBool, std::nullopt},
            {"seed", AttrKind::kInt, Attribute(int64_t{-1}), false},
            {"offset", AttrKind::kSym, Attribute(int64_t{0}), false}},
           OpClass::kRandom, DropoutMeta,
           "aten.dropout(input, p, train, seed=-1, offset=0): train=false is the identity; "
           "train=true keeps element i where prims.philox_uniform(seed, offset)[i] < 1 - p and "
           "scales it by 1 / (1 - p) (p = 1: zeros); it needs seed >= 0, so the same mask can "
           "be drawn again (the backward recomputes it); the Tensor API fills seed -1 from "
           "the default generator (capture/random.h), the offset then a run-time input when "
           "compiled");
}

}  // namespace coil
