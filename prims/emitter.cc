// The decomposition language: emitting ops, recursive decomposition, and the Val helpers.
#include "prims/emitter.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "absl/strings/str_join.h"
#include "ir/dtype.h"
#include "ir/op_registry.h"
#include "ir/ops/meta_util.h"

namespace coil::prims {
namespace {

// Recursion deeper than this is a cycle in the decomposition table.
constexpr int kMaxDepth = 24;

const TensorType& EmptyType() {
  static const TensorType* t = new TensorType(proto::FLOAT32, {});
  return *t;
}

Emitter* AnyEmitter(const Val& a, const Val& b) {
  return a.emitter_ptr() != nullptr ? a.emitter_ptr() : b.emitter_ptr();
}

// Normalizes dims against `rank`; records an error and returns nullopt on failure.
std::optional<IntList> Dims(Emitter& e, const IntList& dims, int64_t rank, bool empty_means_all) {
  absl::StatusOr<IntList> d = meta::NormalizeDims(dims, rank, empty_means_all);
  if (!d.ok()) {
    e.Fail(d.status());
    return std::nullopt;
  }
  std::sort(d->begin(), d->end());
  return *d;
}

// The keepdim shape of a reduction: reduced dims become 1.
Val KeepDims(Val reduced, const Val& x, const IntList& dims) {
  if (!reduced.ok()) return reduced;
  SymList shape = x.shape();
  IntList kept;
  for (int64_t d = 0; d < x.rank(); ++d) {
    if (std::find(dims.begin(), dims.end(), d) != dims.end()) {
      shape[d] = SymExpr(1);
    } else {
      kept.push_back(d);
    }
  }
  return BroadcastInDim(reduced, shape, kept);
}

Val Reduce(absl::string_view op, Val x, const IntList& dims, bool keepdim) {
  if (!x.ok()) return Val();
  Emitter& e = x.emitter();
  std::optional<IntList> d = Dims(e, dims, x.rank(), /*empty_means_all=*/true);
  if (!d) return Val();
  if (x.rank() == 0) return x;
  Val r = e.Op1(op, {x}, {{"dims", *d}});
  return keepdim ? KeepDims(r, x, *d) : r;
}

Val ArgReduce(absl::string_view op, Val x, int64_t dim, bool keepdim) {
  if (!x.ok()) return Val();
  Emitter& e = x.emitter();
  if (x.rank() == 0) return Full(e, {}, 0, proto::INT64);
  std::optional<IntList> d = Dims(e, {dim}, x.rank(), false);
  if (!d) return Val();
  Val r = e.Op1(op, {x}, {{"dim", (*d)[0]}});
  return keepdim ? KeepDims(r, x, *d) : r;
}

// Broadcasts and promotes two operands to a common shape and dtype.
std::pair<Val, Val> Common(Val a, Val b, bool promote = true) {
  if (!a.ok() || !b.ok()) return {Val(), Val()};
  Emitter& e = a.emitter();
  absl::StatusOr<std::vector<SymExpr>> shape = meta::BroadcastShapes(a.shape(), b.shape());
  if (!shape.ok()) {
    e.Fail(shape.status());
    return {Val(), Val()};
  }
  if (promote) {
    DType t = PromoteTypes(a.dtype(), b.dtype());
    a = Cast(a, t);
    b = Cast(b, t);
  }
  return {BroadcastTo(a, *shape), BroadcastTo(b, *shape)};
}

// The dtype a double takes next to a tensor operand.
DType ScalarDType(const Val& t, double v) {
  if (IsFloating(t.dtype())) return t.dtype();
  if (std::nearbyint(v) == v && std::isfinite(v) && !IsBool(t.dtype())) return t.dtype();
  if (IsBool(t.dtype()) && (v == 0 || v == 1)) return t.dtype();
  return kDefaultFloat;
}

Val Binary(absl::string_view op, Val a, Val b) {
  auto [x, y] = Common(a, b);
  if (!x.ok()) return Val();
  return x.emitter().Op1(op, {x, y});
}

Val BinaryScalar(absl::string_view op, Val a, double b, bool scalar_first) {
  if (!a.ok()) return Val();
  DType t = ScalarDType(a, b);
  Val x = Cast(a, t);
  Val s = Full(a.emitter(), a.shape(), b, t);
  return scalar_first ? a.emitter().Op1(op, {s, x}) : a.emitter().Op1(op, {x, s});
}

}  // namespace

// ---- Val ----

const TensorType& Val::type() const { return value_ ? value_->type() : EmptyType(); }

SymExpr Val::size(int64_t d) const {
  int64_t r = rank();
  if (d < 0) d += r;
  if (d < 0 || d >= r) {
    if (emitter_) emitter_->Fail("dimension ", d, " out of range for rank ", r);
    return SymExpr(1);
  }
  return shape()[d];
}

// ---- Emitter ----

void Emitter::Fail(absl::Status status) {
  if (status_.ok()) status_ = std::move(status);
}

std::vector<Val> Emitter::Op(absl::string_view op, std::vector<Val> inputs, AttrMap attrs) {
  if (!ok()) return {};
  const OpSchema* schema = OpRegistry::Global().Find(op);
  if (schema == nullptr) {
    Fail(absl::NotFoundError(absl::StrCat("unknown op ", op)));
    return {};
  }
  std::vector<TensorType> in_types;
  std::vector<Value*> in_values;
  for (const Val& v : inputs) {
    if (!v.ok()) {
      Fail(absl::InternalError(absl::StrCat("an input of ", op, " is missing")));
      return {};
    }
    in_types.push_back(v.type());
    in_values.push_back(v.value());
  }
  std::optional<ShapeAssumptionScope> scope;
  if (collect_assumptions_) scope.emplace();
  absl::StatusOr<std::vector<TensorType>> out_types = InferOutputTypes(*schema, in_types, attrs);
  if (!out_types.ok()) {
    Fail(absl::Status(out_types.status().code(),
                      absl::StrCat(op, ": ", out_types.status().message())));
    return {};
  }
  if (!keep_(op, attrs)) {
    scope.reset();  // a decomposed op's assumptions are its prims' (and the aten graph's guards)
    return Decompose(op, std::move(inputs), std::move(attrs), *out_types);
  }
  Node* n = out_.AddNode(std::string(op), std::move(in_values), std::move(attrs), *out_types);
  n->set_loc(loc_);
  n->set_name(name_);
  if (scope.has_value() && !scope->assumptions().empty()) {
    assumptions_.push_back({n, scope->assumptions()});
  }
  std::vector<Val> out;
  for (Value* v : n->outputs()) out.push_back(Val(this, v));
  return out;
}

Val Emitter::Op1(absl::string_view op, std::vector<Val> inputs, AttrMap attrs) {
  std::vector<Val> out = Op(op, std::move(inputs), std::move(attrs));
  if (!ok()) return Val();
  if (out.size() != 1) {
    Fail(absl::InternalError(absl::StrCat(op, " has ", out.size(), " outputs, not 1")));
    return Val();
  }
  return out[0];
}

std::vector<Val> Emitter::Decompose(absl::string_view op, std::vector<Val> inputs, AttrMap attrs,
                                    std::vector<TensorType> out_types) {
  const DecompositionFn* fn = lookup_(op);
  if (fn == nullptr) {
    Fail(absl::UnimplementedError(absl::StrCat("no decomposition for ", op)));
    return {};
  }
  if (stack_.size() >= kMaxDepth) {
    Fail(absl::InternalError(absl::StrCat("decompositions recurse deeper than ", kMaxDepth, ": ",
                                          absl::StrJoin(stack_, " -> "))));
    return {};
  }
  stack_.push_back(std::string(op));
  OpCall call(*this, std::string(op), std::move(inputs), attrs, out_types);
  std::vector<Val> out = (*fn)(call);
  stack_.pop_back();
  if (!ok()) {
    return {};
  }
  if (out.size() != out_types.size()) {
    Fail(absl::InternalError(absl::StrCat("the decomposition of ", op, " gives ", out.size(),
                                          " values for ", out_types.size(), " outputs")));
    return {};
  }
  for (size_t i = 0; i < out.size(); ++i) {
    if (!out[i].ok() || out[i].type().dtype != out_types[i].dtype ||
        out[i].type().shape != out_types[i].shape) {
      Fail(absl::InternalError(absl::StrCat(
          "the decomposition of ", op, " gives ", out[i].type().ToString(), " for output ", i,
          " of type ", out_types[i].ToString())));
      return {};
    }
  }
  return out;
}

// ---- OpCall ----

Val OpCall::in(int i) const {
  if (i < 0 || i >= num_inputs()) {
    e_.Fail(absl::InternalError(absl::StrCat(op_, ": input ", i, " is absent")));
    return Val();
  }
  return inputs_[i];
}

namespace {
template <typename T>
T Read(Emitter& e, absl::StatusOr<T> v, T fallback) {
  if (!v.ok()) {
    e.Fail(absl::InternalError(v.status().message()));
    return fallback;
  }
  return *std::move(v);
}
}  // namespace

int64_t OpCall::Int(absl::string_view n) const { return Read(e_, GetInt(attrs_, n), int64_t{0}); }
double OpCall::Float(absl::string_view n) const { return Read(e_, GetFloat(attrs_, n), 0.0); }
bool OpCall::Bool(absl::string_view n) const { return Read(e_, GetBool(attrs_, n), false); }
std::string OpCall::Str(absl::string_view n) const {
  return Read(e_, GetString(attrs_, n), std::string());
}
IntList OpCall::Ints(absl::string_view n) const { return Read(e_, GetInts(attrs_, n), IntList()); }
FloatList OpCall::Floats(absl::string_view n) const {
  return Read(e_, GetFloats(attrs_, n), FloatList());
}
DType OpCall::DTypeAttr(absl::string_view n) const {
  return Read(e_, GetDType(attrs_, n), proto::DTYPE_UNSPECIFIED);
}
SymExpr OpCall::Sym(absl::string_view n) const { return Read(e_, GetSym(attrs_, n), SymExpr(0)); }
SymList OpCall::Syms(absl::string_view n) const {
  return Read(e_, GetSyms(attrs_, n), SymList());
}
const Attribute* OpCall::Raw(absl::string_view n) const {
  auto it = attrs_.find(n);
  return it == attrs_.end() ? nullptr : &it->second;
}

// ---- dtype helpers ----

DType ComputeDType(DType t) {
  return (t == proto::FLOAT16 || t == proto::BFLOAT16) ? proto::FLOAT32 : t;
}

Val Upcast(Val x) { return Cast(x, ComputeDType(x.dtype())); }

Val Cast(Val x, DType dtype) {
  if (!x.ok() || x.dtype() == dtype) return x;
  return x.emitter().Op1("prims.convert_element_type", {x}, {{"dtype", dtype}});
}

// ---- elementwise ----

#define COIL_PRIMS_UNARY(Name, op) \
  Val Name(Val x) { return x.ok() ? x.emitter().Op1(op, {x}) : Val(); }
COIL_PRIMS_UNARY(Abs, "prims.abs")
COIL_PRIMS_UNARY(Neg, "prims.neg")
COIL_PRIMS_UNARY(Sign, "prims.sign")
COIL_PRIMS_UNARY(Signbit, "prims.signbit")
COIL_PRIMS_UNARY(Exp, "prims.exp")
COIL_PRIMS_UNARY(Exp2, "prims.exp2")
COIL_PRIMS_UNARY(Expm1, "prims.expm1")
COIL_PRIMS_UNARY(Log, "prims.log")
COIL_PRIMS_UNARY(Log2, "prims.log2")
COIL_PRIMS_UNARY(Log1p, "prims.log1p")
COIL_PRIMS_UNARY(Sqrt, "prims.sqrt")
COIL_PRIMS_UNARY(Rsqrt, "prims.rsqrt")
COIL_PRIMS_UNARY(Sin, "prims.sin")
COIL_PRIMS_UNARY(Cos, "prims.cos")
COIL_PRIMS_UNARY(Tan, "prims.tan")
COIL_PRIMS_UNARY(Asin, "prims.asin")
COIL_PRIMS_UNARY(Acos, "prims.acos")
COIL_PRIMS_UNARY(Atan, "prims.atan")
COIL_PRIMS_UNARY(Sinh, "prims.sinh")
COIL_PRIMS_UNARY(Cosh, "prims.cosh")
COIL_PRIMS_UNARY(Tanh, "prims.tanh")
COIL_PRIMS_UNARY(Asinh, "prims.asinh")
COIL_PRIMS_UNARY(Acosh, "prims.acosh")
COIL_PRIMS_UNARY(Atanh, "prims.atanh")
COIL_PRIMS_UNARY(Erf, "prims.erf")
COIL_PRIMS_UNARY(Erfc, "prims.erfc")
COIL_PRIMS_UNARY(Ceil, "prims.ceil")
COIL_PRIMS_UNARY(Floor, "prims.floor")
COIL_PRIMS_UNARY(Round, "prims.round")
COIL_PRIMS_UNARY(Trunc, "prims.trunc")
COIL_PRIMS_UNARY(BitwiseNot, "prims.bitwise_not")
#undef COIL_PRIMS_UNARY

#define COIL_PRIMS_BINARY(Name, op)                                                    \
  Val Name(Val a, Val b) { return Binary(op, a, b); }                                  \
  Val Name(Val a, double b) { return BinaryScalar(op, a, b, /*scalar_first=*/false); } \
  Val Name(double a, Val b) { return BinaryScalar(op, b, a, /*scalar_first=*/true); }
COIL_PRIMS_BINARY(Add, "prims.add")
COIL_PRIMS_BINARY(Sub, "prims.sub")
COIL_PRIMS_BINARY(Mul, "prims.mul")
COIL_PRIMS_BINARY(Div, "prims.div")
COIL_PRIMS_BINARY(Remainder, "prims.remainder")
COIL_PRIMS_BINARY(Fmod, "prims.fmod")
COIL_PRIMS_BINARY(Pow, "prims.pow")
COIL_PRIMS_BINARY(Maximum, "prims.maximum")
COIL_PRIMS_BINARY(Minimum, "prims.minimum")
COIL_PRIMS_BINARY(Atan2, "prims.atan2")
COIL_PRIMS_BINARY(Hypot, "prims.hypot")
COIL_PRIMS_BINARY(BitwiseAnd, "prims.bitwise_and")
COIL_PRIMS_BINARY(BitwiseOr, "prims.bitwise_or")
COIL_PRIMS_BINARY(BitwiseXor, "prims.bitwise_xor")
COIL_PRIMS_BINARY(Eq, "prims.eq")
COIL_PRIMS_BINARY(Ne, "prims.ne")
COIL_PRIMS_BINARY(Lt, "prims.lt")
COIL_PRIMS_BINARY(Le, "prims.le")
COIL_PRIMS_BINARY(Gt, "prims.gt")
COIL_PRIMS_BINARY(Ge, "prims.ge")
#undef COIL_PRIMS_BINARY

Val Where(Val cond, Val a, Val b) {
  if (!cond.ok() || !a.ok() || !b.ok()) {
    if (Emitter* e = AnyEmitter(cond, a)) e->Fail("where: an operand is missing");
    return Val();
  }
  Emitter& e = cond.emitter();
  absl::StatusOr<std::vector<SymExpr>> shape = meta::BroadcastAll({cond.type(), a.type(), b.type()});
  if (!shape.ok()) {
    e.Fail(shape.status());
    return Val();
  }
  DType t = PromoteTypes(a.dtype(), b.dtype());
  Val c = BroadcastTo(Cast(cond, proto::BOOL), *shape);
  return e.Op1("prims.where", {c, BroadcastTo(Cast(a, t), *shape), BroadcastTo(Cast(b, t), *shape)});
}

Val Where(Val cond, Val a, double b) {
  if (!a.ok()) return Val();
  DType t = ScalarDType(a, b);
  return Where(cond, Cast(a, t), Full(a.emitter(), {}, b, t));
}

Val Where(Val cond, double a, Val b) {
  if (!b.ok()) return Val();
  DType t = ScalarDType(b, a);
  return Where(cond, Full(b.emitter(), {}, a, t), Cast(b, t));
}

// ---- reductions ----

Val Sum(Val x, IntList dims, bool keepdim) { return Reduce("prims.sum", x, dims, keepdim); }
Val Prod(Val x, IntList dims, bool keepdim) { return Reduce("prims.prod", x, dims, keepdim); }
Val Amax(Val x, IntList dims, bool keepdim) { return Reduce("prims.amax", x, dims, keepdim); }
Val Amin(Val x, IntList dims, bool keepdim) { return Reduce("prims.amin", x, dims, keepdim); }
Val Argmax(Val x, int64_t dim, bool keepdim) { return ArgReduce("prims.argmax", x, dim, keepdim); }
Val Argmin(Val x, int64_t dim, bool keepdim) { return ArgReduce("prims.argmin", x, dim, keepdim); }

SymExpr NumElements(const Val& x, const IntList& dims) {
  if (!x.ok()) return SymExpr(1);
  std::optional<IntList> d = Dims(x.emitter(), dims, x.rank(), /*empty_means_all=*/true);
  SymExpr n(1);
  if (!d) return n;
  for (int64_t i : *d) {
    if (i < x.rank()) n = n * x.shape()[i];  // a rank-0 tensor accepts dim 0 and has 1 element
  }
  return n;
}

Val Mean(Val x, IntList dims, bool keepdim) {
  if (!x.ok()) return Val();
  SymExpr n = NumElements(x, dims);
  Val s = Sum(x, dims, keepdim);
  if (n.is_constant()) return s / static_cast<double>(n.constant());
  return s / SymValue(x.emitter(), n, x.dtype());
}

Val Cumsum(Val x, int64_t dim) {
  if (!x.ok()) return Val();
  if (x.rank() == 0) return x;
  std::optional<IntList> d = Dims(x.emitter(), {dim}, x.rank(), false);
  return d ? x.emitter().Op1("prims.cumsum", {x}, {{"dim", (*d)[0]}}) : Val();
}

Val Cumprod(Val x, int64_t dim) {
  if (!x.ok()) return Val();
  if (x.rank() == 0) return x;
  std::optional<IntList> d = Dims(x.emitter(), {dim}, x.rank(), false);
  return d ? x.emitter().Op1("prims.cumprod", {x}, {{"dim", (*d)[0]}}) : Val();
}

// ---- shape and layout ----

Val Reshape(Val x, SymList shape) {
  if (!x.ok()) return Val();
  if (x.shape() == shape) return x;
  return x.emitter().Op1("prims.reshape", {x}, {{"shape", std::move(shape)}});
}

Val Permute(Val x, IntList dims) {
  if (!x.ok()) return Val();
  bool identity = true;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0) dims[i] += x.rank();
    identity = identity && dims[i] == static_cast<int64_t>(i);
  }
  if (identity && static_cast<int64_t>(dims.size()) == x.rank()) return x;
  return x.emitter().Op1("prims.permute", {x}, {{"dims", std::move(dims)}});
}

Val Transpose(Val x, int64_t d0, int64_t d1) {
  if (!x.ok()) return Val();
  std::optional<IntList> d = Dims(x.emitter(), {d0}, x.rank(), false);
  std::optional<IntList> e = Dims(x.emitter(), {d1}, x.rank(), false);
  if (!d || !e) return Val();
  IntList perm;
  for (int64_t i = 0; i < x.rank(); ++i) perm.push_back(i);
  std::swap(perm[(*d)[0]], perm[(*e)[0]]);
  return Permute(x, perm);
}

Val BroadcastInDim(Val x, SymList shape, IntList broadcast_dimensions) {
  if (!x.ok()) return Val();
  if (x.shape() == shape) return x;
  // broadcast_in_dim(broadcast_in_dim(y, s1, d1), s2, d2) -> broadcast_in_dim(y, s2, d2[d1])
  const Node* producer = x.value()->producer();
  if (producer != nullptr && producer->op() == "prims.broadcast_in_dim" &&
      broadcast_dimensions.size() == static_cast<size_t>(x.rank())) {
    absl::StatusOr<IntList> inner = GetInts(producer->attrs(), "broadcast_dimensions");
    bool valid = inner.ok();
    IntList composed;
    for (size_t i = 0; valid && i < inner->size(); ++i) {
      int64_t d = (*inner)[i];
      valid = d >= 0 && d < static_cast<int64_t>(broadcast_dimensions.size());
      if (valid) composed.push_back(broadcast_dimensions[d]);
    }
    if (valid) {
      return BroadcastInDim(x.emitter().Wrap(producer->input(0)), std::move(shape),
                            std::move(composed));
    }
  }
  return x.emitter().Op1("prims.broadcast_in_dim", {x},
                         {{"shape", std::move(shape)},
                          {"broadcast_dimensions", std::move(broadcast_dimensions)}});
}

Val BroadcastTo(Val x, SymList shape) {
  if (!x.ok()) return Val();
  if (x.shape() == shape) return x;
  int64_t lead = static_cast<int64_t>(shape.size()) - x.rank();
  if (lead < 0) {
    x.emitter().Fail("cannot broadcast ", x.type().ToString(), " to rank ", shape.size());
    return Val();
  }
  IntList dims;
  for (int64_t i = 0; i < x.rank(); ++i) dims.push_back(lead + i);
  return BroadcastInDim(x, std::move(shape), std::move(dims));
}

Val Slice(Val x, int64_t dim, SymExpr start, SymExpr end, int64_t step) {
  if (!x.ok()) return Val();
  std::optional<IntList> d = Dims(x.emitter(), {dim}, x.rank(), false);
  if (!d) return Val();
  SymList starts(x.rank(), SymExpr(0));
  SymList limits = x.shape();
  IntList strides(x.rank(), 1);
  starts[(*d)[0]] = start;
  limits[(*d)[0]] = end;
  strides[(*d)[0]] = step;
  if (start == SymExpr(0) && end == x.shape()[(*d)[0]] && step == 1) return x;
  return x.emitter().Op1("prims.slice", {x},
                         {{"start_indices", starts}, {"limit_indices", limits},
                          {"strides", strides}});
}

Val Squeeze(Val x, IntList dims) {
  if (!x.ok()) return Val();
  std::optional<IntList> d = Dims(x.emitter(), dims, x.rank(), false);
  if (!d) return Val();
  if (d->empty()) return x;
  return x.emitter().Op1("prims.squeeze", {x}, {{"dims", *d}});
}

Val Unsqueeze(Val x, int64_t dim) {
  if (!x.ok()) return Val();
  int64_t r = x.rank();
  if (dim < 0) dim += r + 1;
  if (dim < 0 || dim > r) {
    x.emitter().Fail("unsqueeze dim ", dim, " out of range for rank ", r);
    return Val();
  }
  SymList shape = x.shape();
  shape.insert(shape.begin() + dim, SymExpr(1));
  IntList bdims;
  for (int64_t i = 0; i < r; ++i) bdims.push_back(i < dim ? i : i + 1);
  return x.emitter().Op1("prims.broadcast_in_dim", {x},
                         {{"shape", shape}, {"broadcast_dimensions", bdims}});
}

Val Concat(std::vector<Val> xs, int64_t dim) {
  if (xs.empty() || !xs[0].ok()) return Val();
  if (xs.size() == 1) return xs[0];
  std::optional<IntList> d = Dims(xs[0].emitter(), {dim}, xs[0].rank(), false);
  if (!d) return Val();
  return xs[0].emitter().Op1("prims.concat", std::move(xs), {{"dim", (*d)[0]}});
}

Val Pad(Val x, IntList low, IntList high, double value) {
  if (!x.ok()) return Val();
  bool zero = true;
  for (size_t i = 0; i < low.size(); ++i) zero = zero && low[i] == 0 && high[i] == 0;
  if (zero) return x;
  return x.emitter().Op1("prims.pad", {x},
                         {{"low", std::move(low)}, {"high", std::move(high)}, {"value", value}});
}

Val Rev(Val x, IntList dims) {
  if (!x.ok()) return Val();
  std::optional<IntList> d = Dims(x.emitter(), dims, x.rank(), false);
  if (!d) return Val();
  if (d->empty()) return x;
  return x.emitter().Op1("prims.rev", {x}, {{"dims", *d}});
}

// ---- creation ----

Val Full(Emitter& e, SymList shape, double value, DType dtype) {
  AttrMap attrs = {{"shape", std::move(shape)}, {"dtype", dtype}};
  if (IsBool(dtype)) {
    attrs["value"] = static_cast<int64_t>(value != 0);  // torch: a bool fill tests != 0
  } else if (!IsFloating(dtype) && std::isfinite(value) && std::fabs(value) < 9.2e18) {
    attrs["value"] = static_cast<int64_t>(value);
  } else {
    attrs["value"] = value;
  }
  return e.Op1("prims.full", {}, std::move(attrs));
}

Val FullLike(Val x, double value, DType dtype) {
  if (!x.ok()) return Val();
  return Full(x.emitter(), x.shape(), value,
              dtype == proto::DTYPE_UNSPECIFIED ? x.dtype() : dtype);
}

Val Iota(Emitter& e, SymExpr length, int64_t start, int64_t step, DType dtype) {
  return e.Op1("prims.iota", {},
               {{"length", std::move(length)}, {"start", start}, {"step", step}, {"dtype", dtype}});
}

Val SymValue(Emitter& e, SymExpr value, DType dtype) {
  if (value.is_constant()) return Full(e, {}, static_cast<double>(value.constant()), dtype);
  return e.Op1("prims.sym_value", {}, {{"value", std::move(value)}, {"dtype", dtype}});
}

Val PhiloxUniform(Emitter& e, SymList shape, int64_t seed, SymExpr offset, DType dtype) {
  Attribute off = offset.is_constant() ? Attribute(offset.constant()) : Attribute(offset);
  return e.Op1("prims.philox_uniform", {},
               {{"shape", std::move(shape)}, {"seed", seed}, {"offset", std::move(off)},
                {"dtype", dtype}});
}

// ---- indexing ----

Val Gather(Val x, int64_t dim, Val index) {
  if (!x.ok() || !index.ok()) return Val();
  std::optional<IntList> d = Dims(x.emitter(), {dim}, x.rank(), false);
  if (!d) return Val();
  return x.emitter().Op1("prims.gather", {x, index}, {{"dim", (*d)[0]}});
}

Val Scatter(Val x, int64_t dim, Val index, Val src, absl::string_view reduce) {
  if (!x.ok() || !index.ok() || !src.ok()) return Val();
  std::optional<IntList> d = Dims(x.emitter(), {dim}, x.rank(), false);
  if (!d) return Val();
  return x.emitter().Op1("prims.scatter", {x, index, Cast(src, x.dtype())},
                         {{"dim", (*d)[0]}, {"reduce", std::string(reduce)}});
}

}  // namespace coil::prims
