// Scalar values of a Schedule kernel as CUDA C++ text: register and memory types per dtype,
// literals, the interpreter's conversions, element loads/stores and every elementwise prim
// (runtime/reference/prims_scalar.h). Not an API: used by kernel_source.cc.
//
// Registers: f32 -> float, f64 -> double, f16/bf16 -> float holding a value of the dtype
// (rounded after every expression, as the interpreter rounds), i64 -> i64, i32 -> int,
// i8 -> signed char, u8 -> unsigned char, bool -> bool. Memory: f16/bf16 as unsigned short bit
// patterns, bool as one byte 0/1.
//
// Semantics follow the Schedule interpreter as the CPU backend does (codegen_cpu's
// math_emitter.h): the floating path computes in f32 when every operand is f32/f16/bf16/bool and
// in f64 otherwise (CUDA's f32 functions: within a few ulp of the interpreter's double result);
// the integral path computes in wrapping int64 and wraps into the dtype.
#ifndef COIL_CODEGEN_CUDA_INTERNAL_VALUE_SOURCE_H_
#define COIL_CODEGEN_CUDA_INTERNAL_VALUE_SOURCE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/dtype.h"
#include "runtime/reference/prims_scalar.h"

namespace coil::codegen_cuda_internal {

// C type of a register / of a memory element.
const char* RegType(DType t);
const char* MemType(DType t);

// A constant of dtype `t` as exact C text (`d` for floating dtypes, `i` otherwise).
std::string LiteralSource(DType t, double d, int64_t i);

// Saturating double -> int64 (the interpreter's TruncSat), for masked-load literals.
int64_t TruncSatHost(double v);

// `x` (a register of dtype `from`; FLOAT32 / FLOAT64 / INT64 / BOOL also name the compute
// types) converted to dtype `to`, as the interpreter's Convert.
std::string ConvertSource(const std::string& x, DType from, DType to);

// The register value of the memory element `elem` (an lvalue text) of dtype `t`, and the
// memory representation of register `x` of dtype `t`.
std::string LoadElementSource(const std::string& elem, DType t);
std::string StoreElementSource(const std::string& x, DType t);

// The memory representation, in a buffer of dtype `to`, of register `x` of dtype `from`:
// StoreElementSource(ConvertSource(x, from, to), to) with one rounding instead of two (a bf16 /
// f16 store rounds; a bf16 value, rounded already, is the high half of its f32 bits).
std::string StoreValueSource(const std::string& x, DType from, DType to);

// Vector stores of these dtypes keep f32 values and round them in pairs when stored
// (coil_vstore_bf16 / coil_vstore_f16: one cvt per two elements); the call that stores `items`
// of them (coil_vcopy<items> for the others).
bool PackedStore(DType t);
std::string VectorStoreCall(DType t, int items);

// `x` as an int64 (_v<id>): floats TruncSat, bool 0/1.
std::string ToI64Source(const std::string& x, DType t);

// An APPLY: `dst` (declared by the caller as RegType(result)) = op(args). Statements (may
// report integer errors through coil_fail with `kernel_id` / `expr_id`). Errors: an op without a
// path for its operands' dtypes.
struct ApplyOperand {
  std::string text;
  DType dtype;
};
absl::StatusOr<std::string> ApplySource(ScalarOp op, const std::vector<ApplyOperand>& args,
                                        DType result, const std::string& dst, int kernel_id,
                                        int expr_id);

}  // namespace coil::codegen_cuda_internal

#endif  // COIL_CODEGEN_CUDA_INTERNAL_VALUE_SOURCE_H_
