// The little language decompositions are written in: `Val` handles and free functions that
// emit prims into a graph.
//
// A decomposition reads like the math it implements:
//
//   // aten.softmax(x, dim) -> exp(x - amax(x, dim)) / sum(exp(x - amax(x, dim)), dim)
//   std::vector<Val> Softmax(const OpCall& call) {
//     Val x = Upcast(call.in(0));
//     int64_t dim = call.Int("dim");
//     Val e = Exp(x - Amax(x, {dim}, /*keepdim=*/true));
//     return {Cast(e / Sum(e, {dim}, /*keepdim=*/true), call.out_dtype())};
//   }
//
// Binary helpers broadcast (numpy rules) and promote dtypes (torch.promote_types) by emitting
// `prims.broadcast_in_dim` / `prims.convert_element_type`, because prims themselves are strict
// (docs/prims.md). Scalars become `prims.full` of the other operand's shape. Dims may be
// negative. Errors do not throw: the first one is recorded in the Emitter, later calls return
// an empty Val, and the driver reports the error naming the op being decomposed.
//
// Emitting a non-prim op (`e.Op("aten.matmul", ...)`) decomposes it recursively, so
// decompositions may build on each other.
#ifndef COIL_PRIMS_EMITTER_H_
#define COIL_PRIMS_EMITTER_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "ir/attribute.h"
#include "ir/graph.h"
#include "ir/shape_guards.h"
#include "ir/tensor_type.h"

namespace coil::prims {

class Emitter;
class OpCall;
class Val;

// One decomposition: the values that replace the op's outputs, in order.
using DecompositionFn = std::function<std::vector<Val>(const OpCall& call)>;

// Finds the decomposition of an op; nullptr when it has none.
using DecompositionLookup = std::function<const DecompositionFn*(absl::string_view op)>;

// A handle to a value being emitted. Cheap to copy.
class Val {
 public:
  Val() = default;
  Val(Emitter* emitter, Value* value) : emitter_(emitter), value_(value) {}

  // False after an error (and for default-constructed handles).
  bool ok() const { return value_ != nullptr; }
  Value* value() const { return value_; }
  Emitter& emitter() const { return *emitter_; }
  Emitter* emitter_ptr() const { return emitter_; }

  // Type queries are safe on a failed Val (they describe an empty f32 scalar).
  const TensorType& type() const;
  DType dtype() const { return type().dtype; }
  int64_t rank() const { return type().rank(); }
  const std::vector<SymExpr>& shape() const { return type().shape; }
  // Size of dim `d` (negative counts from the end); 1 when out of range after an error.
  SymExpr size(int64_t d) const;

 private:
  Emitter* emitter_ = nullptr;
  Value* value_ = nullptr;
};

// Appends ops to a graph, decomposing every op that is not kept whole.
class Emitter {
 public:
  // `keep(op, attrs)`: true for ops emitted as they are (prims, externs, ops a backend keeps;
  // attrs normalized, e.g. attention is kept only without dropout).
  using KeepFn = std::function<bool(absl::string_view op, const AttrMap& attrs)>;
  Emitter(Graph& out, DecompositionLookup lookup, KeepFn keep)
      : out_(out), lookup_(std::move(lookup)), keep_(std::move(keep)) {}

  // Emits `op`; decomposes it first unless kept. Returns one Val per output (empty Vals
  // after an error, as many as the op's schema would give, or none if unknown).
  std::vector<Val> Op(absl::string_view op, std::vector<Val> inputs, AttrMap attrs = {});
  // The same for single-output ops.
  Val Op1(absl::string_view op, std::vector<Val> inputs, AttrMap attrs = {});

  // Wraps a value of the output graph.
  Val Wrap(Value* v) { return Val(this, v); }

  // Records an error (the first one wins).
  void Fail(absl::Status status);
  template <typename... Args>
  void Fail(const Args&... args) {
    Fail(absl::InvalidArgumentError(absl::StrCat(args...)));
  }
  bool ok() const { return status_.ok(); }
  const absl::Status& status() const { return status_; }

  // Source location stamped on every node emitted from now on.
  void set_loc(SourceLoc loc) { loc_ = std::move(loc); }
  // Name (provenance: the ONNX node name or module path of the op being rewritten) stamped on
  // every node emitted from now on, so prims nodes keep the name of the op they came from.
  void set_name(std::string name) { name_ = std::move(name); }
  Graph& graph() { return out_; }

  // From now on, keeps what each emitted node's meta function assumed about symbolic sizes
  // (ir/shape_assumption.h), in emission order, for nodes that assumed something: DecomposeOps
  // turns them into guards without running the meta functions again.
  void CollectAssumptions() { collect_assumptions_ = true; }
  const std::vector<NodeAssumptions>& assumptions() const { return assumptions_; }

 private:
  std::vector<Val> Decompose(absl::string_view op, std::vector<Val> inputs, AttrMap attrs,
                             std::vector<TensorType> out_types);

  Graph& out_;
  DecompositionLookup lookup_;
  KeepFn keep_;
  absl::Status status_;
  SourceLoc loc_;
  std::string name_;
  std::vector<std::string> stack_;  // ops being decomposed, outermost first
  bool collect_assumptions_ = false;
  std::vector<NodeAssumptions> assumptions_;
};

// What a decomposition sees of the op it replaces: its inputs as Vals, its normalized
// attributes (every schema attribute present) and its output types.
class OpCall {
 public:
  OpCall(Emitter& e, std::string op, std::vector<Val> inputs, const AttrMap& attrs,
         std::vector<TensorType> out_types)
      : e_(e), op_(std::move(op)), inputs_(std::move(inputs)), attrs_(attrs),
        out_types_(std::move(out_types)) {}

  Emitter& e() const { return e_; }
  const std::string& op() const { return op_; }
  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  // Input i; an empty Val (and a recorded error) when absent.
  Val in(int i) const;
  // Whether optional input i was given.
  bool has_in(int i) const { return i < num_inputs(); }
  const std::vector<Val>& inputs() const { return inputs_; }

  const TensorType& out_type(int i = 0) const { return out_types_.at(i); }
  DType out_dtype(int i = 0) const { return out_types_.at(i).dtype; }
  const std::vector<SymExpr>& out_shape(int i = 0) const { return out_types_.at(i).shape; }
  int num_outputs() const { return static_cast<int>(out_types_.size()); }

  // Attribute readers (attributes are normalized, so a missing one is a compiler bug; it is
  // recorded as an error rather than crashing).
  const AttrMap& attrs() const { return attrs_; }
  bool Has(absl::string_view name) const { return HasAttr(attrs_, name); }
  int64_t Int(absl::string_view name) const;
  double Float(absl::string_view name) const;
  bool Bool(absl::string_view name) const;
  std::string Str(absl::string_view name) const;
  IntList Ints(absl::string_view name) const;
  FloatList Floats(absl::string_view name) const;
  DType DTypeAttr(absl::string_view name) const;
  SymExpr Sym(absl::string_view name) const;
  SymList Syms(absl::string_view name) const;
  // The attribute as given (for forwarding), or nullptr.
  const Attribute* Raw(absl::string_view name) const;

 private:
  Emitter& e_;
  std::string op_;
  std::vector<Val> inputs_;
  const AttrMap& attrs_;
  std::vector<TensorType> out_types_;
};

// ---- dtype helpers ----
// The dtype math runs in: f32 for f16/bf16 (as PyTorch's opmath), else the dtype itself.
DType ComputeDType(DType t);
// Converts f16/bf16 to f32; other values unchanged.
Val Upcast(Val x);
// prims.convert_element_type, or x itself when the dtype already matches.
Val Cast(Val x, DType dtype);

// ---- elementwise unary prims (operand used as is) ----
#define COIL_PRIMS_UNARY(Name) Val Name(Val x);
COIL_PRIMS_UNARY(Abs)
COIL_PRIMS_UNARY(Neg)
COIL_PRIMS_UNARY(Sign)
COIL_PRIMS_UNARY(Signbit)
COIL_PRIMS_UNARY(Exp)
COIL_PRIMS_UNARY(Exp2)
COIL_PRIMS_UNARY(Expm1)
COIL_PRIMS_UNARY(Log)
COIL_PRIMS_UNARY(Log2)
COIL_PRIMS_UNARY(Log1p)
COIL_PRIMS_UNARY(Sqrt)
COIL_PRIMS_UNARY(Rsqrt)
COIL_PRIMS_UNARY(Sin)
COIL_PRIMS_UNARY(Cos)
COIL_PRIMS_UNARY(Tan)
COIL_PRIMS_UNARY(Asin)
COIL_PRIMS_UNARY(Acos)
COIL_PRIMS_UNARY(Atan)
COIL_PRIMS_UNARY(Sinh)
COIL_PRIMS_UNARY(Cosh)
COIL_PRIMS_UNARY(Tanh)
COIL_PRIMS_UNARY(Asinh)
COIL_PRIMS_UNARY(Acosh)
COIL_PRIMS_UNARY(Atanh)
COIL_PRIMS_UNARY(Erf)
COIL_PRIMS_UNARY(Erfc)
COIL_PRIMS_UNARY(Ceil)
COIL_PRIMS_UNARY(Floor)
COIL_PRIMS_UNARY(Round)
COIL_PRIMS_UNARY(Trunc)
COIL_PRIMS_UNARY(BitwiseNot)
#undef COIL_PRIMS_UNARY

// ---- elementwise binary prims: broadcast + promote, then the prim ----
// A double operand becomes a `prims.full` of the tensor operand's shape; its dtype is the
// tensor's, except that a non-integral double with an integral/bool tensor gives f32.
#define COIL_PRIMS_BINARY(Name) \
  Val Name(Val a, Val b);       \
  Val Name(Val a, double b);    \
  Val Name(double a, Val b);
COIL_PRIMS_BINARY(Add)
COIL_PRIMS_BINARY(Sub)
COIL_PRIMS_BINARY(Mul)
COIL_PRIMS_BINARY(Div)  // true division on floats, truncation on integers
COIL_PRIMS_BINARY(Remainder)
COIL_PRIMS_BINARY(Fmod)
COIL_PRIMS_BINARY(Pow)
COIL_PRIMS_BINARY(Maximum)
COIL_PRIMS_BINARY(Minimum)
COIL_PRIMS_BINARY(Atan2)
COIL_PRIMS_BINARY(Hypot)
COIL_PRIMS_BINARY(BitwiseAnd)
COIL_PRIMS_BINARY(BitwiseOr)
COIL_PRIMS_BINARY(BitwiseXor)
COIL_PRIMS_BINARY(Eq)
COIL_PRIMS_BINARY(Ne)
COIL_PRIMS_BINARY(Lt)
COIL_PRIMS_BINARY(Le)
COIL_PRIMS_BINARY(Gt)
COIL_PRIMS_BINARY(Ge)
#undef COIL_PRIMS_BINARY

inline Val operator+(Val a, Val b) { return Add(a, b); }
inline Val operator+(Val a, double b) { return Add(a, b); }
inline Val operator+(double a, Val b) { return Add(a, b); }
inline Val operator-(Val a, Val b) { return Sub(a, b); }
inline Val operator-(Val a, double b) { return Sub(a, b); }
inline Val operator-(double a, Val b) { return Sub(a, b); }
inline Val operator*(Val a, Val b) { return Mul(a, b); }
inline Val operator*(Val a, double b) { return Mul(a, b); }
inline Val operator*(double a, Val b) { return Mul(a, b); }
inline Val operator/(Val a, Val b) { return Div(a, b); }
inline Val operator/(Val a, double b) { return Div(a, b); }
inline Val operator/(double a, Val b) { return Div(a, b); }
inline Val operator-(Val a) { return Neg(a); }

// prims.where with broadcasting; a and b are promoted to a common dtype.
Val Where(Val cond, Val a, Val b);
Val Where(Val cond, Val a, double b);
Val Where(Val cond, double a, Val b);

// ---- reductions (dims may be negative; empty `dims` means every dim) ----
Val Sum(Val x, IntList dims, bool keepdim = false);
Val Prod(Val x, IntList dims, bool keepdim = false);
Val Amax(Val x, IntList dims, bool keepdim = false);
Val Amin(Val x, IntList dims, bool keepdim = false);
Val Argmax(Val x, int64_t dim, bool keepdim = false);
Val Argmin(Val x, int64_t dim, bool keepdim = false);
// Sum / (number of reduced elements), computed in x's dtype (callers Upcast first).
Val Mean(Val x, IntList dims, bool keepdim = false);
Val Cumsum(Val x, int64_t dim);
Val Cumprod(Val x, int64_t dim);
// The number of elements over `dims` (all dims when empty), symbolic.
SymExpr NumElements(const Val& x, const IntList& dims);

// ---- shape and layout ----
Val Reshape(Val x, SymList shape);
Val Permute(Val x, IntList dims);
Val Transpose(Val x, int64_t d0, int64_t d1);
Val BroadcastInDim(Val x, SymList shape, IntList broadcast_dimensions);
// numpy-style: x's dims align with the trailing dims of `shape`.
Val BroadcastTo(Val x, SymList shape);
// One dim sliced [start, end) with `step`; the others kept.
Val Slice(Val x, int64_t dim, SymExpr start, SymExpr end, int64_t step = 1);
Val Squeeze(Val x, IntList dims);
// Inserts a size-1 dim at `dim` (in [0, rank]; negative counts from rank + 1).
Val Unsqueeze(Val x, int64_t dim);
Val Concat(std::vector<Val> xs, int64_t dim);
Val Pad(Val x, IntList low, IntList high, double value);
Val Rev(Val x, IntList dims);

// ---- creation and random ----
Val Full(Emitter& e, SymList shape, double value, DType dtype);
// A tensor of x's shape filled with `value`, in `dtype` (x's dtype when unspecified).
Val FullLike(Val x, double value, DType dtype = proto::DTYPE_UNSPECIFIED);
Val Iota(Emitter& e, SymExpr length, int64_t start, int64_t step, DType dtype);
// A rank-0 tensor holding a symbolic integer's value.
Val SymValue(Emitter& e, SymExpr value, DType dtype);
Val PhiloxUniform(Emitter& e, SymList shape, int64_t seed, SymExpr offset, DType dtype);

// ---- indexing ----
Val Gather(Val x, int64_t dim, Val index);
Val Scatter(Val x, int64_t dim, Val index, Val src, absl::string_view reduce = "none");

}  // namespace coil::prims

#endif  // COIL_PRIMS_EMITTER_H_
