// Decompositions of the binary elementwise ops (see register.h), the ops of
// ir/ops/binary_ops.cc: arithmetic, comparisons, logical and bitwise ops, their *_scalar forms
// and the ternary ops (where, lerp, addcmul, addcdiv, masked_fill). Creation ops are in
// creation.cc.
//
// Operands are converted to the dtype torch computes in before any arithmetic: the output
// dtype (f32 for f16/bf16, as torch's opmath) for arithmetic, torch.result_type of the
// operands for comparisons. A *_scalar op's Python-number `other` becomes a rank-0
// `prims.full` of that dtype, converted as torch converts a wrapped number.
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "ir/dtype.h"
#include "prims/decomposition_registry.h"
#include "prims/decompositions/binary_internal.h"
#include "prims/decompositions/register.h"

namespace coil::prims {
namespace binary_internal {

Val Number(const OpCall& c, absl::string_view attr, DType dtype, SymList shape) {
  const Attribute* a = c.Raw(attr);
  if (a == nullptr) {
    c.e().Fail(c.op(), ": attribute ", attr, " is missing");
    return Val();
  }
  Attribute value = *a;
  if (const bool* b = std::get_if<bool>(a)) value = int64_t{*b ? 1 : 0};
  return c.e().Op1("prims.full", {},
                   {{"shape", std::move(shape)}, {"value", value}, {"dtype", dtype}});
}

}  // namespace binary_internal

namespace {

using binary_internal::Number;

// The two operands of a binary op converted to `dtype` (a *_scalar op's `other` attribute as
// a rank-0 tensor).
std::pair<Val, Val> Operands(const OpCall& c, DType dtype) {
  Val a = Cast(c.in(0), dtype);
  Val b = c.has_in(1) ? Cast(c.in(1), dtype) : Number(c, "other", dtype);
  return {a, b};
}

// torch.result_type of the op's tensors and its `other` number, if any.
DType ResultType(const OpCall& c) {
  ResultTypeBuilder b;
  for (const Val& v : c.inputs()) {
    b.Add(v.dtype(), v.rank() == 0 ? OperandKind::kZeroDim : OperandKind::kDimensioned);
  }
  if (const Attribute* other = c.Raw("other")) {
    b.Add(KindOf(*other) == AttrKind::kFloat ? proto::FLOAT64 : proto::INT64,
          OperandKind::kWrappedNumber);
  }
  return b.Result();
}

// alpha * b, or b when alpha is 1 (alpha converted to b's dtype, as torch).
Val Alpha(const OpCall& c, Val b) {
  if (c.Float("alpha") == 1.0) return b;
  return Number(c, "alpha", b.dtype()) * b;
}

// copysign(0, q): a zero with q's sign.
Val SignedZero(Val q) { return Where(Signbit(q), FullLike(q, -0.0), 0.0); }

// Floating floor division, torch's div_floor_floating:
//   b == 0 ? a / b : round-to-nearest-integer of ((a - fmod(a, b)) / b, minus 1 when the
//   remainder's sign differs from b's); a zero quotient keeps the sign of a / b.
Val FloorDivFloat(Val a, Val b) {
  Val mod = Fmod(a, b);
  Val div = (a - mod) / b;
  div = Where(BitwiseAnd(Ne(mod, 0.0), Ne(Lt(b, 0.0), Lt(mod, 0.0))), div - 1.0, div);
  Val fl = Floor(div);
  fl = Where(Gt(div - fl, 0.5), fl + 1.0, fl);
  Val q = a / b;
  fl = Where(Eq(div, 0.0), SignedZero(q), fl);
  return Where(Eq(b, 0.0), q, fl);
}

// Integer floor division: trunc(a / b) - (fmod(a, b) != 0 && (a < 0) != (b < 0)).
Val FloorDivInt(Val a, Val b) {
  Val q = a / b;
  Val fix = BitwiseAnd(Ne(Fmod(a, b), 0.0), Ne(Lt(a, 0.0), Lt(b, 0.0)));
  return q - Cast(fix, q.dtype());
}

Val FloorDiv(Val a, Val b) {
  return IsFloating(a.dtype()) ? FloorDivFloat(a, b) : FloorDivInt(a, b);
}

// Integer pow: a negative exponent gives 0, except 1 ** n = 1 and (-1) ** n = +-1 by parity.
//   where(b < 0 && |a| != 1, 0, pow(a, b < 0 ? b & 1 : b))
Val PowInt(Val a, Val b) {
  Val neg = Lt(b, 0.0);
  Val p = Pow(a, Where(neg, BitwiseAnd(b, 1.0), b));
  return Where(BitwiseAnd(neg, Ne(Abs(a), 1.0)), 0.0, p);
}

// fmax/fmin: NaN operands are ignored unless both are NaN.
Val NanIgnoring(Val a, Val b, Val (*pick)(Val, Val)) {
  if (!IsFloating(a.dtype())) return pick(a, b);
  return Where(Ne(b, b), a, Where(Ne(a, a), b, pick(a, b)));
}

// Truthiness of a logical op's operand in its own dtype (NaN is true).
Val Truth(Val x) { return IsBool(x.dtype()) ? x : Ne(x, 0.0); }

using Body = Val (*)(const OpCall& c, Val a, Val b);

// An arithmetic rule: computed in ComputeDType(out) and converted back once. `scalar`: the
// rule also serves aten.<op>_scalar.
struct ArithRule {
  const char* op;
  bool scalar;
  Body fn;
};

const ArithRule kArith[] = {
    // add(a, b, alpha) -> a + alpha * b
    {"add", true, [](const OpCall& c, Val a, Val b) { return a + Alpha(c, b); }},
    // sub(a, b, alpha) -> a - alpha * b
    {"sub", true, [](const OpCall& c, Val a, Val b) { return a - Alpha(c, b); }},
    // rsub(a, b, alpha) -> b - alpha * a
    {"rsub", true, [](const OpCall& c, Val a, Val b) { return b - Alpha(c, a); }},
    // mul(a, b) -> a * b
    {"mul", true, [](const OpCall&, Val a, Val b) { return a * b; }},
    // div(a, b, rounding_mode) -> a / b | trunc(a / b) (quotient rounded to out first) | floor
    {"div", true,
     [](const OpCall& c, Val a, Val b) {
       std::string mode = c.Str("rounding_mode");
       if (mode == "floor") return FloorDiv(a, b);
       if (mode == "trunc" && IsFloating(a.dtype())) return Trunc(Cast(a / b, c.out_dtype()));
       return a / b;  // true division on floats, truncation on integers
     }},
    // floor_divide(a, b) -> div(a, b, rounding_mode='floor')
    {"floor_divide", false, [](const OpCall&, Val a, Val b) { return FloorDiv(a, b); }},
    // remainder(a, b) -> prims.remainder(a, b)
    {"remainder", true, [](const OpCall&, Val a, Val b) { return Remainder(a, b); }},
    // fmod(a, b) -> prims.fmod(a, b)
    {"fmod", true, [](const OpCall&, Val a, Val b) { return Fmod(a, b); }},
    // pow(a, b) -> prims.pow(a, b); integers: see PowInt
    {"pow", true,
     [](const OpCall&, Val a, Val b) { return IsFloating(a.dtype()) ? Pow(a, b) : PowInt(a, b); }},
    // maximum(a, b) -> prims.maximum(a, b)
    {"maximum", false, [](const OpCall&, Val a, Val b) { return Maximum(a, b); }},
    // minimum(a, b) -> prims.minimum(a, b)
    {"minimum", false, [](const OpCall&, Val a, Val b) { return Minimum(a, b); }},
    // fmax(a, b) -> where(isnan(b), a, where(isnan(a), b, maximum(a, b)))
    {"fmax", false, [](const OpCall&, Val a, Val b) { return NanIgnoring(a, b, Maximum); }},
    // fmin(a, b) -> where(isnan(b), a, where(isnan(a), b, minimum(a, b)))
    {"fmin", false, [](const OpCall&, Val a, Val b) { return NanIgnoring(a, b, Minimum); }},
    // atan2(a, b) -> prims.atan2(a, b)
    {"atan2", false, [](const OpCall&, Val a, Val b) { return Atan2(a, b); }},
    // hypot(a, b) -> prims.hypot(a, b)
    {"hypot", false, [](const OpCall&, Val a, Val b) { return Hypot(a, b); }},
    // copysign(a, b) -> where(signbit(b), -|a|, |a|)
    {"copysign", false,
     [](const OpCall&, Val a, Val b) { return Where(Signbit(b), -Abs(a), Abs(a)); }},
    // bitwise_and(a, b) -> prims.bitwise_and(a, b)
    {"bitwise_and", false, [](const OpCall&, Val a, Val b) { return BitwiseAnd(a, b); }},
    // bitwise_or(a, b) -> prims.bitwise_or(a, b)
    {"bitwise_or", false, [](const OpCall&, Val a, Val b) { return BitwiseOr(a, b); }},
    // bitwise_xor(a, b) -> prims.bitwise_xor(a, b)
    {"bitwise_xor", false, [](const OpCall&, Val a, Val b) { return BitwiseXor(a, b); }},
};

DecompositionFn Arith(Body fn) {
  return [fn](const OpCall& c) -> std::vector<Val> {
    auto [a, b] = Operands(c, ComputeDType(c.out_dtype()));
    return {Cast(fn(c, a, b), c.out_dtype())};
  };
}

// Comparisons: both operands converted to torch.result_type, then the prim (-> bool).
struct CompareRule {
  const char* op;
  Val (*fn)(Val, Val);
};

const CompareRule kCompare[] = {
    {"eq", Eq},  // eq(a, b) -> prims.eq(a, b)
    {"ne", Ne},  // ne(a, b) -> prims.ne(a, b)
    {"lt", Lt},  // lt(a, b) -> prims.lt(a, b)
    {"le", Le},  // le(a, b) -> prims.le(a, b)
    {"gt", Gt},  // gt(a, b) -> prims.gt(a, b)
    {"ge", Ge},  // ge(a, b) -> prims.ge(a, b)
};

DecompositionFn Compare(Val (*fn)(Val, Val)) {
  return [fn](const OpCall& c) -> std::vector<Val> {
    auto [a, b] = Operands(c, ResultType(c));
    return {fn(a, b)};
  };
}

// Logical ops: each operand's truthiness, then a bitwise op on bools.
struct LogicalRule {
  const char* op;
  Val (*fn)(Val, Val);
};

const LogicalRule kLogical[] = {
    {"logical_and", BitwiseAnd},  // logical_and(a, b) -> (a != 0) & (b != 0)
    {"logical_or", BitwiseOr},    // logical_or(a, b) -> (a != 0) | (b != 0)
    {"logical_xor", BitwiseXor},  // logical_xor(a, b) -> (a != 0) ^ (b != 0)
};

// Ternary ops: where, lerp, addcmul, addcdiv, masked_fill.
void RegisterTernary(DecompositionRegistry& r) {
  // where(cond, a, b) -> prims.where(cond != 0, a, b), a and b converted to the out dtype
  r.Add("aten.where", [](const OpCall& c) -> std::vector<Val> {
    DType t = c.out_dtype();
    return {Where(c.in(0), Cast(c.in(1), t), Cast(c.in(2), t))};
  });
  // lerp(s, e, w) -> |w| < 0.5 ? s + w * (e - s) : e - (e - s) * (1 - w)
  r.Add("aten.lerp", [](const OpCall& c) -> std::vector<Val> {
    Val s = Upcast(c.in(0)), e = Upcast(c.in(1)), w = Upcast(c.in(2));
    Val d = e - s;
    return {Cast(Where(Lt(Abs(w), 0.5), s + w * d, e - d * (1.0 - w)), c.out_dtype())};
  });
  // addcmul(s, t1, t2, value) -> s + value * t1 * t2 (value converted to the dtype)
  r.Add("aten.addcmul", [](const OpCall& c) -> std::vector<Val> {
    DType t = ComputeDType(c.out_dtype());
    Val p = Number(c, "value", t) * Cast(c.in(1), t) * Cast(c.in(2), t);
    return {Cast(Cast(c.in(0), t) + p, c.out_dtype())};
  });
  // addcdiv(s, t1, t2, value) -> s + value * (t1 / t2)
  r.Add("aten.addcdiv", [](const OpCall& c) -> std::vector<Val> {
    DType t = ComputeDType(c.out_dtype());
    Val q = Number(c, "value", t) * (Cast(c.in(1), t) / Cast(c.in(2), t));
    return {Cast(Cast(c.in(0), t) + q, c.out_dtype())};
  });
  // masked_fill(x, mask, value) -> where(mask != 0, value, x)
  r.Add("aten.masked_fill", [](const OpCall& c) -> std::vector<Val> {
    return {Where(c.in(1), Number(c, "value", c.out_dtype()), c.in(0))};
  });
}

}  // namespace

void RegisterBinaryDecompositions(DecompositionRegistry& r) {
  for (const ArithRule& rule : kArith) {
    r.Add(std::string("aten.") + rule.op, Arith(rule.fn));
    if (rule.scalar) r.Add(std::string("aten.") + rule.op + "_scalar", Arith(rule.fn));
  }
  for (const CompareRule& rule : kCompare) {
    r.Add(std::string("aten.") + rule.op, Compare(rule.fn));
    r.Add(std::string("aten.") + rule.op + "_scalar", Compare(rule.fn));
  }
  for (const LogicalRule& rule : kLogical) {
    Val (*fn)(Val, Val) = rule.fn;
    r.Add(std::string("aten.") + rule.op, [fn](const OpCall& c) -> std::vector<Val> {
      return {fn(Truth(c.in(0)), Truth(c.in(1)))};
    });
  }
  RegisterTernary(r);
}

}  // namespace coil::prims
