// Scalar values of a Schedule kernel in LLVM IR: register types per dtype, dtype conversions,
// element loads/stores, every elementwise prim (runtime/reference/prims_scalar.h) and Philox.
// Not an API: used by kernel_emitter.cc.
//
// Register representation (one SSA value per expression):
//   f32 -> float, f64 -> double, f16/bf16 -> float holding a value exactly representable in
//   the dtype (rounded after every expression, as the interpreter rounds), i64/i32/i8 -> iN
//   (signed), u8 -> i8 (unsigned), bool -> i1. In memory: f16/bf16 as 16-bit patterns, bool
//   as one byte 0/1.
//
// Semantics follow the Schedule interpreter: the floating path computes in f32 when every
// operand is f32/f16/bf16/bool (exact for + - * / sqrt: the interpreter's double result
// rounded to f32 is the same value) and in f64 otherwise; the integral path computes in
// wrapping i64 and wraps the result into the dtype. Transcendentals in f32: tanh, erf and exp
// are coil's inline polynomials (vector_math.h, <= 1.3 ulp); the others are LLVM intrinsics
// (log, sin, cos, pow: glibc libmvec when vectorized) or libm f32 calls.
//
//   TypedValue v = EmitApply(b, ScalarOp::kAdd, {x, y}, proto::FLOAT32);
#ifndef COIL_CODEGEN_CPU_INTERNAL_MATH_EMITTER_H_
#define COIL_CODEGEN_CPU_INTERNAL_MATH_EMITTER_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/dtype.h"
#include "llvm/IR/IRBuilder.h"
#include "runtime/reference/prims_scalar.h"

namespace coil::codegen_cpu_internal {

struct TypedValue {
  llvm::Value* v = nullptr;
  DType dt = proto::DTYPE_UNSPECIFIED;
};

// The register type of a dtype.
llvm::Type* RegType(llvm::LLVMContext& c, DType t);
// The memory element type of a dtype (i16 for f16/bf16, i8 for bool).
llvm::Type* MemType(llvm::LLVMContext& c, DType t);

// `x` converted to dtype `to` as the interpreter's Convert (float -> int truncates and
// saturates, NaN -> 0; -> bool is != 0, NaN is true; int -> float goes through f64).
llvm::Value* EmitConvert(llvm::IRBuilder<>& b, TypedValue x, DType to);
// A constant of dtype `t`: `d` for floating dtypes, `i` otherwise.
llvm::Value* EmitConstant(llvm::IRBuilder<>& b, DType t, double d, int64_t i);
// The element of dtype `t` at `ptr` (`*access`, when given, receives the load instruction),
// and a store of `x` (converted to `t`) there (returned: the store instruction). The
// instructions are returned for alias metadata (alias_scopes.h).
llvm::Value* EmitLoadElement(llvm::IRBuilder<>& b, llvm::Value* ptr, DType t,
                             llvm::Instruction** access = nullptr);
llvm::Instruction* EmitStoreElement(llvm::IRBuilder<>& b, llvm::Value* ptr, DType t,
                                    TypedValue x);
// `x` as an int64 (signed or zero extended; floating values TruncSat, as _v<id>).
llvm::Value* EmitToI64(llvm::IRBuilder<>& b, TypedValue x);

// prims.<op> over `args` with result dtype `result`. Errors: an op without a path for the
// operands' dtype (InvalidArgument).
absl::StatusOr<TypedValue> EmitApply(llvm::IRBuilder<>& b, ScalarOp op,
                                     const std::vector<TypedValue>& args, DType result);

// NaN-propagating max / min of two floating values (NanMax / NanMin).
llvm::Value* EmitNanMax(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* y, bool is_max);

// philox_uniform(seed, counter) (runtime/reference/philox.h) as dtype `t`, bit-exact.
llvm::Value* EmitPhiloxUniform(llvm::IRBuilder<>& b, int64_t seed, llvm::Value* counter, DType t);

}  // namespace coil::codegen_cpu_internal

#endif  // COIL_CODEGEN_CPU_INTERNAL_MATH_EMITTER_H_
