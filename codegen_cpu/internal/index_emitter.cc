// SymExpr -> int64 IR.
#include "codegen_cpu/internal/index_emitter.h"

#include <vector>

#include "absl/strings/str_cat.h"

namespace coil::codegen_cpu_internal {
namespace {

// A divisor that never traps: 0 and -1 become 1 (-1 is handled by the callers).
llvm::Value* SafeDivisor(llvm::IRBuilder<>& b, llvm::Value* d) {
  if (auto* c = llvm::dyn_cast<llvm::ConstantInt>(d)) {
    if (!c->isZero() && !c->isMinusOne()) return d;
  }
  // One instruction per statement: argument evaluation order is the compiler's (clang and GCC
  // differ), and the emitted IR should not depend on which one built coil.
  llvm::Value* zero = b.CreateICmpEQ(d, b.getInt64(0));
  llvm::Value* minus_one = b.CreateICmpEQ(d, b.getInt64(-1));
  llvm::Value* bad = b.CreateOr(zero, minus_one);
  return b.CreateSelect(bad, b.getInt64(1), d);
}

bool IsPositiveConstant(llvm::Value* d) {
  auto* c = llvm::dyn_cast<llvm::ConstantInt>(d);
  return c != nullptr && c->getSExtValue() > 0;
}

}  // namespace

llvm::Value* IndexEmitter::FloorDiv(llvm::Value* a, llvm::Value* d) {
  llvm::Value* zero = b_.getInt64(0);
  if (IsPositiveConstant(d)) {
    llvm::Value* q = b_.CreateSDiv(a, d);
    llvm::Value* r = b_.CreateSRem(a, d);
    return b_.CreateSub(q, b_.CreateZExt(b_.CreateICmpSLT(r, zero), b_.getInt64Ty()));
  }
  llvm::Value* sd = SafeDivisor(b_, d);
  llvm::Value* q = b_.CreateSDiv(a, sd);
  llvm::Value* r = b_.CreateSRem(a, sd);
  llvm::Value* inexact = b_.CreateICmpNE(r, zero);
  llvm::Value* a_negative = b_.CreateICmpSLT(a, zero);
  llvm::Value* d_negative = b_.CreateICmpSLT(sd, zero);
  llvm::Value* fix = b_.CreateAnd(inexact, b_.CreateXor(a_negative, d_negative));
  q = b_.CreateSub(q, b_.CreateZExt(fix, b_.getInt64Ty()));
  llvm::Value* by_minus_one = b_.CreateICmpEQ(d, b_.getInt64(-1));
  llvm::Value* negated = b_.CreateSub(zero, a);
  return b_.CreateSelect(by_minus_one, negated, q);
}

llvm::Value* IndexEmitter::Mod(llvm::Value* a, llvm::Value* d) {
  llvm::Value* zero = b_.getInt64(0);
  if (IsPositiveConstant(d)) {
    llvm::Value* r = b_.CreateSRem(a, d);
    llvm::Value* negative = b_.CreateICmpSLT(r, zero);
    llvm::Value* wrapped = b_.CreateAdd(r, d);
    return b_.CreateSelect(negative, wrapped, r);
  }
  llvm::Value* sd = SafeDivisor(b_, d);
  llvm::Value* r = b_.CreateSRem(a, sd);
  llvm::Value* inexact = b_.CreateICmpNE(r, zero);
  llvm::Value* r_negative = b_.CreateICmpSLT(r, zero);
  llvm::Value* d_negative = b_.CreateICmpSLT(d, zero);
  llvm::Value* fix = b_.CreateAnd(inexact, b_.CreateXor(r_negative, d_negative));
  llvm::Value* wrapped = b_.CreateAdd(r, d);
  r = b_.CreateSelect(fix, wrapped, r);
  return b_.CreateSelect(b_.CreateICmpEQ(d, b_.getInt64(-1)), zero, r);
}

absl::StatusOr<llvm::Value*> IndexEmitter::Emit(const proto::SymExpr& e) {
  switch (e.kind()) {
    case proto::SymExpr::KIND_UNSPECIFIED:
      if (e.args_size() == 0) return b_.getInt64(0);  // an unset field means 0 (proto3)
      break;
    case proto::SymExpr::CONST:
      return b_.getInt64(e.value());
    case proto::SymExpr::SYMBOL: {
      llvm::Value* v = resolve_(e.name());
      if (v == nullptr) {
        return absl::InvalidArgumentError(
            absl::StrCat("symbol '", e.name(), "' is neither a graph symbol nor a loop variable "
                         "here"));
      }
      return v;
    }
    default:
      break;
  }
  const bool binary = e.kind() == proto::SymExpr::FLOORDIV || e.kind() == proto::SymExpr::MOD;
  if (e.args_size() < 1 || (binary && e.args_size() != 2) ||
      e.kind() == proto::SymExpr::KIND_UNSPECIFIED || e.kind() > proto::SymExpr::MAX) {
    return absl::InvalidArgumentError(
        absl::StrCat("malformed index expression (kind ", static_cast<int>(e.kind()), ", ",
                     e.args_size(), " args)"));
  }
  std::vector<llvm::Value*> a;
  for (const proto::SymExpr& x : e.args()) {
    absl::StatusOr<llvm::Value*> v = Emit(x);
    if (!v.ok()) return v.status();
    a.push_back(*v);
  }
  llvm::Value* r = a[0];
  for (size_t i = 1; i < a.size(); ++i) {
    switch (e.kind()) {
      case proto::SymExpr::ADD: r = b_.CreateAdd(r, a[i]); break;
      case proto::SymExpr::MUL: r = b_.CreateMul(r, a[i]); break;
      case proto::SymExpr::FLOORDIV: r = FloorDiv(r, a[i]); break;
      case proto::SymExpr::MOD: r = Mod(r, a[i]); break;
      case proto::SymExpr::MIN: r = b_.CreateSelect(b_.CreateICmpSLT(a[i], r), a[i], r); break;
      case proto::SymExpr::MAX: r = b_.CreateSelect(b_.CreateICmpSGT(a[i], r), a[i], r); break;
      default: break;
    }
  }
  return r;
}

}  // namespace coil::codegen_cpu_internal
