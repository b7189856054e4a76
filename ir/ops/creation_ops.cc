// Schemas and meta functions of the creation ops: full, zeros, ones, arange and the *_like
// ops (zeros_like, ones_like, full_like), which make a new tensor from attributes (and, for
// *_like, another tensor's shape and dtype) rather than from input values.
//
// Without has_dtype, the dtype is inferred as torch infers it from the Python numbers given
// (int64 for ints, float32 for floats) or, for *_like, taken from the input.
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/op_registry.h"
#include "ir/ops/elementwise_meta.h"
#include "ir/ops/meta_util.h"
#include "ir/ops/register_ops.h"

namespace coil {
namespace {

using elementwise_meta::MetaResult;
using elementwise_meta::Single;
using elementwise_meta::Types;

absl::Status CheckSizes(const std::vector<SymExpr>& size) {
  for (const SymExpr& d : size) {
    if (d.is_constant() && d.constant() < 0) {
      return meta::Error("sizes must be non-negative, got ", d.ToString());
    }
  }
  return absl::OkStatus();
}

AttrSpec DTypeAttr() { return {"dtype", AttrKind::kDType, proto::FLOAT32}; }
AttrSpec HasDType() { return {"has_dtype", AttrKind::kBool, false}; }

// The output dtype of a creation op: `dtype` when has_dtype, else `inferred`.
DType PickDType(const AttrMap& attrs, DType inferred) {
  return *GetBool(attrs, "has_dtype") ? *GetDType(attrs, "dtype") : inferred;
}

bool IsWhole(double v) { return std::floor(v) == v && std::fabs(v) < 9.0e18; }

absl::StatusOr<SymExpr> ArangeLength(const AttrMap& attrs, DType dtype) {
  const Attribute& start_a = attrs.find("start")->second;
  const Attribute& step_a = attrs.find("step")->second;
  SymExpr end = *GetSym(attrs, "end");
  double start = *GetFloat(attrs, "start");
  double step = *GetFloat(attrs, "step");
  if (dtype == proto::INT64) {  // torch casts the bounds to int64 first
    start = std::trunc(start);
    step = std::trunc(step);
  }
  if (step == 0 || std::isnan(step) || std::isnan(start)) {
    return meta::Error("step must be nonzero and bounds finite (start ", AttrToString(start_a),
                       ", step ", AttrToString(step_a), ")");
  }
  if (end.is_constant()) {
    double len = std::ceil((static_cast<double>(end.constant()) - start) / step);
    if (len < 0) {
      return meta::Error("upper bound and larger bound inconsistent with step sign (start ",
                         AttrToString(start_a), ", end ", end.ToString(), ", step ",
                         AttrToString(step_a), ")");
    }
    if (!(len < 9.0e18)) return meta::Error("arange length ", len, " is too large");
    return SymExpr(static_cast<int64_t>(len));
  }
  if (!IsWhole(start) || !IsWhole(step)) {
    return meta::Error("a symbolic end (", end.ToString(),
                       ") needs whole-number start and step, got ", AttrToString(start_a), " and ",
                       AttrToString(step_a));
  }
  int64_t s = static_cast<int64_t>(start), k = static_cast<int64_t>(step);
  // ceil((end - start) / step) for integers.
  return SymExpr::FloorDiv(end - s + k + (k > 0 ? -1 : 1), k);
}

}  // namespace

void RegisterCreationOps(OpRegistry& r) {
  auto size_attr = AttrSpec{"size", AttrKind::kSyms, std::nullopt};
  auto sized = [](DType (*dtype)(const AttrMap&)) {
    return [dtype](Types, const AttrMap& attrs) -> MetaResult {
      SymList size = *GetSyms(attrs, "size");
      if (absl::Status s = CheckSizes(size); !s.ok()) return s;
      return Single(dtype(attrs), std::move(size), Device{});
    };
  };
  OpSchema s;
  s.name = "aten.full";
  s.attrs = {size_attr, {"value", AttrKind::kFloat, std::nullopt}, DTypeAttr(), HasDType()};
  s.op_class = OpClass::kCreation;
  s.meta = sized([](const AttrMap& attrs) {
    bool is_int = KindOf(attrs.find("value")->second) == AttrKind::kInt;
    return PickDType(attrs, is_int ? proto::INT64 : kDefaultFloat);
  });
  s.doc =
      "torch.full(size, value) on the CPU; without has_dtype the dtype is int64 for an int "
      "value and float32 for a float one, as torch (a bool fill: value 0/1 with dtype bool)";
  r.Register(std::move(s));
  for (bool one : {false, true}) {
    s = OpSchema();
    s.name = one ? "aten.ones" : "aten.zeros";
    s.attrs = {size_attr, DTypeAttr()};
    s.op_class = OpClass::kCreation;
    s.meta = sized([](const AttrMap& attrs) { return *GetDType(attrs, "dtype"); });
    s.doc = absl::StrCat("torch.", one ? "ones" : "zeros", "(size, dtype) on the CPU");
    r.Register(std::move(s));
  }

  s = OpSchema();
  s.name = "aten.arange";
  s.attrs = {{"start", AttrKind::kFloat, Attribute(int64_t{0})},
             {"end", AttrKind::kSym, std::nullopt},
             {"step", AttrKind::kFloat, Attribute(int64_t{1})},
             DTypeAttr(),
             HasDType()};
  s.op_class = OpClass::kCreation;
  s.meta = [](Types, const AttrMap& attrs) -> MetaResult {
    bool all_int = KindOf(attrs.find("start")->second) == AttrKind::kInt &&
                   KindOf(attrs.find("step")->second) == AttrKind::kInt;
    DType dt = PickDType(attrs, all_int ? proto::INT64 : kDefaultFloat);
    if (!IsFloating(dt) && !IsIntegral(dt)) {
      return meta::Error("dtype ", DTypeName(dt), " is not supported");
    }
    absl::StatusOr<SymExpr> len = ArangeLength(attrs, dt);
    if (!len.ok()) return len.status();
    return Single(dt, {*len}, Device{});
  };
  s.doc =
      "torch.arange(start, end, step) on the CPU: length ceil((end - start) / step); coil's "
      "end is an integer (maybe symbolic, then start and step must be whole); without "
      "has_dtype the dtype is int64 when start and step are int attributes, else float32";
  r.Register(std::move(s));

  for (int kind = 0; kind < 3; ++kind) {
    const char* names[] = {"aten.zeros_like", "aten.ones_like", "aten.full_like"};
    s = OpSchema();
    s.name = names[kind];
    s.inputs = {{"self"}};
    if (kind == 2) s.attrs.push_back({"value", AttrKind::kFloat, std::nullopt});
    s.attrs.push_back(DTypeAttr());
    s.attrs.push_back(HasDType());
    s.op_class = OpClass::kCreation;
    s.meta = [](Types in, const AttrMap& attrs) -> MetaResult {
      return Single(PickDType(attrs, in[0].dtype), in[0].shape, in[0].device);
    };
    s.doc = absl::StrCat("torch.", names[kind] + 5,
                         "(self, dtype): self's dtype unless has_dtype; contiguous",
                         kind == 2 ? "; value cast to the dtype (truncated for integers)" : "");
    r.Register(std::move(s));
  }
}

}  // namespace coil
