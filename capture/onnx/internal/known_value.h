// KnownValue: a tensor whose elements are known at import time, as symbolic integers (shape
// arithmetic) or as constant floats.
//
// Exporters compute shapes in the graph: Shape(x) -> Gather -> Unsqueeze -> Concat -> Reshape.
// The importer keeps such values here instead of emitting aten ops, folds the ONNX ops that
// combine them, and hands the result to shape attributes (kSyms) of the consumer:
//
//   KnownValue s = KnownValue::Ints(proto::INT64, {3}, {SymExpr::Symbol("batch"), 3, 224});
//   absl::StatusOr<KnownValue> g = Gather(s, KnownValue::Scalar(0), /*axis=*/0);  // [batch]
//
// Element-wise folds broadcast like numpy. Integer Div truncates toward zero (ONNX, as C); a
// symbolic quotient becomes a SymExpr FloorDiv only where the signs of dividend and divisor are
// proven (symbol ranges), since floor and truncation differ for a negative quotient. Mod
// (fmod=0) takes the divisor's sign like SymExpr::Mod; fmod=1 takes the dividend's. A symbolic
// fold that a SymExpr cannot express returns nullopt and says why.
//
// Implemented in known_value.cc (the type, bytes, broadcasting), known_value_elementwise.cc
// (binary, unary, Cast, Where, Sum/Prod), known_value_layout.cc (Gather, Slice, Concat,
// Transpose, Reshape, Expand) and known_value_sym_float.cc (symbolic floating-point values).
#ifndef COIL_CAPTURE_ONNX_INTERNAL_KNOWN_VALUE_H_
#define COIL_CAPTURE_ONNX_INTERNAL_KNOWN_VALUE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/dtype.h"
#include "ir/sym_expr.h"

namespace coil::onnx_internal {

// Largest tensor kept as a KnownValue (initializers and folded results).
inline constexpr int64_t kMaxKnownElements = 4096;
// Constants this large are not folded symbolically (SymExpr CHECK-fails on overflow).
inline constexpr int64_t kMaxSymConstant = int64_t{1} << 40;

struct KnownValue {
  DType dtype = proto::INT64;
  std::vector<int64_t> shape;
  // Row-major elements: `ints` for integral and bool dtypes, `floats` for floating ones. A
  // floating-point value with symbolic elements (a size cast to float, then scaled: torch's
  // ceil(h / 4.0)) keeps them exactly as `ints[i] / den` instead, with `floats` empty (see
  // known_value_sym_float.cc).
  std::vector<SymExpr> ints;
  std::vector<double> floats;
  int64_t den = 1;  // > 0; not 1 only for a symbolic floating-point value

  static KnownValue Ints(DType dtype, std::vector<int64_t> shape, std::vector<SymExpr> values);
  static KnownValue Floats(DType dtype, std::vector<int64_t> shape, std::vector<double> values);
  // A 0-D int64.
  static KnownValue Scalar(SymExpr v);

  bool is_float() const { return IsFloating(dtype); }
  // A floating-point value held as symbolic fractions ints[i] / den.
  bool sym_float() const { return is_float() && !ints.empty(); }
  // Elements are in `ints` (integers, and symbolic floating-point values).
  bool uses_ints() const { return !is_float() || !ints.empty(); }
  int64_t numel() const;
  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  // Every element is a constant.
  bool IsConstant() const;
  // Element i as a double (constant elements only).
  double AsDouble(int64_t i) const;
  // Little-endian bytes of a constant value in its dtype.
  std::string Bytes() const;
};

// Decodes little-endian bytes (nullopt for types or sizes not kept).
std::optional<KnownValue> KnownFromBytes(DType dtype, const std::vector<int64_t>& shape,
                                         const std::string& bytes);

enum class BinaryFold { kAdd, kSub, kMul, kDiv, kMod, kFMod, kMin, kMax, kEq, kLt, kGt, kLe,
                        kGe, kAnd, kOr, kXor, kPow };
// Numpy-broadcast element-wise op; nullopt when a symbolic operand makes it unknowable, with
// the reason in *why (when not null). `ranges` bounds the symbols (signs of quotients,
// relations).
absl::StatusOr<std::optional<KnownValue>> FoldBinary(BinaryFold op, const KnownValue& a,
                                                     const KnownValue& b,
                                                     const SymRanges& ranges = {},
                                                     std::string* why = nullptr);
enum class UnaryFold { kNeg, kAbs, kNot, kFloor, kCeil, kSqrt, kRound, kReciprocal, kSign };
std::optional<KnownValue> FoldUnary(UnaryFold op, const KnownValue& a,
                                    const SymRanges& ranges = {});

// ONNX Cast (float -> int truncates toward zero). Symbolic integers cast to float become a
// symbolic floating-point value; one cast back to integers truncates where the signs are
// proven (nullopt with *why otherwise).
std::optional<KnownValue> FoldCast(const KnownValue& a, DType to, const SymRanges& ranges = {},
                                   std::string* why = nullptr);
absl::StatusOr<KnownValue> FoldWhere(const KnownValue& cond, const KnownValue& a,
                                     const KnownValue& b);
// ONNX Gather with known indices (negative ones wrap).
absl::StatusOr<KnownValue> FoldGather(const KnownValue& data, const KnownValue& indices,
                                      int64_t axis);
// Python/ONNX slice bounds on a static size: the first index (in range when count > 0), the
// step and the number of elements taken.
struct StaticSlice {
  int64_t start = 0, step = 1, count = 0;
};
StaticSlice NormalizeSlice(int64_t dim, int64_t start, int64_t end, int64_t step);
// ONNX Slice along one axis with constant bounds (already normalized by the caller).
KnownValue FoldSlice(const KnownValue& data, int64_t axis, int64_t start, int64_t step,
                     int64_t count);
absl::StatusOr<KnownValue> FoldConcat(const std::vector<const KnownValue*>& parts, int64_t axis);
// ONNX Transpose: output dimension i is input dimension perm[i] (perm is a permutation).
KnownValue FoldTranspose(const KnownValue& a, const std::vector<int64_t>& perm);
// Same elements, new static shape.
KnownValue FoldReshape(const KnownValue& a, std::vector<int64_t> shape);
// Numpy broadcast of a to `shape`.
absl::StatusOr<KnownValue> FoldExpand(const KnownValue& a, const std::vector<int64_t>& shape);
// Sum or product of all elements along `axes` (sorted, non-negative).
// nullopt on int64 overflow.
std::optional<KnownValue> FoldReduce(const KnownValue& a, const std::vector<int64_t>& axes,
                                     bool keepdims, bool product);

// ---- symbolic floating-point values (known_value_sym_float.cc): exact rationals ints / den
// from Cast(int -> float), then Add/Sub/Mul (by dyadic constants such as 0.5), Div by
// constants, Neg/Abs/Floor/Ceil, Min/Max, comparisons, and Cast back to integers. Anything
// else (Sqrt, Pow, Round, Mod) gives nullopt and says why.
absl::StatusOr<std::optional<KnownValue>> SymFloatBinary(BinaryFold op, const KnownValue& a,
                                                         const KnownValue& b,
                                                         const SymRanges& ranges, std::string* why);
std::optional<KnownValue> SymFloatUnary(UnaryFold op, const KnownValue& a, const SymRanges& ranges);
// Cast of a symbolic integer or floating-point value to `to`.
std::optional<KnownValue> SymFloatCast(const KnownValue& a, DType to, const SymRanges& ranges,
                                       std::string* why);

// ONNX integer Div (truncating toward zero) of symbolic operands whose signs the ranges prove;
// nullopt with *why otherwise.
std::optional<SymExpr> SymTruncDiv(const SymExpr& a, const SymExpr& b, const SymRanges& ranges,
                                   std::string* why);
// For each element of the broadcast shape `out`, the flat index of the element of `in`.
std::vector<int64_t> BroadcastIndex(const std::vector<int64_t>& in, const std::vector<int64_t>& out);

// Numpy broadcasting of two static shapes.
absl::StatusOr<std::vector<int64_t>> BroadcastShapes(const std::vector<int64_t>& a,
                                                     const std::vector<int64_t>& b);

// The number of elements of a static shape.
int64_t ShapeNumel(const std::vector<int64_t>& shape);
// `v` rounded to floating dtype `t` (f32, f16, bf16; other dtypes: unchanged).
double RoundToDType(DType t, double v);

}  // namespace coil::onnx_internal

#endif  // COIL_CAPTURE_ONNX_INTERNAL_KNOWN_VALUE_H_
