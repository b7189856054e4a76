// Schemas and meta functions of the unary elementwise ops: unary math, activations, clamps and
// the cast. Binary, tensor-scalar and ternary ops are in binary_ops.cc, creation ops in
// creation_ops.cc.
//
// dtype rules follow PyTorch 1.13. One deliberate difference throughout: torch's CPU build lacks
// float16 kernels for many math functions and activations ("not implemented for 'Half'");
// coil accepts float16 wherever it accepts float32, as torch's CUDA build does.
#include <functional>
#include <string>
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

enum class UnaryRule {
  kAny,        // the input's dtype
  kNoBool,     // the input's dtype; bool is an error
  kToFloat,    // floating inputs keep their dtype; integral and bool give f32
  kFloatOnly,  // floating inputs only
  kToBool,     // a bool result from any input
  kIntOrBool,  // integral or bool inputs only
  kSquare,     // the input's dtype, but bool gives i64 (torch.square is pow(x, 2))
};

absl::StatusOr<DType> UnaryDType(UnaryRule rule, DType in) {
  switch (rule) {
    case UnaryRule::kAny:
      return in;
    case UnaryRule::kNoBool:
      if (IsBool(in)) return meta::Error("is not supported for bool inputs");
      return in;
    case UnaryRule::kToFloat:
      return IsFloating(in) ? in : kDefaultFloat;
    case UnaryRule::kFloatOnly:
      if (!IsFloating(in)) {
        return meta::Error("needs a floating-point input, got ", DTypeName(in));
      }
      return in;
    case UnaryRule::kToBool:
      return proto::BOOL;
    case UnaryRule::kIntOrBool:
      if (IsFloating(in))
        return meta::Error("needs an integral or bool input, got ", DTypeName(in));
      return in;
    case UnaryRule::kSquare:
      return IsBool(in) ? proto::INT64 : in;
  }
  return in;
}

// Checks attributes once the output dtype is known.
using AttrCheck = std::function<absl::Status(DType out, const AttrMap& attrs)>;

MetaFn UnaryMeta(UnaryRule rule, AttrCheck check = nullptr) {
  return [rule, check](Types in, const AttrMap& attrs) -> MetaResult {
    absl::StatusOr<DType> dt = UnaryDType(rule, in[0].dtype);
    if (!dt.ok()) return dt.status();
    if (check) {
      if (absl::Status s = check(*dt, attrs); !s.ok()) return s;
    }
    return Single(*dt, in[0].shape, in[0].device);
  };
}

void Unary(OpRegistry& r, std::string name, UnaryRule rule, std::string doc,
           std::vector<AttrSpec> attrs = {}, AttrCheck check = nullptr) {
  OpSchema s;
  s.name = std::move(name);
  s.inputs = {{"self"}};
  s.attrs = std::move(attrs);
  s.op_class = OpClass::kElementwise;
  s.meta = UnaryMeta(rule, std::move(check));
  s.doc = std::move(doc);
  r.Register(std::move(s));
}

AttrSpec Float(std::string name, double def) { return {std::move(name), AttrKind::kFloat, def}; }
AttrSpec Bool(std::string name, bool def) { return {std::move(name), AttrKind::kBool, def}; }

// clamp / clamp_min / clamp_max: torch.result_type(self, min, max) with the bounds as Python
// numbers (an int attribute is a Python int, a float attribute a Python float).
MetaFn ClampMeta(bool fixed_min, bool fixed_max) {
  return [fixed_min, fixed_max](Types in, const AttrMap& attrs) -> MetaResult {
    bool has_min = fixed_min, has_max = fixed_max;
    if (!fixed_min && !fixed_max) {
      has_min = *GetBool(attrs, "has_min");
      has_max = *GetBool(attrs, "has_max");
      if (!has_min && !has_max) {
        return meta::Error("at least one of 'min' or 'max' must be given (has_min/has_max)");
      }
    }
    std::vector<const Attribute*> scalars;
    if (has_min) scalars.push_back(&attrs.find("min")->second);
    if (has_max) scalars.push_back(&attrs.find("max")->second);
    absl::StatusOr<DType> dt = elementwise_meta::PromoteWithScalars(in, scalars);
    if (!dt.ok()) return dt.status();
    return Single(*dt, in[0].shape, in[0].device);
  };
}

void RegisterClamp(OpRegistry& r) {
  OpSchema s;
  s.name = "aten.clamp";
  s.inputs = {{"self"}};
  s.attrs = {Float("min", 0.0), Float("max", 0.0), Bool("has_min", false), Bool("has_max", false)};
  s.meta = ClampMeta(false, false);
  s.doc =
      "torch.clamp(self, min, max); None bounds are has_min/has_max = false; "
      "min/max kind (int or float) decides promotion as a Python number";
  r.Register(std::move(s));
  s = OpSchema();
  s.name = "aten.clamp_min";
  s.inputs = {{"self"}};
  s.attrs = {{"min", AttrKind::kFloat, std::nullopt}};
  s.meta = ClampMeta(true, false);
  s.doc = "torch.clamp_min(self, min); min's kind decides promotion as a Python number";
  r.Register(std::move(s));
  s = OpSchema();
  s.name = "aten.clamp_max";
  s.inputs = {{"self"}};
  s.attrs = {{"max", AttrKind::kFloat, std::nullopt}};
  s.meta = ClampMeta(false, true);
  s.doc = "torch.clamp_max(self, max); max's kind decides promotion as a Python number";
  r.Register(std::move(s));
}

void RegisterCast(OpRegistry& r) {
  OpSchema s;
  s.name = "aten.to_dtype";
  s.inputs = {{"self"}};
  s.attrs = {{"dtype", AttrKind::kDType, std::nullopt}};
  s.meta = [](Types in, const AttrMap& attrs) -> MetaResult {
    return Single(*GetDType(attrs, "dtype"), in[0].shape, in[0].device);
  };
  s.doc =
      "Tensor.to(dtype): float -> int truncates toward zero, -> bool tests != 0 "
      "(always a new contiguous tensor)";
  r.Register(std::move(s));
}

void RegisterUnaryMath(OpRegistry& r) {
  using U = UnaryRule;
  Unary(r, "aten.abs", U::kNoBool, "torch.abs");
  Unary(r, "aten.neg", U::kNoBool, "torch.neg");
  for (const char* name :
       {"exp",   "exp2",  "expm1", "log",     "log2", "log10", "log1p",     "sqrt", "rsqrt",
        "sin",   "cos",   "tan",   "asin",    "acos", "atan",  "sinh",      "cosh", "tanh",
        "asinh", "acosh", "atanh", "sigmoid", "erf",  "erfc",  "reciprocal"}) {
    Unary(r, absl::StrCat("aten.", name), U::kToFloat,
          absl::StrCat("torch.", name, " (integral and bool inputs give float32)"));
  }
  for (const char* name : {"floor", "ceil", "trunc"}) {
    Unary(r, absl::StrCat("aten.", name), U::kNoBool,
          absl::StrCat("torch.", name, " (identity on integral inputs)"));
  }
  Unary(r, "aten.round", U::kNoBool,
        "torch.round with decimals=0: halves round to even (identity on integral inputs)");
  Unary(r, "aten.frac", U::kFloatOnly, "torch.frac: x - trunc(x)");
  Unary(r, "aten.sign", U::kAny, "torch.sign (sign(nan) = 0, as torch's CPU kernel)");
  Unary(r, "aten.signbit", U::kToBool, "torch.signbit");
  Unary(r, "aten.square", U::kSquare, "torch.square (bool gives int64)");
  for (const char* name : {"isnan", "isinf", "isfinite", "isposinf", "isneginf", "logical_not"}) {
    Unary(r, absl::StrCat("aten.", name), U::kToBool, absl::StrCat("torch.", name));
  }
  Unary(r, "aten.bitwise_not", U::kIntOrBool, "torch.bitwise_not (logical not on bool)");
  Unary(r, "aten.nan_to_num", U::kAny,
        "torch.nan_to_num(nan, posinf, neginf); None posinf/neginf (the dtype's largest finite "
        "values) are has_posinf/has_neginf = false; identity on integral and bool inputs",
        {Float("nan", 0.0), Float("posinf", 0.0), Float("neginf", 0.0), Bool("has_posinf", false),
         Bool("has_neginf", false)});
}

void RegisterActivations(OpRegistry& r) {
  using U = UnaryRule;
  Unary(r, "aten.relu", U::kNoBool, "torch.relu");
  Unary(r, "aten.relu6", U::kNoBool, "torch.nn.functional.relu6 (hardtanh(0, 6))");
  Unary(r, "aten.gelu", U::kFloatOnly, "torch.nn.functional.gelu(approximate='none'|'tanh')",
        {{"approximate", AttrKind::kString, std::string("none")}},
        [](DType, const AttrMap& attrs) -> absl::Status {
          std::string a = *GetString(attrs, "approximate");
          if (a != "none" && a != "tanh") {
            return meta::Error("approximate must be 'none' or 'tanh', got '", a, "'");
          }
          return absl::OkStatus();
        });
  Unary(r, "aten.silu", U::kFloatOnly, "torch.nn.functional.silu");
  Unary(r, "aten.mish", U::kFloatOnly,
        "torch.nn.functional.mish (coil also accepts bfloat16/float16, which torch's CPU lacks)");
  Unary(r, "aten.hardswish", U::kFloatOnly, "torch.nn.functional.hardswish");
  Unary(r, "aten.hardsigmoid", U::kFloatOnly, "torch.nn.functional.hardsigmoid");
  Unary(r, "aten.hardtanh", U::kNoBool,
        "torch.nn.functional.hardtanh(min_val, max_val): min(max(x, min_val), max_val); bounds "
        "are cast to integral input dtypes (coil allows a negative min_val for uint8)",
        {Float("min_val", -1.0), Float("max_val", 1.0)});
  Unary(r, "aten.softplus", U::kFloatOnly, "torch.nn.functional.softplus(beta, threshold)",
        {Float("beta", 1.0), Float("threshold", 20.0)});
  Unary(r, "aten.leaky_relu", U::kFloatOnly, "torch.nn.functional.leaky_relu(negative_slope)",
        {Float("negative_slope", 0.01)});
  Unary(r, "aten.elu", U::kFloatOnly,
        "aten.elu(alpha, scale, input_scale): x > 0 ? scale*x : alpha*scale*(exp(x*input_scale)-1)",
        {Float("alpha", 1.0), Float("scale", 1.0), Float("input_scale", 1.0)});
  Unary(r, "aten.selu", U::kFloatOnly, "torch.nn.functional.selu");
  Unary(r, "aten.celu", U::kFloatOnly, "torch.nn.functional.celu(alpha), alpha != 0",
        {Float("alpha", 1.0)}, [](DType, const AttrMap& attrs) -> absl::Status {
          if (*GetFloat(attrs, "alpha") == 0.0) return meta::Error("alpha cannot be 0 for CELU");
          return absl::OkStatus();
        });
  Unary(r, "aten.threshold", U::kNoBool,
        "torch.nn.functional.threshold(threshold, value): x > threshold ? x : value (both cast "
        "to the input dtype, so truncated for integral inputs)",
        {{"threshold", AttrKind::kFloat, std::nullopt}, {"value", AttrKind::kFloat, std::nullopt}});
  Unary(r, "aten.hardshrink", U::kFloatOnly, "torch.nn.functional.hardshrink(lambd)",
        {Float("lambd", 0.5)});
  Unary(r, "aten.softshrink", U::kFloatOnly,
        "torch.nn.functional.softshrink(lambd), lambd >= 0 (NaN gives 0, as torch)",
        {Float("lambd", 0.5)}, [](DType, const AttrMap& attrs) -> absl::Status {
          double l = *GetFloat(attrs, "lambd");
          if (l < 0) return meta::Error("lambd must be greater or equal to 0, got ", l);
          return absl::OkStatus();
        });
  Unary(r, "aten.log_sigmoid", U::kFloatOnly, "torch.nn.functional.logsigmoid");
  RegisterClamp(r);
}

}  // namespace

void RegisterElementwiseOps(OpRegistry& registry) {
  RegisterUnaryMath(registry);
  RegisterActivations(registry);
  RegisterCast(registry);
}

}  // namespace coil
