// Deferred index and divisor checks in generated kernels ([Note: deferred checks]).
#include "codegen_cpu/internal/runtime_checks.h"

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/MDBuilder.h"

namespace coil::codegen_cpu_internal {
namespace {

// The field of CoilKernelError at 8-byte slot `i` (kernel_abi.h: every field is 8 bytes).
llvm::Value* Field(llvm::IRBuilder<>& b, llvm::Value* error, int i) {
  return b.CreateConstInBoundsGEP1_64(b.getInt64Ty(), error, i);
}

// The expression `id` of `kernel` (nullptr when absent).
const proto::Expr* FindExpr(const proto::Kernel& kernel, int id) {
  for (const proto::Loop& l : kernel.loops()) {
    for (const proto::Expr& e : l.body()) {
      if (e.id() == id) return &e;
    }
  }
  return nullptr;
}

bool IsApply(const proto::Expr* e, const char* op, int nargs) {
  return e != nullptr && e->kind() == proto::Expr::APPLY && e->op() == op &&
         e->args_size() == nargs;
}

}  // namespace

bool RefersToValue(const proto::SymExpr& e) {
  if (e.kind() == proto::SymExpr::SYMBOL) return absl::StartsWith(e.name(), "_v");
  for (const proto::SymExpr& a : e.args()) {
    if (RefersToValue(a)) return true;
  }
  return false;
}

bool DependsOnAny(const proto::Kernel& kernel, const proto::SymExpr& e,
                  const std::vector<std::string>& vars) {
  if (e.kind() == proto::SymExpr::SYMBOL) {
    for (const std::string& v : vars) {
      if (e.name() == v) return true;
    }
    int id = 0;
    if (!absl::StartsWith(e.name(), "_v") || !absl::SimpleAtoi(e.name().substr(2), &id)) {
      return false;  // a shape symbol or another loop variable
    }
    const proto::Expr* x = FindExpr(kernel, id);
    if (x == nullptr || x->kind() == proto::Expr::REDUCE) return true;
    for (const proto::SymExpr& i : x->index()) {
      if (DependsOnAny(kernel, i, vars)) return true;
    }
    if (x->kind() == proto::Expr::INDEX || x->kind() == proto::Expr::RANDOM) {
      if (DependsOnAny(kernel, x->value(), vars)) return true;
    }
    std::vector<int> uses(x->args().begin(), x->args().end());
    if (x->mask() != 0) uses.push_back(x->mask());
    for (int a : uses) {
      proto::SymExpr s;
      s.set_kind(proto::SymExpr::SYMBOL);
      s.set_name(absl::StrCat("_v", a));
      if (DependsOnAny(kernel, s, vars)) return true;
    }
    return false;
  }
  for (const proto::SymExpr& a : e.args()) {
    if (DependsOnAny(kernel, a, vars)) return true;
  }
  return false;
}

bool IsWrappedIndex(const proto::Kernel& kernel, const proto::SymExpr& e) {
  int id = 0;
  if (e.kind() != proto::SymExpr::SYMBOL || !absl::StartsWith(e.name(), "_v") ||
      !absl::SimpleAtoi(e.name().substr(2), &id)) {
    return false;
  }
  // where(lt(x, 0), add(x, n), x)
  const proto::Expr* w = FindExpr(kernel, id);
  if (!IsApply(w, "prims.where", 3)) return false;
  const int x = w->args(2);
  const proto::Expr* lt = FindExpr(kernel, w->args(0));
  const proto::Expr* add = FindExpr(kernel, w->args(1));
  if (!IsApply(lt, "prims.lt", 2) || lt->args(0) != x || !IsApply(add, "prims.add", 2) ||
      (add->args(0) != x && add->args(1) != x)) {
    return false;
  }
  const proto::Expr* zero = FindExpr(kernel, lt->args(1));
  return zero != nullptr && zero->kind() == proto::Expr::LITERAL && zero->literal() == 0 &&
         zero->int_literal() == 0;
}

llvm::AllocaInst* RuntimeChecks::Accumulator(llvm::Type* t) {
  llvm::AllocaInst* acc = eb_.CreateAlloca(t, nullptr, "check.acc");
  eb_.CreateStore(llvm::ConstantInt::get(t, 0), acc);
  return acc;
}

void RuntimeChecks::Report(llvm::IRBuilder<>& b, const Site& s, llvm::Value* value,
                           llvm::BasicBlock* done) {
  llvm::Function* f = b.GetInsertBlock()->getParent();
  // The first report of all threads wins: only the thread that swaps 0 -> 1 writes.
  llvm::Value* swap = b.CreateAtomicCmpXchg(
      Field(b, error_, 0), b.getInt64(0), b.getInt64(1), llvm::MaybeAlign(8),
      llvm::AtomicOrdering::SequentiallyConsistent, llvm::AtomicOrdering::SequentiallyConsistent);
  auto* write = llvm::BasicBlock::Create(f->getContext(), "check.write", f);
  b.CreateCondBr(b.CreateExtractValue(swap, 1), write, done);
  b.SetInsertPoint(write);
  b.CreateStore(b.getInt64(s.kind), Field(b, error_, 1));
  b.CreateStore(value, Field(b, error_, 2));
  b.CreateStore(s.bound, Field(b, error_, 3));
  b.CreateStore(b.getInt64(s.dim), Field(b, error_, 4));
  llvm::Value* what = b.CreateGlobalStringPtr(s.what, "check.what");
  b.CreateStore(what, Field(b, error_, 5));
  b.CreateBr(done);
}

llvm::Value* RuntimeChecks::Index(llvm::IRBuilder<>& b, llvm::Value* index, llvm::Value* bound,
                                  int64_t dim, bool wrapped, const std::string& what) {
  Site s;
  s.acc = Accumulator(b.getInt64Ty());
  s.bound = bound;
  s.kind = wrapped ? COIL_KERNEL_WRAPPED_INDEX_OUT_OF_BOUNDS : COIL_KERNEL_INDEX_OUT_OF_BOUNDS;
  s.dim = dim;
  s.what = what;
  llvm::Value* acc = b.CreateLoad(b.getInt64Ty(), s.acc);
  b.CreateStore(b.CreateBinaryIntrinsic(llvm::Intrinsic::umax, acc, index), s.acc);
  sites_.push_back(std::move(s));
  return b.CreateICmpULT(index, bound);
}

void RuntimeChecks::IndexOrReturn(llvm::IRBuilder<>& b, llvm::Value* index, llvm::Value* bound,
                                  int64_t dim, bool wrapped, const std::string& what) {
  Site s;
  s.bound = bound;
  s.kind = wrapped ? COIL_KERNEL_WRAPPED_INDEX_OUT_OF_BOUNDS : COIL_KERNEL_INDEX_OUT_OF_BOUNDS;
  s.dim = dim;
  s.what = what;
  llvm::Function* f = b.GetInsertBlock()->getParent();
  llvm::LLVMContext& c = f->getContext();
  auto* fail = llvm::BasicBlock::Create(c, "check.fail", f);
  auto* ret = llvm::BasicBlock::Create(c, "check.return", f);
  auto* ok = llvm::BasicBlock::Create(c, "check.ok", f);
  b.CreateCondBr(b.CreateICmpULT(index, bound), ok, fail,
                 llvm::MDBuilder(c).createBranchWeights(1 << 20, 1));
  b.SetInsertPoint(fail);
  Report(b, s, index, ret);
  b.SetInsertPoint(ret);
  b.CreateRetVoid();
  b.SetInsertPoint(ok);
}

void RuntimeChecks::NonZero(llvm::IRBuilder<>& b, llvm::Value* divisor, CoilKernelErrorKind kind,
                            const std::string& what) {
  if (auto* c = llvm::dyn_cast<llvm::ConstantInt>(divisor); c != nullptr && !c->isZero()) return;
  Site s;
  s.acc = Accumulator(b.getInt8Ty());  // a narrow flag: no constraint on the vector width
  s.bound = b.getInt64(1);
  s.kind = kind;
  s.what = what;
  llvm::Value* acc = b.CreateLoad(b.getInt8Ty(), s.acc);
  llvm::Value* zero = b.CreateZExt(b.CreateICmpEQ(divisor, b.getInt64(0)), b.getInt8Ty());
  b.CreateStore(b.CreateOr(acc, zero), s.acc);
  sites_.push_back(std::move(s));
}

void RuntimeChecks::NonNegativeExponent(llvm::IRBuilder<>& b, llvm::Value* exponent,
                                        const std::string& what) {
  if (auto* c = llvm::dyn_cast<llvm::ConstantInt>(exponent); c != nullptr && !c->isNegative()) {
    return;
  }
  Site s;
  s.acc = Accumulator(b.getInt8Ty());
  s.bound = b.getInt64(1);
  s.kind = COIL_KERNEL_INT_NEGATIVE_POWER;
  s.what = what;
  llvm::Value* acc = b.CreateLoad(b.getInt8Ty(), s.acc);
  llvm::Value* negative =
      b.CreateZExt(b.CreateICmpSLT(exponent, b.getInt64(0)), b.getInt8Ty());
  b.CreateStore(b.CreateOr(acc, negative), s.acc);
  sites_.push_back(std::move(s));
}

void RuntimeChecks::EmitReport(llvm::IRBuilder<>& b) {
  if (sites_.empty()) return;
  llvm::Function* f = b.GetInsertBlock()->getParent();
  llvm::LLVMContext& c = f->getContext();
  auto* done = llvm::BasicBlock::Create(c, "checks.done", f);
  llvm::MDNode* unlikely = llvm::MDBuilder(c).createBranchWeights(1, 1 << 20);
  for (size_t i = 0; i < sites_.size(); ++i) {
    const Site& s = sites_[i];
    llvm::Value* acc = b.CreateZExt(b.CreateLoad(s.acc->getAllocatedType(), s.acc),
                                    b.getInt64Ty());
    auto* fail = llvm::BasicBlock::Create(c, "check.fail", f);
    auto* next = llvm::BasicBlock::Create(c, "check.next", f);
    b.CreateCondBr(b.CreateICmpUGE(acc, s.bound), fail, next, unlikely);
    b.SetInsertPoint(fail);
    Report(b, s, acc, done);
    b.SetInsertPoint(next);
  }
  b.CreateBr(done);
  b.SetInsertPoint(done);
}

llvm::Value* EmitGuarded(llvm::IRBuilder<>& b, llvm::Value* guard, llvm::Value* otherwise,
                         const std::function<llvm::Value*()>& access) {
  if (guard == nullptr) return access();
  llvm::Function* f = b.GetInsertBlock()->getParent();
  llvm::BasicBlock* from = b.GetInsertBlock();
  auto* then = llvm::BasicBlock::Create(f->getContext(), "checked.access", f);
  auto* merge = llvm::BasicBlock::Create(f->getContext(), "checked.merge", f);
  b.CreateCondBr(guard, then, merge);
  b.SetInsertPoint(then);
  llvm::Value* v = access();
  llvm::BasicBlock* then_end = b.GetInsertBlock();
  b.CreateBr(merge);
  b.SetInsertPoint(merge);
  if (v == nullptr) return nullptr;
  llvm::PHINode* phi = b.CreatePHI(v->getType(), 2);
  phi->addIncoming(v, then_end);
  phi->addIncoming(otherwise, from);
  return phi;
}

}  // namespace coil::codegen_cpu_internal
