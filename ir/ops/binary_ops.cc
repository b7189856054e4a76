// Schemas and meta functions of the binary elementwise ops: tensor-tensor ops (arithmetic,
// comparisons, logical and bitwise ops), their tensor-scalar forms and the ternary ops (where,
// lerp, addcmul, addcdiv, masked_fill). Unary ops are in elementwise_ops.cc, creation ops in
// creation_ops.cc.
//
// Tensor-scalar ops ("aten.add_scalar") take torch's Python-number operand as the attribute
// `other`: an int attribute promotes as a Python int, a float attribute as a Python float
// (torch's wrapped numbers), so add_scalar(i32 tensor, other=2) is i32 and other=2.0 gives f32.
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
using elementwise_meta::PromoteWithScalars;
using elementwise_meta::Single;
using elementwise_meta::Types;

enum class BinaryRule {
  kPromote,        // torch.result_type
  kNoBoolOperand,  // result_type; a bool operand is an error (subtraction)
  kNoBoolResult,   // result_type; a bool result is an error (pow, remainder, ...)
  kToFloat,        // result_type; integral and bool results become f32 (true division)
  kFloatResult,    // result_type, which must be floating (hypot)
  kCompare,        // bool; the operands must have a common dtype
  kLogical,        // bool, any operands
  kIntOrBool,      // result_type of integral or bool operands only (bitwise ops)
};

absl::StatusOr<DType> BinaryDType(BinaryRule rule, Types tensors, const Attribute* scalar) {
  if (rule == BinaryRule::kLogical) return proto::BOOL;
  std::vector<const Attribute*> scalars;
  if (scalar != nullptr) scalars.push_back(scalar);
  absl::StatusOr<DType> r = PromoteWithScalars(tensors, scalars);
  if (!r.ok()) return r.status();
  switch (rule) {
    case BinaryRule::kPromote:
    case BinaryRule::kLogical:
      return *r;
    case BinaryRule::kNoBoolOperand:
      for (const TensorType& t : tensors) {
        if (IsBool(t.dtype)) {
          return meta::Error(
              "subtraction with a bool tensor is not supported; use "
              "logical_not or logical_xor");
        }
      }
      return *r;
    case BinaryRule::kNoBoolResult:
      if (IsBool(*r)) return meta::Error("is not supported for bool operands");
      return *r;
    case BinaryRule::kToFloat:
      return IsFloating(*r) ? *r : kDefaultFloat;
    case BinaryRule::kFloatResult:
      if (!IsFloating(*r)) {
        return meta::Error("needs floating-point operands, got ", DTypeName(*r));
      }
      return *r;
    case BinaryRule::kCompare:
      return proto::BOOL;
    case BinaryRule::kIntOrBool:
      if (IsFloating(*r)) {
        return meta::Error("needs integral or bool operands, got ", DTypeName(*r));
      }
      return *r;
  }
  return *r;
}

// torch: "For integral input tensors, argument alpha must not be a floating point number."
absl::Status CheckAlpha(DType out, const AttrMap& attrs) {
  auto it = attrs.find("alpha");
  if (it == attrs.end() || IsFloating(out) || KindOf(it->second) != AttrKind::kFloat) {
    return absl::OkStatus();
  }
  return meta::Error("for integral inputs, alpha must not be a floating-point number, got ",
                     AttrToString(it->second));
}

absl::StatusOr<BinaryRule> DivRule(const AttrMap& attrs) {
  std::string mode = *GetString(attrs, "rounding_mode");
  if (mode.empty()) return BinaryRule::kToFloat;
  if (mode == "trunc" || mode == "floor") return BinaryRule::kNoBoolResult;
  return meta::Error("rounding_mode must be '', 'trunc' or 'floor', got '", mode, "'");
}

// Tensor-tensor (`scalar_attr` empty) or tensor-scalar ops; `div` picks the rule from
// rounding_mode.
MetaFn BinaryMeta(BinaryRule rule, std::string scalar_attr, bool div = false) {
  return [rule, scalar_attr, div](Types in, const AttrMap& attrs) -> MetaResult {
    BinaryRule rl = rule;
    if (div) {
      absl::StatusOr<BinaryRule> d = DivRule(attrs);
      if (!d.ok()) return d.status();
      rl = *d;
    }
    const Attribute* scalar = scalar_attr.empty() ? nullptr : &attrs.find(scalar_attr)->second;
    absl::StatusOr<DType> dt = BinaryDType(rl, in, scalar);
    if (!dt.ok()) return dt.status();
    if (absl::Status s = CheckAlpha(*dt, attrs); !s.ok()) return s;
    absl::StatusOr<std::vector<SymExpr>> shape = meta::BroadcastAll(in);
    if (!shape.ok()) return shape.status();
    absl::StatusOr<Device> device = meta::CommonDevice(in);
    if (!device.ok()) return device.status();
    return Single(*dt, *std::move(shape), *device);
  };
}

AttrSpec Alpha() { return {"alpha", AttrKind::kFloat, Attribute(int64_t{1})}; }
AttrSpec Other() { return {"other", AttrKind::kFloat, std::nullopt}; }
AttrSpec RoundingMode() { return {"rounding_mode", AttrKind::kString, std::string()}; }

void Binary(OpRegistry& r, std::string name, BinaryRule rule, std::string doc,
            std::vector<AttrSpec> attrs = {}, bool div = false) {
  OpSchema s;
  s.name = std::move(name);
  s.inputs = {{"self"}, {"other"}};
  s.attrs = std::move(attrs);
  s.meta = BinaryMeta(rule, "", div);
  s.doc = std::move(doc);
  r.Register(std::move(s));
}

void Scalar(OpRegistry& r, std::string name, BinaryRule rule, std::string doc,
            std::vector<AttrSpec> attrs = {}, bool div = false) {
  OpSchema s;
  s.name = std::move(name);
  s.inputs = {{"self"}};
  s.attrs = {Other()};
  for (AttrSpec& a : attrs) s.attrs.push_back(std::move(a));
  s.meta = BinaryMeta(rule, "other", div);
  s.doc = std::move(doc);
  r.Register(std::move(s));
}

void RegisterBinary(OpRegistry& r) {
  using B = BinaryRule;
  Binary(r, "aten.add", B::kPromote, "torch.add(self, other, alpha): self + alpha*other",
         {Alpha()});
  Binary(r, "aten.sub", B::kNoBoolOperand, "torch.sub(self, other, alpha): self - alpha*other",
         {Alpha()});
  Binary(r, "aten.rsub", B::kNoBoolOperand, "torch.rsub(self, other, alpha): other - alpha*self",
         {Alpha()});
  Binary(r, "aten.mul", B::kPromote, "torch.mul");
  Binary(r, "aten.div", B::kToFloat,
         "torch.div(rounding_mode='' (true division) | 'trunc' | 'floor'); integer division by "
         "zero is a runtime error",
         {RoundingMode()}, /*div=*/true);
  Binary(r, "aten.floor_divide", B::kNoBoolResult, "torch.floor_divide (rounds toward -inf)");
  Binary(r, "aten.remainder", B::kNoBoolResult, "torch.remainder (sign of the divisor)");
  Binary(r, "aten.fmod", B::kNoBoolResult, "torch.fmod (sign of the dividend)");
  Binary(r, "aten.pow", B::kNoBoolResult,
         "torch.pow(tensor, tensor); integers to negative powers give 0 (1 and -1 excepted)");
  Binary(r, "aten.maximum", B::kPromote, "torch.maximum (NaN propagates)");
  Binary(r, "aten.minimum", B::kPromote, "torch.minimum (NaN propagates)");
  Binary(r, "aten.fmax", B::kPromote, "torch.fmax (NaN ignored unless both are NaN)");
  Binary(r, "aten.fmin", B::kPromote, "torch.fmin (NaN ignored unless both are NaN)");
  Binary(r, "aten.atan2", B::kToFloat, "torch.atan2");
  Binary(r, "aten.copysign", B::kToFloat, "torch.copysign");
  Binary(r, "aten.hypot", B::kFloatResult, "torch.hypot");
  for (const char* name : {"eq", "ne", "lt", "le", "gt", "ge"}) {
    Binary(r, absl::StrCat("aten.", name), B::kCompare,
           absl::StrCat("torch.", name, ", compared in the promoted dtype"));
  }
  for (const char* name : {"logical_and", "logical_or", "logical_xor"}) {
    Binary(r, absl::StrCat("aten.", name), B::kLogical, absl::StrCat("torch.", name));
  }
  for (const char* name : {"bitwise_and", "bitwise_or", "bitwise_xor"}) {
    Binary(r, absl::StrCat("aten.", name), B::kIntOrBool, absl::StrCat("torch.", name));
  }
}

void RegisterScalar(OpRegistry& r) {
  using B = BinaryRule;
  Scalar(r, "aten.add_scalar", B::kPromote, "torch.add(self, other: number, alpha)", {Alpha()});
  Scalar(r, "aten.sub_scalar", B::kNoBoolOperand, "torch.sub(self, other: number, alpha)",
         {Alpha()});
  Scalar(r, "aten.rsub_scalar", B::kNoBoolOperand,
         "torch.rsub(self, other: number, alpha): other - alpha*self", {Alpha()});
  Scalar(r, "aten.mul_scalar", B::kPromote, "torch.mul(self, other: number)");
  Scalar(r, "aten.div_scalar", B::kToFloat,
         "torch.div(self, other: number, rounding_mode); integer division by zero is a "
         "runtime error",
         {RoundingMode()}, /*div=*/true);
  Scalar(r, "aten.remainder_scalar", B::kNoBoolResult, "torch.remainder(self, other: number)");
  Scalar(r, "aten.fmod_scalar", B::kNoBoolResult, "torch.fmod(self, other: number)");
  for (const char* name : {"eq", "ne", "lt", "le", "gt", "ge"}) {
    Scalar(r, absl::StrCat("aten.", name, "_scalar"), B::kCompare,
           absl::StrCat("torch.", name, "(self, other: number), compared in the promoted dtype"));
  }
  // pow_scalar: also rejects integral ** negative int, as torch.
  OpSchema s;
  s.name = "aten.pow_scalar";
  s.inputs = {{"self"}};
  s.attrs = {Other()};
  MetaFn base = BinaryMeta(B::kNoBoolResult, "other");
  s.meta = [base](Types in, const AttrMap& attrs) -> MetaResult {
    MetaResult out = base(in, attrs);
    if (!out.ok()) return out;
    const Attribute& e = attrs.find("other")->second;
    if (!IsFloating((*out)[0].dtype) && KindOf(e) == AttrKind::kInt && std::get<int64_t>(e) < 0) {
      return meta::Error("integers to negative integer powers are not allowed (exponent ",
                         std::get<int64_t>(e), ")");
    }
    return out;
  };
  s.doc = "torch.pow(self, other: number); integral ** negative int is an error, as in torch";
  r.Register(std::move(s));
}

// Broadcast shape and common device of all inputs.
absl::StatusOr<std::pair<std::vector<SymExpr>, Device>> ShapeAndDevice(Types in) {
  absl::StatusOr<std::vector<SymExpr>> shape = meta::BroadcastAll(in);
  if (!shape.ok()) return shape.status();
  absl::StatusOr<Device> device = meta::CommonDevice(in);
  if (!device.ok()) return device.status();
  return std::make_pair(*std::move(shape), *device);
}

absl::Status CheckMask(DType t, absl::string_view what) {
  if (t == proto::BOOL || t == proto::UINT8) return absl::OkStatus();
  return meta::Error(what, " must be a bool (or uint8) tensor, got ", DTypeName(t));
}

void RegisterTernary(OpRegistry& r) {
  OpSchema s;
  s.name = "aten.where";
  s.inputs = {{"condition"}, {"self"}, {"other"}};
  s.meta = [](Types in, const AttrMap&) -> MetaResult {
    if (absl::Status st = CheckMask(in[0].dtype, "condition"); !st.ok()) return st;
    absl::StatusOr<DType> dt = PromoteWithScalars(in.subspan(1), {});
    if (!dt.ok()) return dt.status();
    auto sd = ShapeAndDevice(in);
    if (!sd.ok()) return sd.status();
    return Single(*dt, sd->first, sd->second);
  };
  s.doc = "torch.where(condition, self, other)";
  r.Register(std::move(s));

  s = OpSchema();
  s.name = "aten.lerp";
  s.inputs = {{"self"}, {"end"}, {"weight"}};
  s.meta = [](Types in, const AttrMap&) -> MetaResult {
    for (int i = 1; i < 3; ++i) {
      if (in[i].dtype != in[0].dtype) {
        return meta::Error("expected dtype ", DTypeName(in[0].dtype), " for '",
                           i == 1 ? "end" : "weight", "' but got ", DTypeName(in[i].dtype));
      }
    }
    if (!IsFloating(in[0].dtype)) {
      return meta::Error("needs floating-point inputs, got ", DTypeName(in[0].dtype));
    }
    auto sd = ShapeAndDevice(in);
    if (!sd.ok()) return sd.status();
    return Single(in[0].dtype, sd->first, sd->second);
  };
  s.doc = "torch.lerp(self, end, weight: tensor); all three of one floating dtype";
  r.Register(std::move(s));

  for (bool div : {false, true}) {
    s = OpSchema();
    s.name = div ? "aten.addcdiv" : "aten.addcmul";
    s.inputs = {{"self"}, {"tensor1"}, {"tensor2"}};
    s.attrs = {{"value", AttrKind::kFloat, Attribute(int64_t{1})}};
    s.meta = [div](Types in, const AttrMap&) -> MetaResult {
      if (div && !IsFloating(in[1].dtype) && !IsFloating(in[2].dtype)) {
        return meta::Error("integer division with addcdiv is not supported (tensor1 is ",
                           DTypeName(in[1].dtype), ", tensor2 is ", DTypeName(in[2].dtype), ")");
      }
      absl::StatusOr<DType> dt = PromoteWithScalars(in, {});
      if (!dt.ok()) return dt.status();
      if (IsBool(*dt)) return meta::Error("is not supported for bool operands");
      auto sd = ShapeAndDevice(in);
      if (!sd.ok()) return sd.status();
      return Single(*dt, sd->first, sd->second);
    };
    s.doc = div ? "torch.addcdiv(self, tensor1, tensor2, value): self + value*tensor1/tensor2"
                : "torch.addcmul(self, tensor1, tensor2, value): self + value*tensor1*tensor2 "
                  "(value is truncated for integral results, as torch)";
    r.Register(std::move(s));
  }

  s = OpSchema();
  s.name = "aten.masked_fill";
  s.inputs = {{"self"}, {"mask"}};
  s.attrs = {{"value", AttrKind::kFloat, std::nullopt}};
  s.meta = [](Types in, const AttrMap&) -> MetaResult {
    if (absl::Status st = CheckMask(in[1].dtype, "mask"); !st.ok()) return st;
    auto sd = ShapeAndDevice(in);
    if (!sd.ok()) return sd.status();
    return Single(in[0].dtype, sd->first, sd->second);
  };
  s.doc =
      "torch.masked_fill(self, mask, value: number): self's dtype, shape broadcast with the "
      "mask; value cast to the dtype (truncated for integers); coil requires a bool or uint8 "
      "mask";
  r.Register(std::move(s));
}

}  // namespace

void RegisterBinaryOps(OpRegistry& registry) {
  RegisterBinary(registry);
  RegisterScalar(registry);
  RegisterTernary(registry);
}

}  // namespace coil
