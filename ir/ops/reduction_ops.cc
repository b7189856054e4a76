// Schemas and meta functions of the reduction op family: sum, mean, prod, amax/amin,
// max_dim/min_dim, argmax/argmin, var/std (+ _mean), logsumexp, all/any, norm, cumsum/cumprod.
// Softmax, the normalizations and dropout live in normalization_ops.cc.
//
// Conventions shared by the family (PyTorch 1.13 semantics):
//   - `dim` lists: empty means "all dims" (torch's dim=None). Ops whose torch dim is a single
//     optional int (prod, argmax, argmin, all, any) take a list of at most one dim.
//   - `dtype`: DTYPE_UNSPECIFIED stands for torch's dtype=None.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/op_registry.h"
#include "ir/ops/meta_util.h"
#include "ir/ops/register_ops.h"
#include "ir/shape_assumption.h"

namespace coil {

void RegisterNormalizationOps(OpRegistry& registry);  // normalization_ops.cc

namespace {

using meta::Error;
using Outs = absl::StatusOr<std::vector<TensorType>>;

constexpr DType kNoDType = proto::DTYPE_UNSPECIFIED;

AttrSpec DimsAttr() { return {"dim", AttrKind::kInts, Attribute(IntList{})}; }
AttrSpec KeepdimAttr() { return {"keepdim", AttrKind::kBool, Attribute(false)}; }
AttrSpec DTypeAttr() { return {"dtype", AttrKind::kDType, Attribute(kNoDType)}; }

// The reduced dims (sorted, normalized) of a reduction over `attrs["dim"]`.
absl::StatusOr<std::vector<int64_t>> ReducedDims(const TensorType& x, const AttrMap& attrs,
                                                 bool single) {
  absl::StatusOr<IntList> dims = GetInts(attrs, "dim");
  if (!dims.ok()) return dims.status();
  if (single && dims->size() > 1) {
    return Error("takes at most one dim (an empty list means all dims), got ", dims->size());
  }
  absl::StatusOr<std::vector<int64_t>> n = meta::NormalizeDims(*dims, x.rank(), true);
  if (!n.ok()) return n.status();
  if (x.rank() == 0) n->clear();  // dim 0 / -1 of a scalar: nothing to reduce
  std::sort(n->begin(), n->end());
  return n;
}

std::vector<SymExpr> ReducedShape(const std::vector<SymExpr>& shape,
                                  const std::vector<int64_t>& dims, bool keepdim) {
  std::vector<SymExpr> out;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
    bool reduced = std::find(dims.begin(), dims.end(), d) != dims.end();
    if (!reduced) {
      out.push_back(shape[d]);
    } else if (keepdim) {
      out.push_back(1);
    }
  }
  return out;
}

// amax, max_dim, argmax, ...: reducing a size-0 dim has no identity. A symbolic size becomes
// a guard (ir/shape_assumption.h) that every runner checks; the reference kernel checks too.
absl::Status CheckNonEmpty(const TensorType& x, const std::vector<int64_t>& dims) {
  for (int64_t d : dims) {
    if (!MayBeLe(SymExpr(1), x.shape[d], "a max/min reduction's dim is not empty")) {
      return Error("expected reduction dim ", d, " to have non-zero size, input is ",
                   x.ToString());
    }
  }
  return absl::OkStatus();
}

// The explicit `dtype` attribute, or nullopt for DTYPE_UNSPECIFIED.
absl::StatusOr<std::optional<DType>> ExplicitDType(const AttrMap& attrs) {
  absl::StatusOr<DType> t = GetDType(attrs, "dtype");
  if (!t.ok()) return t.status();
  if (*t == kNoDType) return std::optional<DType>();
  if (!IsValidDType(*t)) return Error("dtype ", static_cast<int>(*t), " is not supported");
  return std::optional<DType>(*t);
}

// sum/prod/cumsum/cumprod: the dtype attribute, else int64 for integral and bool inputs.
absl::StatusOr<DType> AccumulateDType(const TensorType& x, const AttrMap& attrs) {
  absl::StatusOr<std::optional<DType>> t = ExplicitDType(attrs);
  if (!t.ok()) return t.status();
  if (t->has_value()) return **t;
  return IsFloating(x.dtype) ? x.dtype : proto::INT64;
}

absl::Status RequireFloating(const TensorType& x) {
  if (!IsFloating(x.dtype)) {
    return Error("only supports floating point inputs, got ", DTypeName(x.dtype));
  }
  return absl::OkStatus();
}

// A reduction whose output dtype is computed by `dtype_fn` from the input and attributes.
template <typename DTypeFn>
MetaFn ReduceMeta(bool single_dim, bool non_empty, int num_outputs, DTypeFn dtype_fn) {
  return [=](absl::Span<const TensorType> in, const AttrMap& attrs) -> Outs {
    const TensorType& x = in[0];
    absl::StatusOr<std::vector<int64_t>> dims = ReducedDims(x, attrs, single_dim);
    if (!dims.ok()) return dims.status();
    absl::StatusOr<bool> keepdim = GetBool(attrs, "keepdim");
    if (!keepdim.ok()) return keepdim.status();
    if (non_empty) {
      absl::Status s = CheckNonEmpty(x, *dims);
      if (!s.ok()) return s;
    }
    absl::StatusOr<DType> dtype = dtype_fn(x, attrs);
    if (!dtype.ok()) return dtype.status();
    std::vector<TensorType> out(num_outputs,
                                meta::Out(*dtype, ReducedShape(x.shape, *dims, *keepdim), x.device));
    return out;
  };
}

absl::StatusOr<DType> SameDType(const TensorType& x, const AttrMap&) { return x.dtype; }

absl::StatusOr<DType> FloatSameDType(const TensorType& x, const AttrMap&) {
  absl::Status s = RequireFloating(x);
  if (!s.ok()) return s;
  return x.dtype;
}

absl::StatusOr<DType> MeanDType(const TensorType& x, const AttrMap& attrs) {
  absl::StatusOr<std::optional<DType>> t = ExplicitDType(attrs);
  if (!t.ok()) return t.status();
  DType out = t->value_or(x.dtype);
  if (!IsFloating(out)) {
    return Error("could not infer output dtype: ", t->has_value() ? "the dtype" : "the input",
                 " must be floating point, got ", DTypeName(out));
  }
  return out;
}

absl::StatusOr<DType> ArgDType(const TensorType& x, const AttrMap&) {
  if (IsBool(x.dtype)) return Error("is not implemented for bool inputs (as in PyTorch)");
  return proto::INT64;
}

absl::StatusOr<DType> LogicalDType(const TensorType& x, const AttrMap&) {
  return x.dtype == proto::UINT8 ? proto::UINT8 : proto::BOOL;
}

absl::StatusOr<DType> LogsumexpDType(const TensorType& x, const AttrMap&) {
  return IsFloating(x.dtype) ? x.dtype : kDefaultFloat;
}

void Reduction(OpRegistry& r, std::string name, std::vector<AttrSpec> attrs, MetaFn meta,
               std::string doc, int num_outputs = 1) {
  r.Register(meta::MakeSchema(std::move(name), {{"self"}}, std::move(attrs), OpClass::kReduction,
                              std::move(meta), std::move(doc)));
}

// max_dim / min_dim: one required dim, outputs (values, indices).
Outs MaxDimMeta(absl::Span<const TensorType> in, const AttrMap& attrs) {
  const TensorType& x = in[0];
  absl::StatusOr<int64_t> dim = GetInt(attrs, "dim");
  if (!dim.ok()) return dim.status();
  absl::StatusOr<int64_t> d = meta::NormalizeDim(*dim, x.rank());
  if (!d.ok()) return d.status();
  absl::StatusOr<bool> keepdim = GetBool(attrs, "keepdim");
  if (!keepdim.ok()) return keepdim.status();
  std::vector<int64_t> dims;
  if (x.rank() > 0) dims.push_back(*d);
  absl::Status s = CheckNonEmpty(x, dims);
  if (!s.ok()) return s;
  std::vector<SymExpr> shape = ReducedShape(x.shape, dims, *keepdim);
  return std::vector<TensorType>{meta::Out(x.dtype, shape, x.device),
                                 meta::Out(proto::INT64, shape, x.device)};
}

// cumsum / cumprod: same shape, dtype as sum's.
Outs CumMeta(absl::Span<const TensorType> in, const AttrMap& attrs) {
  const TensorType& x = in[0];
  absl::StatusOr<int64_t> dim = GetInt(attrs, "dim");
  if (!dim.ok()) return dim.status();
  absl::StatusOr<int64_t> d = meta::NormalizeDim(*dim, x.rank());
  if (!d.ok()) return d.status();
  absl::StatusOr<DType> dtype = AccumulateDType(x, attrs);
  if (!dtype.ok()) return dtype.status();
  return std::vector<TensorType>{meta::Out(*dtype, x.shape, x.device)};
}

void RegisterCumulative(OpRegistry& r, std::string name, std::string doc) {
  r.Register(meta::MakeSchema(std::move(name), {{"self"}},
                              {{"dim", AttrKind::kInt, std::nullopt}, DTypeAttr()},
                              OpClass::kReduction, CumMeta, std::move(doc)));
}

}  // namespace

void RegisterReductionOps(OpRegistry& registry) {
  OpRegistry& r = registry;
  Reduction(r, "aten.sum", {DimsAttr(), KeepdimAttr(), DTypeAttr()},
            ReduceMeta(false, false, 1, AccumulateDType),
            "torch.sum(self, dim, keepdim, dtype): dim=[] means all dims, dtype "
            "DTYPE_UNSPECIFIED means None (integral/bool inputs give int64)");
  Reduction(r, "aten.mean", {DimsAttr(), KeepdimAttr(), DTypeAttr()},
            ReduceMeta(false, false, 1, MeanDType),
            "torch.mean(self, dim, keepdim, dtype): floating only; dim=[] means all dims; "
            "the mean of nothing is nan");
  Reduction(r, "aten.prod", {DimsAttr(), KeepdimAttr(), DTypeAttr()},
            ReduceMeta(true, false, 1, AccumulateDType),
            "torch.prod(self, dim, keepdim, dtype): dim is a list of at most one dim, [] "
            "means None (all dims)");
  for (const char* name : {"aten.amax", "aten.amin"}) {
    Reduction(r, name, {DimsAttr(), KeepdimAttr()}, ReduceMeta(false, true, 1, SameDType),
              absl::StrCat("torch.", std::string(name).substr(5),
                           "(self, dim, keepdim): dim=[] means all dims; nan propagates; "
                           "reducing a size-0 dim is an error"));
  }
  for (const char* name : {"aten.max_dim", "aten.min_dim"}) {
    Reduction(r, name, {{"dim", AttrKind::kInt, std::nullopt}, KeepdimAttr()}, MaxDimMeta,
              absl::StrCat("torch.", std::string(name).substr(5, 3),
                           "(self, dim, keepdim) -> (values, indices int64): first occurrence "
                           "wins ties, nan is extreme (index of the first nan)"),
              2);
  }
  for (const char* name : {"aten.argmax", "aten.argmin"}) {
    Reduction(r, name, {DimsAttr(), KeepdimAttr()}, ReduceMeta(true, true, 1, ArgDType),
              absl::StrCat("torch.", std::string(name).substr(5),
                           "(self, dim, keepdim): dim is a list of at most one dim, [] means "
                           "None (index into the flattened input); first occurrence; nan is "
                           "extreme"));
  }
  for (const char* name : {"aten.var", "aten.std", "aten.var_mean", "aten.std_mean"}) {
    std::string torch_name = std::string(name).substr(5);
    bool pair = torch_name.size() > 3;
    Reduction(r, name,
              {DimsAttr(), {"correction", AttrKind::kInt, Attribute(int64_t{1})}, KeepdimAttr()},
              ReduceMeta(false, false, pair ? 2 : 1, FloatSameDType),
              absl::StrCat("torch.", torch_name,
                           "(self, dim, correction=1, keepdim): floating only; dim=[] means all "
                           "dims; divides by max(0, N - correction)",
                           pair ? "; outputs (" + torch_name.substr(0, 3) + ", mean)" : ""),
              pair ? 2 : 1);
  }
  Reduction(r, "aten.logsumexp", {{"dim", AttrKind::kInts, std::nullopt}, KeepdimAttr()},
            ReduceMeta(false, false, 1, LogsumexpDType),
            "torch.logsumexp(self, dim, keepdim): integral inputs give float32; differs: "
            "dim=[] means all dims (torch 1.13 errors)");
  for (const char* name : {"aten.all", "aten.any"}) {
    Reduction(r, name, {DimsAttr(), KeepdimAttr()}, ReduceMeta(true, false, 1, LogicalDType),
              absl::StrCat("torch.", std::string(name).substr(5),
                           "(self, dim, keepdim): dim is a list of at most one dim, [] means "
                           "all; output bool (uint8 for uint8 inputs, as torch 1.13)"));
  }
  Reduction(r, "aten.norm",
            {{"p", AttrKind::kFloat, Attribute(2.0)}, DimsAttr(), KeepdimAttr()},
            ReduceMeta(false, false, 1, FloatSameDType),
            "torch.norm(self, p, dim, keepdim) as linalg.vector_norm: floating only; p is any "
            "float incl. 0 and +-inf ('fro' is p=2); dim=[] means all dims");
  RegisterCumulative(r, "aten.cumsum",
                     "torch.cumsum(self, dim, dtype): integral/bool inputs give int64");
  RegisterCumulative(r, "aten.cumprod",
                     "torch.cumprod(self, dim, dtype): integral/bool inputs give int64");
  RegisterNormalizationOps(registry);
}

}  // namespace coil
