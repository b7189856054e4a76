// Vectorizer hints as llvm.loop metadata (loop_metadata.h).
#include "codegen_cpu/internal/loop_metadata.h"

#include <vector>

#include "llvm/IR/Constants.h"
#include "llvm/IR/Type.h"

namespace coil::codegen_cpu_internal {

llvm::MDNode* VectorizerHints(llvm::LLVMContext& c, int width, int interleave, bool masked_tail) {
  llvm::Type* i32 = llvm::Type::getInt32Ty(c);
  std::vector<llvm::Metadata*> ops;
  llvm::TempMDTuple self = llvm::MDNode::getTemporary(c, {});
  ops.push_back(self.get());
  auto hint = [&](const char* name, llvm::Constant* value) {
    llvm::Metadata* md[] = {llvm::MDString::get(c, name), llvm::ConstantAsMetadata::get(value)};
    ops.push_back(llvm::MDNode::get(c, md));
  };
  if (width > 0) hint("llvm.loop.vectorize.width", llvm::ConstantInt::get(i32, width));
  if (masked_tail) {
    hint("llvm.loop.vectorize.predicate.enable", llvm::ConstantInt::getTrue(c));
  }
  if (interleave > 0) hint("llvm.loop.interleave.count", llvm::ConstantInt::get(i32, interleave));
  if (ops.size() == 1) return nullptr;
  llvm::MDNode* md = llvm::MDNode::getDistinct(c, ops);
  md->replaceOperandWith(0, md);
  return md;
}

}  // namespace coil::codegen_cpu_internal
