// Run-time checks of data in generated kernels: indices loaded from data (gather,
// index_select, embedding, advanced indexing: any LOAD or STORE whose index depends on a value
// `_v<id>`) must lie in their buffer dimension, and integer divisors (prims.div, remainder,
// fmod) must not be 0. A failed check is reported through the kernel's CoilKernelError record
// (runtime/cpu/kernel_abi.h), which the runtime turns into a Status. Not an API: used by
// kernel_emitter.cc.
//
// [Note: deferred checks] An index that is the same for every iteration of the innermost loop
// around its access (an embedding's token, while the loop copies its row) is checked where it
// is used with a branch to a cold block that reports and returns: LLVM's loop unswitching
// moves that branch out of the loop, which then vectorizes as if unchecked. Any other check
// does not branch where it is made. Each check site owns an
// i64 accumulator (an alloca zeroed in the entry block, promoted to registers by SROA): an
// index check folds `umax(acc, index)` (a negative index is a huge unsigned value), a divisor
// check `acc | (divisor == 0)`. Both are reductions the loop vectorizer widens, so a checked
// loop vectorizes as before. The access itself never leaves its buffer: a bad index becomes 0
// (a select) when the dimension's size is a positive constant; otherwise the access runs only
// where every checked index is in range (a branch around the load or store; a skipped load
// reads 0). Integer divisions already divide by 1 instead of 0 (math_emitter.cc). Once, after
// the kernel's loops, each accumulator is compared with its bound (one compare and a
// never-taken branch per check site per call); the first failing check is recorded with an
// atomic compare-and-swap (the first error of all threads wins) naming the expression, the
// buffer, the dimension, its size and the offending index (for an index check: the largest
// one as unsigned, so a negative one when any is negative). The cost: one umax / or per
// checked element and nothing else on the hot path (docs/benchmarks.md, "Run-time checks").
//
//   RuntimeChecks checks(entry_builder);
//   checks.Bind(error_arg);
//   llvm::Value* ok = checks.Index(b, ix, size, /*dim=*/0, /*wrapped=*/false, "expr 2 (LOAD)");
//   ...
//   checks.EmitReport(b);  // at the end of the function, before `ret`
#ifndef COIL_CODEGEN_CPU_INTERNAL_RUNTIME_CHECKS_H_
#define COIL_CODEGEN_CPU_INTERNAL_RUNTIME_CHECKS_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ir/proto/schedule.pb.h"
#include "llvm/IR/IRBuilder.h"
#include "runtime/cpu/kernel_abi.h"

namespace coil::codegen_cpu_internal {

// Whether `e` refers to a value of the kernel (a `_v<id>` symbol): an index from data.
bool RefersToValue(const proto::SymExpr& e);

// Whether `e` depends on any of the loop variables `vars` ("_i1", "_r0"), directly or through
// the values of `kernel` it refers to (a REDUCE result counts as depending on everything).
bool DependsOnAny(const proto::Kernel& kernel, const proto::SymExpr& e,
                  const std::vector<std::string>& vars);

// Whether index expression `e` is `_v<w>` with `w` = where(lt(x, 0), add(x, n), x), the
// wrapping of negative indices that the decompositions of index_tensor / index_put emit
// (prims/decompositions/indexing.cc): its errors then report x, as the reference does.
bool IsWrappedIndex(const proto::Kernel& kernel, const proto::SymExpr& e);

class RuntimeChecks {
 public:
  // `entry`: a builder in the function's entry block (before its terminator), where the
  // accumulators are allocated and zeroed.
  explicit RuntimeChecks(llvm::IRBuilder<>& entry) : eb_(entry) {}
  // The function's CoilKernelError* argument; set before EmitReport.
  void Bind(llvm::Value* error) { error_ = error; }

  // Checks that the i64 `index` is in [0, `bound`) (`bound`: an i64 computed in the entry
  // block), dimension `dim` of the buffer that `what` names; returns the i1 `index u< bound`.
  // `wrapped`: the op had wrapped negative indices (IsWrappedIndex).
  llvm::Value* Index(llvm::IRBuilder<>& b, llvm::Value* index, llvm::Value* bound, int64_t dim,
                     bool wrapped, const std::string& what);

  // The same for an index that does not change in the innermost loop: branches to a cold block
  // that reports and returns from the kernel; the code after it runs only with a good index.
  void IndexOrReturn(llvm::IRBuilder<>& b, llvm::Value* index, llvm::Value* bound, int64_t dim,
                     bool wrapped, const std::string& what);

  // Checks that the i64 `divisor` is not 0 (none when it is a constant) (kind: COIL_KERNEL_INT_DIV_BY_ZERO, _REM_, _FMOD_).
  void NonZero(llvm::IRBuilder<>& b, llvm::Value* divisor, CoilKernelErrorKind kind,
               const std::string& what);
  // Checks that the i64 integer `exponent` of a pow is not negative
  // (COIL_KERNEL_INT_NEGATIVE_POWER).
  void NonNegativeExponent(llvm::IRBuilder<>& b, llvm::Value* exponent, const std::string& what);

  // Emits the comparisons and the report at `b`'s insertion point, the end of the function
  // (every check site dominates it); `b` is left in the block where the function goes on.
  void EmitReport(llvm::IRBuilder<>& b);

 private:
  struct Site {
    llvm::AllocaInst* acc = nullptr;
    llvm::Value* bound = nullptr;  // the check fails when acc u>= bound
    int64_t kind = 0;
    int64_t dim = 0;
    std::string what;
  };
  llvm::AllocaInst* Accumulator(llvm::Type* t);
  // Records the failure of `s` with the offending `value` (the first report wins), then
  // branches to `done`.
  void Report(llvm::IRBuilder<>& b, const Site& s, llvm::Value* value, llvm::BasicBlock* done);

  llvm::IRBuilder<>& eb_;
  llvm::Value* error_ = nullptr;
  std::vector<Site> sites_;
};

// Emits `access` where the i1 `guard` holds (everywhere when `guard` is null) and returns its
// value, or `otherwise` where the guard fails (a phi; `access` may return null for a store,
// then so does this).
llvm::Value* EmitGuarded(llvm::IRBuilder<>& b, llvm::Value* guard, llvm::Value* otherwise,
                         const std::function<llvm::Value*()>& access);

}  // namespace coil::codegen_cpu_internal

#endif  // COIL_CODEGEN_CPU_INTERNAL_RUNTIME_CHECKS_H_
