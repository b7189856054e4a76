// SymExpr (ir/proto/graph.proto) -> int64 LLVM IR, for index, range and size expressions of a
// Schedule kernel. Not an API: used by kernel_emitter.cc.
//
// Arithmetic wraps (as the interpreter's IndexProgram); floordiv rounds toward -infinity and
// mod takes the divisor's sign. A division by zero (an error in the interpreter) yields an
// unspecified value, never a trap: kernels never fail.
//
//   IndexEmitter ix(builder, [&](absl::string_view name) -> llvm::Value* { ... });
//   absl::StatusOr<llvm::Value*> v = ix.Emit(expr);
#ifndef COIL_CODEGEN_CPU_INTERNAL_INDEX_EMITTER_H_
#define COIL_CODEGEN_CPU_INTERNAL_INDEX_EMITTER_H_

#include <functional>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ir/proto/graph.pb.h"
#include "llvm/IR/IRBuilder.h"

namespace coil::codegen_cpu_internal {

class IndexEmitter {
 public:
  // The i64 value of a symbol (shape symbol, loop variable, _v<id>), or nullptr when unknown.
  using Resolve = std::function<llvm::Value*(absl::string_view name)>;

  IndexEmitter(llvm::IRBuilder<>& b, Resolve resolve) : b_(b), resolve_(std::move(resolve)) {}

  // Errors: an unknown symbol or a malformed expression (InvalidArgument).
  absl::StatusOr<llvm::Value*> Emit(const proto::SymExpr& e);

 private:
  llvm::Value* FloorDiv(llvm::Value* a, llvm::Value* d);
  llvm::Value* Mod(llvm::Value* a, llvm::Value* d);

  llvm::IRBuilder<>& b_;
  Resolve resolve_;
};

}  // namespace coil::codegen_cpu_internal

#endif  // COIL_CODEGEN_CPU_INTERNAL_INDEX_EMITTER_H_
