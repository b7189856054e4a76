// LLVM scoped-noalias metadata for one kernel's function: every load and store is tagged with
// its buffer's alias class (alias_classes.h) as scope and `noalias` for the kernel's other
// classes, so the loop vectorizer needs no run-time overlap checks (loops over several buffers
// vectorize, short rows included). Not an API: used by kernel_emitter.cc.
//
//   AliasScopes scopes(kernel, buffers, context);
//   scopes.Tag(load, buffer_id);
#ifndef COIL_CODEGEN_CPU_INTERNAL_ALIAS_SCOPES_H_
#define COIL_CODEGEN_CPU_INTERNAL_ALIAS_SCOPES_H_

#include "absl/container/flat_hash_map.h"
#include "codegen_cpu/internal/alias_classes.h"
#include "ir/proto/schedule.pb.h"
#include "llvm/IR/Instruction.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Metadata.h"

namespace coil::codegen_cpu_internal {

class AliasScopes {
 public:
  AliasScopes(const proto::Kernel& kernel, const BufferMap& buffers, llvm::LLVMContext& c);

  // Tags a load or store of buffer `id` with its class's scope and noalias for the kernel's
  // other classes. No-op when the kernel has fewer than two classes or `id` is not in one.
  void Tag(llvm::Instruction* access, int id) const;

 private:
  struct Tags {
    llvm::MDNode* scope = nullptr;
    llvm::MDNode* noalias = nullptr;
  };
  absl::flat_hash_map<int, Tags> by_buffer_;
};

}  // namespace coil::codegen_cpu_internal

#endif  // COIL_CODEGEN_CPU_INTERNAL_ALIAS_SCOPES_H_
