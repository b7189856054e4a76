// MarkStreamingStores (see streaming_stores.h, [Note: streaming stores]).
#include "codegen_cpu/internal/streaming_stores.h"

#include <cstdint>

#include "ir/dtype.h"
#include "llvm/Analysis/ValueTracking.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicsX86.h"

namespace coil::codegen_cpu_internal {

int MarkStreamingStores(llvm::Module& m) {
  constexpr uint64_t kLine = 64;
  int marked = 0;
  llvm::MDNode* one = llvm::MDNode::get(
      m.getContext(), {llvm::ConstantAsMetadata::get(
                          llvm::ConstantInt::get(llvm::Type::getInt32Ty(m.getContext()), 1))});
  for (llvm::Function& f : m) {
    bool any = false;
    for (llvm::BasicBlock& bb : f) {
      for (llvm::Instruction& i : bb) {
        auto* st = llvm::dyn_cast<llvm::StoreInst>(&i);
        if (st == nullptr || st->isVolatile()) continue;
        llvm::Type* t = st->getValueOperand()->getType();
        if (!t->isVectorTy() || m.getDataLayout().getTypeStoreSize(t) != kLine ||
            st->getAlign().value() < kLine) {
          continue;
        }
        const auto* base =
            llvm::dyn_cast<llvm::LoadInst>(llvm::getUnderlyingObject(st->getPointerOperand(), 16));
        if (base == nullptr || base->getMetadata(kStreamMetadata) == nullptr) continue;
        st->setMetadata(llvm::LLVMContext::MD_nontemporal, one);
        any = true;
        ++marked;
      }
    }
    if (!any) continue;
    for (llvm::BasicBlock& bb : f) {
      if (auto* ret = llvm::dyn_cast<llvm::ReturnInst>(bb.getTerminator())) {
        llvm::IRBuilder<> b(ret);
        b.CreateCall(llvm::Intrinsic::getDeclaration(&m, llvm::Intrinsic::x86_sse_sfence));
      }
    }
  }
  return marked;
}

bool StreamsStores(const proto::Kernel& kernel, const proto::Buffer& buf, int vector_bits) {
  if (buf.kind() != proto::Buffer::OUTPUT || vector_bits < 512) return false;
  int64_t bytes = ElementSize(buf.dtype());
  for (const proto::SymExpr& d : buf.shape()) {
    if (d.kind() != proto::SymExpr::CONST) return false;
    bytes *= d.value();
  }
  if (bytes < kStreamingStoreBytes) return false;
  for (const proto::Loop& l : kernel.loops()) {
    for (const proto::Expr& e : l.body()) {
      if (e.kind() == proto::Expr::LOAD && e.buffer() == buf.id()) return false;
    }
  }
  return true;
}

}  // namespace coil::codegen_cpu_internal
