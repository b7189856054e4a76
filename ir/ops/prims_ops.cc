// Schemas and meta functions of the prims opset (docs/prims.md) that compute values: the
// elementwise prims, reductions and scans. Shape and layout prims are in prims_shape_ops.cc,
// creation and random in prims_creation_ops.cc, gather/scatter/copy_to in
// prims_indexing_ops.cc, sym_value in prims_sym_ops.cc.
//
// Prims are strict: elementwise operands have exactly equal shapes (the same SymExprs) and
// dtypes, dims are non-negative and in range, reduction dims sorted and unique. Messages say
// what is wrong; the registry prefixes the prim's name ("prims.add: operand shapes differ:
// [2, s] vs [2, 3] ...").
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "ir/op_registry.h"
#include "ir/ops/meta_util.h"
#include "ir/ops/register_ops.h"
#include "ir/shape_assumption.h"

namespace coil {
namespace {

using meta::Error;
using Types = absl::StatusOr<std::vector<TensorType>>;
using Inputs = absl::Span<const TensorType>;

// Which dtypes an elementwise prim accepts.
enum class Accepts { kAny, kIntFloat, kFloat, kIntBool, kIntFloatBool };

bool DTypeAccepted(Accepts a, DType t) {
  switch (a) {
    case Accepts::kAny:
      return true;
    case Accepts::kIntFloat:
      return IsIntegral(t) || IsFloating(t);
    case Accepts::kFloat:
      return IsFloating(t);
    case Accepts::kIntBool:
      return IsIntegral(t) || IsBool(t);
    case Accepts::kIntFloatBool:
      return IsIntegral(t) || IsFloating(t) || IsBool(t);
  }
  return false;
}

const char* AcceptsText(Accepts a) {
  switch (a) {
    case Accepts::kAny:
      return "any dtype";
    case Accepts::kIntFloat:
      return "an integer or floating dtype";
    case Accepts::kFloat:
      return "a floating dtype";
    case Accepts::kIntBool:
      return "an integer or bool dtype";
    case Accepts::kIntFloatBool:
      return "an integer, floating or bool dtype";
  }
  return "";
}

// Operands [first, end) have exactly x's shape, dtype and device (no broadcasting, no type
// promotion).
absl::Status CheckSameOperands(Inputs in, size_t first = 0) {
  const TensorType& x = in[first];
  for (size_t i = first + 1; i < in.size(); ++i) {
    if (in[i].shape != x.shape) {
      return Error("operand shapes differ: ", meta::ShapeText(x.shape), " vs ",
                   meta::ShapeText(in[i].shape),
                   " (prims do not broadcast; insert prims.broadcast_in_dim)");
    }
    if (in[i].dtype != x.dtype) {
      return Error("operand dtypes differ: ", DTypeName(x.dtype), " vs ",
                   DTypeName(in[i].dtype),
                   " (prims do not promote; insert prims.convert_element_type)");
    }
    if (in[i].device != x.device) {
      return Error("operands are on different devices: ", x.device.ToString(), " and ",
                   in[i].device.ToString());
    }
  }
  return absl::OkStatus();
}

absl::Status CheckDType(Accepts a, DType t) {
  if (DTypeAccepted(a, t)) return absl::OkStatus();
  return Error("expected ", AcceptsText(a), ", got ", DTypeName(t));
}

// An elementwise prim over `arity` operands of equal shape and dtype; `out` is the output
// dtype (DTYPE_UNSPECIFIED: the operands' dtype).
MetaFn ElementwiseMeta(Accepts accepts, DType out) {
  return [accepts, out](Inputs in, const AttrMap&) -> Types {
    if (absl::Status s = CheckSameOperands(in); !s.ok()) return s;
    if (absl::Status s = CheckDType(accepts, in[0].dtype); !s.ok()) return s;
    DType dt = out == proto::DTYPE_UNSPECIFIED ? in[0].dtype : out;
    return std::vector<TensorType>{meta::Out(dt, in[0].shape, in[0].device)};
  };
}

OpSchema Elementwise(const std::string& name, int arity, Accepts accepts, std::string doc,
                     DType out = proto::DTYPE_UNSPECIFIED) {
  static const char* const kNames[] = {"a", "b", "c"};
  std::vector<OpInput> inputs;
  for (int i = 0; i < arity; ++i) inputs.push_back({kNames[i]});
  std::string prim = "prims." + name;
  return meta::MakeSchema(prim, std::move(inputs), {}, OpClass::kElementwise,
                          ElementwiseMeta(accepts, out), std::move(doc));
}

Types WhereMeta(Inputs in, const AttrMap&) {
  if (in[0].dtype != proto::BOOL) {
    return Error("the condition must be bool, got ", DTypeName(in[0].dtype));
  }
  if (in[0].shape != in[1].shape) {
    return Error("operand shapes differ: ", meta::ShapeText(in[0].shape), " vs ",
                 meta::ShapeText(in[1].shape),
                 " (prims do not broadcast; insert prims.broadcast_in_dim)");
  }
  if (in[0].device != in[1].device) {
    return Error("operands are on different devices: ", in[0].device.ToString(), " and ",
                 in[1].device.ToString());
  }
  if (absl::Status s = CheckSameOperands(in, 1); !s.ok()) return s;
  return std::vector<TensorType>{meta::Like(in[1], in[1].shape)};
}

Types ConvertMeta(Inputs in, const AttrMap& attrs) {
  DType dt = *GetDType(attrs, "dtype");
  if (!IsValidDType(dt)) return Error("invalid dtype");
  return std::vector<TensorType>{meta::Out(dt, in[0].shape, in[0].device)};
}

// --- reductions and scans --------------------------------------------------------------------

// Reduction dims: each in [0, rank), strictly increasing.
absl::Status CheckReductionDims(const IntList& dims, int64_t rank) {
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0 || dims[i] >= rank) {
      return Error("dim ", dims[i], " is out of range for a tensor of rank ", rank,
                   " (prims take normalized dims in [0, rank))");
    }
    if (i > 0 && dims[i] <= dims[i - 1]) {
      return Error("dims [", absl::StrJoin(dims, ", "),
                   "] must be sorted and unique");
    }
  }
  return absl::OkStatus();
}

absl::Status CheckDim(int64_t dim, int64_t rank) {
  if (dim < 0 || dim >= rank) {
    return Error("dim ", dim, " is out of range for a tensor of rank ", rank,
                 " (prims take normalized dims in [0, rank))");
  }
  return absl::OkStatus();
}

std::vector<SymExpr> RemoveDims(const std::vector<SymExpr>& shape, const IntList& dims) {
  std::vector<SymExpr> out;
  size_t k = 0;
  for (int64_t i = 0; i < static_cast<int64_t>(shape.size()); ++i) {
    if (k < dims.size() && dims[k] == i) {
      ++k;
      continue;
    }
    out.push_back(shape[i]);
  }
  return out;
}

// sum / prod / amax / amin.
MetaFn ReduceMeta(bool arithmetic) {
  return [arithmetic](Inputs in, const AttrMap& attrs) -> Types {
    const TensorType& x = in[0];
    IntList dims = meta::IntsAttr(attrs, "dims");
    if (absl::Status s = CheckReductionDims(dims, x.rank()); !s.ok()) return s;
    if (arithmetic && IsBool(x.dtype)) {
      return Error("bool input is not supported (convert it first)");
    }
    if (!arithmetic) {
      // A symbolic size becomes a guard (ir/shape_assumption.h): compiled code would return
      // the identity (-inf, +inf) where the reference kernel fails.
      for (int64_t d : dims) {
        if (!MayBeLe(SymExpr(1), x.shape[d], "a max/min reduction's dim is not empty")) {
          return Error("cannot reduce over dim ", d,
                       " of size 0 (the reduction has no identity)");
        }
      }
    }
    return std::vector<TensorType>{meta::Like(x, RemoveDims(x.shape, dims))};
  };
}

MetaFn ArgReduceMeta() {
  return [](Inputs in, const AttrMap& attrs) -> Types {
    const TensorType& x = in[0];
    int64_t dim = meta::IntAttr(attrs, "dim");
    if (absl::Status s = CheckDim(dim, x.rank()); !s.ok()) return s;
    if (!MayBeLe(SymExpr(1), x.shape[dim], "an argmax/argmin reduction's dim is not empty")) {
      return Error("cannot reduce over dim ", dim, " of size 0");
    }
    return std::vector<TensorType>{
        meta::Out(proto::INT64, RemoveDims(x.shape, {dim}), x.device)};
  };
}

MetaFn ScanMeta() {
  return [](Inputs in, const AttrMap& attrs) -> Types {
    const TensorType& x = in[0];
    int64_t dim = meta::IntAttr(attrs, "dim");
    if (absl::Status s = CheckDim(dim, x.rank()); !s.ok()) return s;
    if (IsBool(x.dtype)) return Error("bool input is not supported (convert it first)");
    return std::vector<TensorType>{meta::Like(x, x.shape)};
  };
}

OpSchema Unary(const std::string& prim, std::vector<AttrSpec> attrs, OpClass cls, MetaFn meta,
               std::string doc) {
  return meta::MakeSchema(prim, {{"x"}}, std::move(attrs), cls, std::move(meta), std::move(doc));
}

void RegisterElementwisePrims(OpRegistry& r) {
  const DType kBool = proto::BOOL;
  r.Register(Elementwise("abs", 1, Accepts::kIntFloat, "torch.abs; integer overflow wraps"));
  r.Register(Elementwise("neg", 1, Accepts::kIntFloat, "torch.neg; integer overflow wraps"));
  r.Register(Elementwise("sign", 1, Accepts::kIntFloat, "torch.sign"));
  r.Register(Elementwise("signbit", 1, Accepts::kIntFloat,
                         "torch.signbit -> bool (std::signbit: true for -0.0)", kBool));
  static const char* const kFloatUnary[] = {
      "exp",  "exp2", "expm1", "log",  "log2",  "log1p", "sqrt",  "rsqrt", "sin",
      "cos",  "tan",  "asin",  "acos", "atan",  "sinh",  "cosh",  "tanh",  "asinh",
      "acosh", "atanh", "erf", "erfc"};
  for (const char* n : kFloatUnary) {
    r.Register(Elementwise(n, 1, Accepts::kFloat,
                           absl::StrCat("torch.", n, " on floating inputs (C++ <cmath>)")));
  }
  r.Register(Elementwise("ceil", 1, Accepts::kFloat, "torch.ceil on floating inputs"));
  r.Register(Elementwise("floor", 1, Accepts::kFloat, "torch.floor on floating inputs"));
  r.Register(Elementwise("round", 1, Accepts::kFloat, "torch.round: half to even"));
  r.Register(Elementwise("trunc", 1, Accepts::kFloat, "torch.trunc on floating inputs"));
  r.Register(Elementwise("bitwise_not", 1, Accepts::kIntBool,
                         "torch.bitwise_not; on bool a logical not"));
  r.Register(Elementwise("add", 2, Accepts::kIntFloatBool,
                         "a + b, equal shapes and dtypes; integers wrap; bool: logical or"));
  r.Register(Elementwise("sub", 2, Accepts::kIntFloat,
                         "a - b, equal shapes and dtypes; integers wrap"));
  r.Register(Elementwise("mul", 2, Accepts::kIntFloatBool,
                         "a * b, equal shapes and dtypes; integers wrap; bool: logical and"));
  r.Register(Elementwise("div", 2, Accepts::kIntFloat,
                         "float: IEEE a / b; int: truncation toward zero (division by zero is a "
                         "kernel error)"));
  r.Register(Elementwise("remainder", 2, Accepts::kIntFloat,
                         "torch.remainder: the result has the divisor's sign (Python %)"));
  r.Register(Elementwise("fmod", 2, Accepts::kIntFloat,
                         "torch.fmod: the result has the dividend's sign (C fmod)"));
  r.Register(Elementwise("pow", 2, Accepts::kIntFloat,
                         "torch.pow; int: a negative exponent is a kernel error"));
  r.Register(Elementwise("maximum", 2, Accepts::kAny, "torch.maximum; NaN propagates"));
  r.Register(Elementwise("minimum", 2, Accepts::kAny, "torch.minimum; NaN propagates"));
  r.Register(Elementwise("atan2", 2, Accepts::kFloat, "torch.atan2 on floating inputs"));
  r.Register(Elementwise("hypot", 2, Accepts::kFloat, "torch.hypot on floating inputs"));
  r.Register(Elementwise("bitwise_and", 2, Accepts::kIntBool, "torch.bitwise_and"));
  r.Register(Elementwise("bitwise_or", 2, Accepts::kIntBool, "torch.bitwise_or"));
  r.Register(Elementwise("bitwise_xor", 2, Accepts::kIntBool, "torch.bitwise_xor"));
  static const char* const kCompare[][2] = {{"eq", "=="}, {"ne", "!="}, {"lt", "<"},
                                            {"le", "<="}, {"gt", ">"},  {"ge", ">="}};
  for (const auto& c : kCompare) {
    r.Register(Elementwise(c[0], 2, Accepts::kAny,
                           absl::StrCat("a ", c[1], " b -> bool, equal shapes and dtypes"), kBool));
  }
  r.Register(meta::MakeSchema("prims.where", {{"cond"}, {"a"}, {"b"}}, {}, OpClass::kElementwise,
                              WhereMeta,
                              "torch.where(cond, a, b): cond bool, a and b of one dtype, all of "
                              "one shape"));
  r.Register(Unary("prims.convert_element_type", {{"dtype", AttrKind::kDType, std::nullopt}},
                   OpClass::kElementwise, ConvertMeta,
                   "Tensor.to(dtype): float -> int truncates, -> bool tests != 0"));
}

void RegisterReductionPrims(OpRegistry& r) {
  const AttrSpec dims{"dims", AttrKind::kInts, std::nullopt};
  const AttrSpec dim{"dim", AttrKind::kInt, std::nullopt};
  r.Register(Unary("prims.sum", {dims}, OpClass::kReduction, ReduceMeta(true),
                   "torch.sum over sorted dims, removed (no keepdim); dtype kept; rejects bool"));
  r.Register(Unary("prims.prod", {dims}, OpClass::kReduction, ReduceMeta(true),
                   "torch.prod over sorted dims, removed (no keepdim); dtype kept; rejects bool"));
  r.Register(Unary("prims.amax", {dims}, OpClass::kReduction, ReduceMeta(false),
                   "torch.amax over sorted dims, removed; NaN propagates; empty is an error"));
  r.Register(Unary("prims.amin", {dims}, OpClass::kReduction, ReduceMeta(false),
                   "torch.amin over sorted dims, removed; NaN propagates; empty is an error"));
  r.Register(Unary("prims.argmax", {dim}, OpClass::kReduction, ArgReduceMeta(),
                   "torch.argmax(dim) -> int64; first occurrence; NaN is the maximum"));
  r.Register(Unary("prims.argmin", {dim}, OpClass::kReduction, ArgReduceMeta(),
                   "torch.argmin(dim) -> int64; first occurrence; NaN is the minimum"));
  r.Register(Unary("prims.cumsum", {dim}, OpClass::kReduction, ScanMeta(),
                   "torch.cumsum(dim) with the dtype kept; rejects bool"));
  r.Register(Unary("prims.cumprod", {dim}, OpClass::kReduction, ScanMeta(),
                   "torch.cumprod(dim) with the dtype kept; rejects bool"));
}

}  // namespace

void RegisterPrimsOps(OpRegistry& registry) {
  RegisterElementwisePrims(registry);
  RegisterReductionPrims(registry);
}

}  // namespace coil
