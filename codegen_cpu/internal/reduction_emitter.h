// The REDUCE expressions of a Schedule kernel's ranged Loop in LLVM IR: one accumulator slot
// per reduction, initialized before the loop nest (StartReduction), updated once per
// iteration (Accumulate) and read after the nest (FinishReduction).
// Not an API: used by kernel_emitter.cc, which owns the loop nest.
//
// Numerics: floating sum/prod accumulate in f64 (as the interpreter) with the `reassoc`
// fast-math flag on the accumulating fadd/fmul only, so the loop vectorizer may split the
// accumulator into lanes; max/min/argmax/argmin are exact and NaN-propagating (argmax: first
// occurrence, NaN counts as the extreme); floating max/min accumulate integer order keys so
// they vectorize (only the sign of a zero result may differ from the interpreter's; [Note:
// max/min as integers] in reduction_emitter.cc).
//
//   absl::StatusOr<Reduction> r = StartReduction(b, entry, expr, kernel, visible_values);
//   ... loop nest: Accumulate(b, *r, arg_value, row_major_position);
//   TypedValue result = FinishReduction(b, *r);
//
// A column reduction (kernel_emitter.cc, [Note: column reductions]) keeps one accumulator per
// column of a tile: StartReduction(..., lanes), then Initialize / Accumulate / FinishReduction
// on Lane(b, r, j) for each column j.
#ifndef COIL_CODEGEN_CPU_INTERNAL_REDUCTION_EMITTER_H_
#define COIL_CODEGEN_CPU_INTERNAL_REDUCTION_EMITTER_H_

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "codegen_cpu/internal/math_emitter.h"
#include "ir/dtype.h"
#include "ir/proto/schedule.pb.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"

namespace coil::codegen_cpu_internal {

enum class RedOp { kSum, kProd, kMax, kMin, kArgMax, kArgMin };

// One REDUCE of the current ranged Loop: its accumulator slots and how to finish it.
struct Reduction {
  const proto::Expr* expr = nullptr;
  RedOp op = RedOp::kSum;
  DType acc_dt = proto::DTYPE_UNSPECIFIED;  // F64 / F32 / INT64
  // Floating max/min: `acc` holds the OrderKey of acc_dt's value (an i32 / i64).
  bool keyed = false;
  // A floating sum/prod of f32 (f16, bf16) values in an f64 accumulator.
  bool f32_sum_in_f64 = false;
  llvm::Type* slot = nullptr;  // the accumulator's type (acc_dt's, or the keys' integer)
  llvm::Value* init = nullptr;  // its initial value
  llvm::Value* acc = nullptr;   // the slot (an alloca, or one lane of a lanes-wide alloca)
  llvm::Value* arg = nullptr;   // argmax/argmin position
  int64_t lanes = 1;            // columns of a column reduction (1: one accumulator)
};

// Allocates the accumulator slots of REDUCE `e` of `kernel` in the entry block (`entry`) and
// stores their initial values at `b`'s insertion point (before the loop nest). `visible`: the
// expression values visible before the Loop, by id; the argument's dtype is taken from there or
// from its definition in `kernel` (which wins). Errors (InvalidArgument): an unknown reduction
// op, not one argument, an invalid result dtype, an unknown argument. With `lanes` > 1 the
// slots hold `lanes` accumulators and nothing is stored: the caller initializes each Lane.
absl::StatusOr<Reduction> StartReduction(llvm::IRBuilder<>& b, llvm::IRBuilder<>& entry,
                                         const proto::Expr& e, const proto::Kernel& kernel,
                                         const absl::flat_hash_map<int, TypedValue>& visible,
                                         int64_t lanes = 1);

// Lane `j` (an i64 value below r.lanes) of a lanes-wide reduction, as a one-accumulator one.
Reduction Lane(llvm::IRBuilder<>& b, const Reduction& r, llvm::Value* j);

// Stores r's initial value (and argmax's "no position yet") into its slot.
void Initialize(llvm::IRBuilder<>& b, const Reduction& r);

// Folds `in` (the value of r's argument in this iteration; `pos`: the row-major position in
// the Loop, for argmax/argmin) into r's accumulator.
void Accumulate(llvm::IRBuilder<>& b, const Reduction& r, TypedValue in, llvm::Value* pos);

// r's result, in the REDUCE's dtype (after the loop nest).
TypedValue FinishReduction(llvm::IRBuilder<>& b, const Reduction& r);

}  // namespace coil::codegen_cpu_internal

#endif  // COIL_CODEGEN_CPU_INTERNAL_REDUCTION_EMITTER_H_
