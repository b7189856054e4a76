// Scalar semantics of the elementwise prims (docs/prims.md), shared by the reference kernels
// (prims_kernels.cc) and the Schedule interpreter (runtime/schedule_interpreter.h), so the two
// cannot drift.
//
// Values follow the reference kernels' convention: a floating operand is a double holding a
// value of its dtype, an integral or bool operand an int64 (bool as 0/1). Which path runs is
// decided by the dtype of the last operand (for where: the value operands'):
//
//   std::optional<ScalarOp> op = ScalarOpFromName("prims.add");
//   double args[2] = {1.5, 2.0};
//   double r = EvalFloat(*op, args);   // 3.5, to be rounded to the result dtype by the caller
//
// convert_element_type is not here: it is a dtype cast (CastDouble / HostTensor::To).
#ifndef COIL_RUNTIME_REFERENCE_PRIMS_SCALAR_H_
#define COIL_RUNTIME_REFERENCE_PRIMS_SCALAR_H_

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace coil {

enum class ScalarOp : uint8_t {
  // Unary, floating only.
  kExp, kExp2, kExpm1, kLog, kLog2, kLog1p, kSqrt, kRsqrt, kSin, kCos, kTan, kAsin, kAcos,
  kAtan, kSinh, kCosh, kTanh, kAsinh, kAcosh, kAtanh, kErf, kErfc, kCeil, kFloor, kRound,
  kTrunc,
  // Unary, int and float (bitwise_not: int and bool).
  kAbs, kNeg, kSign, kSignbit, kBitwiseNot,
  // Binary.
  kAdd, kSub, kMul, kDiv, kRemainder, kFmod, kPow, kMaximum, kMinimum, kAtan2, kHypot,
  kBitwiseAnd, kBitwiseOr, kBitwiseXor, kEq, kNe, kLt, kLe, kGt, kGe,
  // Ternary: where(cond, a, b).
  kWhere,
};

// The op for a prim name ("prims.exp"); nullopt for anything else (convert_element_type
// included).
std::optional<ScalarOp> ScalarOpFromName(absl::string_view prim);
// "prims.exp".
const char* ScalarOpName(ScalarOp op);
// Number of operands (1, 2 or 3).
int ScalarOpArity(ScalarOp op);
// Whether the op has a floating / an integral-and-bool path.
bool HasFloatPath(ScalarOp op);
bool HasIntPath(ScalarOp op);
// Whether the op returns bool (comparisons, signbit) rather than its operands' dtype.
bool ReturnsBool(ScalarOp op);

// The floating path: operands are doubles; the result is unrounded (the caller rounds to the
// result dtype; comparisons return 1.0 / 0.0). Only for ops with HasFloatPath.
double EvalFloat(ScalarOp op, const double* args);

// The integral path: operands are int64 (bool as 0/1; `operand_is_bool` makes bitwise_not
// logical). The result is unwrapped int64 (the caller wraps to the result dtype). Returns false
// on a data error (integer division by zero, negative integer power): then
// IntErrorMessage(op, args) says what went wrong. Only for ops with HasIntPath.
bool EvalInt(ScalarOp op, const int64_t* args, bool operand_is_bool, int64_t* out);
std::string IntErrorMessage(ScalarOp op, const int64_t* args);

// max / min that propagate NaN (prims.maximum/minimum and the amax/amin reductions).
inline double NanMax(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? NAN : (a < b ? b : a);
}
inline double NanMin(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? NAN : (b < a ? b : a);
}

}  // namespace coil

#endif  // COIL_RUNTIME_REFERENCE_PRIMS_SCALAR_H_
