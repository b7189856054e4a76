// Alias scope metadata from a kernel's buffer alias classes.
#include "codegen_cpu/internal/alias_scopes.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "llvm/IR/MDBuilder.h"

namespace coil::codegen_cpu_internal {

AliasScopes::AliasScopes(const proto::Kernel& kernel, const BufferMap& buffers,
                         llvm::LLVMContext& c) {
  const std::vector<std::vector<int>> classes = BufferAliasClasses(kernel, buffers);
  if (classes.size() < 2) return;
  llvm::MDBuilder md(c);
  llvm::MDNode* domain = md.createAnonymousAliasScopeDomain(
      absl::StrCat("coil kernel ", kernel.id(), " buffers"));
  std::vector<llvm::MDNode*> scopes;
  for (const std::vector<int>& members : classes) {
    scopes.push_back(md.createAnonymousAliasScope(
        domain, absl::StrCat("buffer", members.size() > 1 ? "s" : "", " ", members[0],
                             members.size() > 1 ? ",..." : "")));
  }
  for (size_t i = 0; i < classes.size(); ++i) {
    std::vector<llvm::Metadata*> others;
    for (size_t j = 0; j < classes.size(); ++j) {
      if (j != i) others.push_back(scopes[j]);
    }
    Tags t{llvm::MDNode::get(c, {scopes[i]}), llvm::MDNode::get(c, others)};
    for (int id : classes[i]) by_buffer_[id] = t;
  }
}

void AliasScopes::Tag(llvm::Instruction* access, int id) const {
  auto it = by_buffer_.find(id);
  if (it == by_buffer_.end()) return;
  access->setMetadata(llvm::LLVMContext::MD_alias_scope, it->second.scope);
  access->setMetadata(llvm::LLVMContext::MD_noalias, it->second.noalias);
}

}  // namespace coil::codegen_cpu_internal
